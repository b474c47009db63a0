CREATE TABLE "audit_checkpoints" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"range_start_id" text NOT NULL,
	"range_end_id" text NOT NULL,
	"range_start_ts" timestamp (3) with time zone NOT NULL,
	"range_end_ts" timestamp (3) with time zone NOT NULL,
	"leaf_count" bigint NOT NULL,
	"root_hash" "bytea" NOT NULL,
	"prev_root_hash" "bytea" NOT NULL,
	"algo" text NOT NULL,
	"signature" "bytea" NOT NULL,
	"signing_kid" text NOT NULL,
	"kek_version" integer DEFAULT 1 NOT NULL,
	"signed_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_logs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"timestamp" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"user_id" text DEFAULT '' NOT NULL,
	"user_email" text DEFAULT '' NOT NULL,
	"actor_type" text NOT NULL,
	"action_type" text NOT NULL,
	"resource_type" text DEFAULT '' NOT NULL,
	"resource_id" text DEFAULT '' NOT NULL,
	"endpoint" text DEFAULT '' NOT NULL,
	"http_method" text DEFAULT 'POST' NOT NULL,
	"status_code" integer NOT NULL,
	"success" boolean NOT NULL,
	"error_message" text DEFAULT '' NOT NULL,
	"correlation_id" text DEFAULT '' NOT NULL,
	"source_ip" text DEFAULT '' NOT NULL,
	"user_agent" text DEFAULT '' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"request_body" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"request_params" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"response_data" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_logs_time" ON "audit_logs" USING btree ("timestamp","id");--> statement-breakpoint
CREATE INDEX "audit_logs_correlation" ON "audit_logs" USING btree ("correlation_id");--> statement-breakpoint
CREATE INDEX "audit_logs_resource" ON "audit_logs" USING btree ("resource_id");--> statement-breakpoint
CREATE INDEX "audit_logs_user" ON "audit_logs" USING btree ("user_id","timestamp");--> statement-breakpoint
CREATE INDEX "audit_logs_action" ON "audit_logs" USING btree ("action_type","timestamp");--> statement-breakpoint
CREATE INDEX "audit_logs_failed" ON "audit_logs" USING btree ("timestamp") WHERE "audit_logs"."success" = false;