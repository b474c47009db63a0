CREATE TABLE "budgets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_uuid" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"api_key_id" text,
	"name" text NOT NULL,
	"limit_nano_usd" bigint NOT NULL,
	"period" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "guardrails" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_uuid" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"stage" text NOT NULL,
	"kind" text NOT NULL,
	"pattern" text,
	"pii_types" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"max_tokens" integer,
	"action" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "request_records" ADD COLUMN "guardrail_flags" text;--> statement-breakpoint
ALTER TABLE "budgets" ADD CONSTRAINT "budgets_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "guardrails" ADD CONSTRAINT "guardrails_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "budgets_unique" ON "budgets" USING btree ("project_uuid","name");--> statement-breakpoint
CREATE UNIQUE INDEX "guardrails_unique" ON "guardrails" USING btree ("project_uuid","name");--> statement-breakpoint
CREATE INDEX "guardrails_project" ON "guardrails" USING btree ("project_uuid");