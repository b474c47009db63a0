-- Request records range-partitioned by UTC day of received_at (docs/records.md, "Partitions and retention"). The existing table is not rewritten: holding records, it becomes the partition of everything received before the next UTC midnight (its own indexes are reused; only the primary key, which must carry the partition key, is built), a default partition takes records that arrive for a day without one, and src/records/partitions.ts creates each day's partition ahead and drops whole expired ones.
DROP TRIGGER "request_usage_daily_add" ON "request_records";--> statement-breakpoint
DROP TRIGGER "request_usage_daily_remove" ON "request_records";--> statement-breakpoint
DROP TRIGGER "request_usage_daily_clear" ON "request_records";--> statement-breakpoint
ALTER TABLE "request_records" RENAME TO "request_records_legacy";--> statement-breakpoint
ALTER TABLE "request_records_legacy" DROP CONSTRAINT "request_records_pkey";--> statement-breakpoint
ALTER TABLE "request_records_legacy" ADD CONSTRAINT "request_records_legacy_pkey" PRIMARY KEY ("request_id", "received_at");--> statement-breakpoint
ALTER INDEX "request_records_client_id" RENAME TO "request_records_legacy_client_id";--> statement-breakpoint
ALTER INDEX "request_records_time" RENAME TO "request_records_legacy_time";--> statement-breakpoint
ALTER INDEX "request_records_key_time" RENAME TO "request_records_legacy_key_time";--> statement-breakpoint
ALTER INDEX "request_records_stored" RENAME TO "request_records_legacy_stored";--> statement-breakpoint
CREATE TABLE "request_records" (LIKE "request_records_legacy" INCLUDING DEFAULTS) PARTITION BY RANGE ("received_at");--> statement-breakpoint
ALTER TABLE "request_records" ADD CONSTRAINT "request_records_pkey" PRIMARY KEY ("request_id", "received_at");--> statement-breakpoint
CREATE INDEX "request_records_client_id" ON "request_records" USING btree ("client_request_id") WHERE client_request_id is not null;--> statement-breakpoint
CREATE INDEX "request_records_time" ON "request_records" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "request_records_key_time" ON "request_records" USING btree ("api_key_id", "received_at");--> statement-breakpoint
CREATE INDEX "request_records_stored" ON "request_records" USING btree ("stored_at", "request_id");--> statement-breakpoint
CREATE TABLE "request_records_default" PARTITION OF "request_records" DEFAULT;--> statement-breakpoint
DO $$
DECLARE
	upto timestamptz := (date_trunc('day', now() AT TIME ZONE 'UTC') + interval '1 day') AT TIME ZONE 'UTC';
BEGIN
	-- A new install (no record yet) keeps no such partition: every day gets its own.
	IF NOT EXISTS (SELECT 1 FROM request_records_legacy) THEN
		DROP TABLE request_records_legacy;
		RETURN;
	END IF;
	-- The check lets the attach skip its own scan of the table (one scan here, under this migration's lock).
	EXECUTE format('ALTER TABLE request_records_legacy ADD CONSTRAINT request_records_legacy_range CHECK (received_at < %L::timestamptz)', upto);
	EXECUTE format('ALTER TABLE request_records ATTACH PARTITION request_records_legacy FOR VALUES FROM (MINVALUE) TO (%L)', upto);
	ALTER TABLE request_records_legacy DROP CONSTRAINT request_records_legacy_range;
END $$;--> statement-breakpoint
-- One day's partition [day, day + 1) in UTC, created as its own table and attached (the attach takes no lock that stops inserts into the other partitions); records that arrived for that day before it existed move into it from the default partition (a statement on a partition fires none of request_records' rollup triggers: the rollups already count them). False when it exists or another partition covers the day.
CREATE FUNCTION "request_records_add_partition"(day date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	part text := 'request_records_p' || to_char(day, 'YYYYMMDD');
	lo timestamptz := day::timestamp AT TIME ZONE 'UTC';
	hi timestamptz := (day + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
	-- Replicas sweep at the same time: one changes the partitions at a time.
	PERFORM pg_advisory_xact_lock(hashtext('request_records_partitions'));
	IF to_regclass(part) IS NOT NULL THEN RETURN false; END IF;
	EXECUTE format('CREATE TABLE %I (LIKE request_records INCLUDING DEFAULTS)', part);
	EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (received_at >= %L::timestamptz AND received_at < %L::timestamptz)', part, part || '_range', lo, hi);
	EXECUTE format('WITH moved AS (DELETE FROM request_records_default WHERE received_at >= %L::timestamptz AND received_at < %L::timestamptz RETURNING *) INSERT INTO %I SELECT * FROM moved', lo, hi, part);
	EXECUTE format('ALTER TABLE request_records ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
	EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', part, part || '_range');
	RETURN true;
EXCEPTION WHEN invalid_object_definition THEN
	RETURN false; -- 42P17: the range overlaps another partition's
WHEN duplicate_table THEN
	RETURN false; -- 42P07: another replica created it meanwhile (to_regclass read a catalog cache not yet told)
END $$;--> statement-breakpoint
-- Drops a partition whose range [lo, hi) is past every retention of the projects in it, with the rollup rows of its days (every record of those days is in it: the default partition cannot hold them while it is attached). The detach waits at most lock_timeout for the table (a long read holds it): the sweep tries again later.
CREATE FUNCTION "request_records_drop_partition"(part text, lo timestamptz, hi timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('lock_timeout', '2s', true);
	PERFORM pg_advisory_xact_lock(hashtext('request_records_partitions'));
	IF to_regclass(part) IS NULL THEN RETURN false; END IF; -- another replica dropped it
	-- to_regclass may read a catalog cache not yet told of a drop committed meanwhile: the DETACH's
	-- lock reads the invalidations, and a partition gone by then was dropped by the other replica.
	BEGIN
		EXECUTE format('ALTER TABLE request_records DETACH PARTITION %I', part);
	EXCEPTION WHEN undefined_table THEN
		RETURN false;
	END;
	EXECUTE format('DROP TABLE %I', part);
	DELETE FROM request_usage_daily WHERE day < (hi AT TIME ZONE 'UTC')::date AND (lo IS NULL OR day >= (lo AT TIME ZONE 'UTC')::date);
	DELETE FROM request_usage_hourly WHERE hour < hi AND (lo IS NULL OR hour >= lo);
	RETURN true;
END $$;--> statement-breakpoint
CREATE TABLE "request_usage_hourly" (
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"api_key_id" text NOT NULL,
	"model" text NOT NULL,
	"provider" text NOT NULL,
	"requests" bigint NOT NULL,
	"input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	"cached_input_tokens" bigint NOT NULL,
	"cache_write_tokens" bigint NOT NULL,
	"cost_nano_usd" bigint NOT NULL,
	CONSTRAINT "request_usage_hourly_pk" PRIMARY KEY("customer_id","project_id","hour","api_key_id","model","provider")
);--> statement-breakpoint
INSERT INTO request_usage_hourly (customer_id, project_id, hour, api_key_id, model, provider, requests, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_nano_usd)
SELECT coalesce(customer_id, ''), coalesce(project_id, ''), date_trunc('hour', received_at), coalesce(api_key_id, ''), coalesce(model, ''), coalesce(provider, ''),
	count(*), sum(input_tokens), sum(output_tokens), sum(cached_input_tokens), sum(cache_write_tokens), sum(cost_nano_usd)
FROM request_records GROUP BY 1, 2, 3, 4, 5, 6;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "request_usage_daily_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO request_usage_daily AS u (customer_id, project_id, day, api_key_id, model, provider, requests, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_nano_usd)
	SELECT coalesce(customer_id, ''), coalesce(project_id, ''), (received_at AT TIME ZONE 'UTC')::date, coalesce(api_key_id, ''), coalesce(model, ''), coalesce(provider, ''),
		count(*), sum(input_tokens), sum(output_tokens), sum(cached_input_tokens), sum(cache_write_tokens), sum(cost_nano_usd)
	FROM request_usage_new GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
	ON CONFLICT (customer_id, project_id, day, api_key_id, model, provider) DO UPDATE SET
		requests = u.requests + excluded.requests, input_tokens = u.input_tokens + excluded.input_tokens, output_tokens = u.output_tokens + excluded.output_tokens,
		cached_input_tokens = u.cached_input_tokens + excluded.cached_input_tokens, cache_write_tokens = u.cache_write_tokens + excluded.cache_write_tokens,
		cost_nano_usd = u.cost_nano_usd + excluded.cost_nano_usd;
	INSERT INTO request_usage_hourly AS u (customer_id, project_id, hour, api_key_id, model, provider, requests, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_nano_usd)
	SELECT coalesce(customer_id, ''), coalesce(project_id, ''), date_trunc('hour', received_at), coalesce(api_key_id, ''), coalesce(model, ''), coalesce(provider, ''),
		count(*), sum(input_tokens), sum(output_tokens), sum(cached_input_tokens), sum(cache_write_tokens), sum(cost_nano_usd)
	FROM request_usage_new GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
	ON CONFLICT (customer_id, project_id, hour, api_key_id, model, provider) DO UPDATE SET
		requests = u.requests + excluded.requests, input_tokens = u.input_tokens + excluded.input_tokens, output_tokens = u.output_tokens + excluded.output_tokens,
		cached_input_tokens = u.cached_input_tokens + excluded.cached_input_tokens, cache_write_tokens = u.cache_write_tokens + excluded.cache_write_tokens,
		cost_nano_usd = u.cost_nano_usd + excluded.cost_nano_usd;
	RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "request_usage_daily_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	-- Rows locked in key order, as the insert trigger's upserts take them (daily, then hourly): no deadlock between the two.
	PERFORM 1 FROM request_usage_daily AS u
	WHERE (u.customer_id, u.project_id, u.day, u.api_key_id, u.model, u.provider) IN (
		SELECT coalesce(customer_id, ''), coalesce(project_id, ''), (received_at AT TIME ZONE 'UTC')::date, coalesce(api_key_id, ''), coalesce(model, ''), coalesce(provider, '') FROM request_usage_old)
	ORDER BY u.customer_id, u.project_id, u.day, u.api_key_id, u.model, u.provider FOR UPDATE;
	UPDATE request_usage_daily AS u SET
		requests = u.requests - d.requests, input_tokens = u.input_tokens - d.input_tokens, output_tokens = u.output_tokens - d.output_tokens,
		cached_input_tokens = u.cached_input_tokens - d.cached_input_tokens, cache_write_tokens = u.cache_write_tokens - d.cache_write_tokens,
		cost_nano_usd = u.cost_nano_usd - d.cost_nano_usd
	FROM (
		SELECT coalesce(customer_id, '') AS customer_id, coalesce(project_id, '') AS project_id, (received_at AT TIME ZONE 'UTC')::date AS day, coalesce(api_key_id, '') AS api_key_id,
			coalesce(model, '') AS model, coalesce(provider, '') AS provider, count(*) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
			sum(cached_input_tokens) AS cached_input_tokens, sum(cache_write_tokens) AS cache_write_tokens, sum(cost_nano_usd) AS cost_nano_usd
		FROM request_usage_old GROUP BY 1, 2, 3, 4, 5, 6
	) AS d
	WHERE u.customer_id = d.customer_id AND u.project_id = d.project_id AND u.day = d.day AND u.api_key_id = d.api_key_id AND u.model = d.model AND u.provider = d.provider;
	DELETE FROM request_usage_daily AS u USING (SELECT DISTINCT coalesce(customer_id, '') AS customer_id, coalesce(project_id, '') AS project_id, (received_at AT TIME ZONE 'UTC')::date AS day FROM request_usage_old) AS d
	WHERE u.customer_id = d.customer_id AND u.project_id = d.project_id AND u.day = d.day AND u.requests <= 0;
	PERFORM 1 FROM request_usage_hourly AS u
	WHERE (u.customer_id, u.project_id, u.hour, u.api_key_id, u.model, u.provider) IN (
		SELECT coalesce(customer_id, ''), coalesce(project_id, ''), date_trunc('hour', received_at), coalesce(api_key_id, ''), coalesce(model, ''), coalesce(provider, '') FROM request_usage_old)
	ORDER BY u.customer_id, u.project_id, u.hour, u.api_key_id, u.model, u.provider FOR UPDATE;
	UPDATE request_usage_hourly AS u SET
		requests = u.requests - d.requests, input_tokens = u.input_tokens - d.input_tokens, output_tokens = u.output_tokens - d.output_tokens,
		cached_input_tokens = u.cached_input_tokens - d.cached_input_tokens, cache_write_tokens = u.cache_write_tokens - d.cache_write_tokens,
		cost_nano_usd = u.cost_nano_usd - d.cost_nano_usd
	FROM (
		SELECT coalesce(customer_id, '') AS customer_id, coalesce(project_id, '') AS project_id, date_trunc('hour', received_at) AS hour, coalesce(api_key_id, '') AS api_key_id,
			coalesce(model, '') AS model, coalesce(provider, '') AS provider, count(*) AS requests, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
			sum(cached_input_tokens) AS cached_input_tokens, sum(cache_write_tokens) AS cache_write_tokens, sum(cost_nano_usd) AS cost_nano_usd
		FROM request_usage_old GROUP BY 1, 2, 3, 4, 5, 6
	) AS d
	WHERE u.customer_id = d.customer_id AND u.project_id = d.project_id AND u.hour = d.hour AND u.api_key_id = d.api_key_id AND u.model = d.model AND u.provider = d.provider;
	DELETE FROM request_usage_hourly AS u USING (SELECT DISTINCT coalesce(customer_id, '') AS customer_id, coalesce(project_id, '') AS project_id, date_trunc('hour', received_at) AS hour FROM request_usage_old) AS d
	WHERE u.customer_id = d.customer_id AND u.project_id = d.project_id AND u.hour = d.hour AND u.requests <= 0;
	RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "request_usage_daily_clear"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	TRUNCATE request_usage_daily, request_usage_hourly;
	RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "request_usage_daily_add" AFTER INSERT ON "request_records" REFERENCING NEW TABLE AS request_usage_new FOR EACH STATEMENT EXECUTE FUNCTION request_usage_daily_add();--> statement-breakpoint
CREATE TRIGGER "request_usage_daily_remove" AFTER DELETE ON "request_records" REFERENCING OLD TABLE AS request_usage_old FOR EACH STATEMENT EXECUTE FUNCTION request_usage_daily_remove();--> statement-breakpoint
CREATE TRIGGER "request_usage_daily_clear" AFTER TRUNCATE ON "request_records" FOR EACH STATEMENT EXECUTE FUNCTION request_usage_daily_clear();--> statement-breakpoint
SELECT request_records_add_partition((now() AT TIME ZONE 'UTC')::date + d) FROM generate_series(0, 3) AS d;
