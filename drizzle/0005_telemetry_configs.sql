CREATE TABLE "telemetry_configs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" text NOT NULL,
	"telemetry_type" text NOT NULL,
	"sink_url" text NOT NULL,
	"protocol" text NOT NULL,
	"auth_type" text NOT NULL,
	"auth_value_wrapped" text,
	"api_key_header" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"forward_interval_seconds" integer DEFAULT 300 NOT NULL,
	"status" text DEFAULT 'disconnected' NOT NULL,
	"last_checked_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"cursor_ts" timestamp (3) with time zone NOT NULL,
	"cursor_id" uuid DEFAULT '00000000-0000-0000-0000-000000000000'::uuid NOT NULL,
	"next_attempt_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE INDEX "telemetry_configs_due" ON "telemetry_configs" USING btree ("next_attempt_at") WHERE "telemetry_configs"."telemetry_type" = 'audit_logs' and "telemetry_configs"."enabled";