DROP INDEX "telemetry_configs_due";--> statement-breakpoint
ALTER TABLE "request_records" ADD COLUMN "stored_at" timestamp (3) with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
CREATE INDEX "request_records_stored" ON "request_records" USING btree ("stored_at","request_id");--> statement-breakpoint
CREATE INDEX "telemetry_configs_due" ON "telemetry_configs" USING btree ("next_attempt_at") WHERE "telemetry_configs"."enabled";--> statement-breakpoint
-- Configs of type traces, metrics and logs were stored only until now: they forward the records stored from this upgrade on (every row above carries its time as stored_at), as a new config forwards those stored from its creation.
UPDATE "telemetry_configs" SET "cursor_ts" = now(), "cursor_id" = 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid WHERE "telemetry_type" <> 'audit_logs';
