CREATE TABLE "gateway_batch_lines" (
	"batch_id" text NOT NULL,
	"line" integer NOT NULL,
	"ok" boolean NOT NULL,
	"text" text NOT NULL,
	CONSTRAINT "gateway_batch_lines_batch_id_line_pk" PRIMARY KEY("batch_id","line")
);
--> statement-breakpoint
CREATE TABLE "gateway_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"project_uuid" uuid NOT NULL,
	"api_key_id" text NOT NULL,
	"endpoint" text NOT NULL,
	"input_file_id" text NOT NULL,
	"completion_window" text NOT NULL,
	"status" text NOT NULL,
	"metadata" jsonb,
	"output_file_id" text,
	"error_file_id" text,
	"total" integer DEFAULT 0 NOT NULL,
	"completed" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"errors" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"in_progress_at" timestamp (3) with time zone,
	"finalizing_at" timestamp (3) with time zone,
	"completed_at" timestamp (3) with time zone,
	"failed_at" timestamp (3) with time zone,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"cancelling_at" timestamp (3) with time zone,
	"cancelled_at" timestamp (3) with time zone,
	"lease_owner" text,
	"lease_until" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "gateway_files" (
	"id" text PRIMARY KEY NOT NULL,
	"project_uuid" uuid NOT NULL,
	"purpose" text NOT NULL,
	"filename" text NOT NULL,
	"bytes" integer NOT NULL,
	"content" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "request_records" ADD COLUMN "cache" text;--> statement-breakpoint
ALTER TABLE "request_records" ADD COLUMN "cost_saved_nano_usd" bigint;--> statement-breakpoint
CREATE INDEX "gateway_batches_project" ON "gateway_batches" USING btree ("project_uuid","created_at");--> statement-breakpoint
CREATE INDEX "gateway_batches_status" ON "gateway_batches" USING btree ("status");--> statement-breakpoint
CREATE INDEX "gateway_files_project" ON "gateway_files" USING btree ("project_uuid","created_at");