ALTER TABLE "guardrails" ADD COLUMN "provider" jsonb;--> statement-breakpoint
ALTER TABLE "guardrails" ADD COLUMN "auth_value_wrapped" text;--> statement-breakpoint
ALTER TABLE "guardrails" ADD COLUMN "timeout_ms" integer;--> statement-breakpoint
ALTER TABLE "guardrails" ADD COLUMN "fail_mode" text;--> statement-breakpoint
ALTER TABLE "guardrails" ADD COLUMN "window_chars" integer;--> statement-breakpoint
ALTER TABLE "guardrails" ADD COLUMN "allow_private" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "request_records" ADD COLUMN "guardrails" text;