CREATE TABLE "request_usage_daily" (
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"day" date NOT NULL,
	"api_key_id" text NOT NULL,
	"model" text NOT NULL,
	"provider" text NOT NULL,
	"requests" bigint NOT NULL,
	"input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	"cached_input_tokens" bigint NOT NULL,
	"cache_write_tokens" bigint NOT NULL,
	"cost_nano_usd" bigint NOT NULL,
	CONSTRAINT "request_usage_daily_pk" PRIMARY KEY("customer_id","project_id","day","api_key_id","model","provider")
);
--> statement-breakpoint
CREATE FUNCTION "request_usage_daily_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO request_usage_daily AS u (customer_id, project_id, day, api_key_id, model, provider, requests, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_nano_usd)
	SELECT coalesce(customer_id, ''), coalesce(project_id, ''), (received_at AT TIME ZONE 'UTC')::date, coalesce(api_key_id, ''), coalesce(model, ''), coalesce(provider, ''),
		count(*), sum(input_tokens), sum(output_tokens), sum(cached_input_tokens), sum(cache_write_tokens), sum(cost_nano_usd)
	FROM request_usage_new GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
	ON CONFLICT (customer_id, project_id, day, api_key_id, model, provider) DO UPDATE SET
		requests = u.requests + excluded.requests, input_tokens = u.input_tokens + excluded.input_tokens, output_tokens = u.output_tokens + excluded.output_tokens,
		cached_input_tokens = u.cached_input_tokens + excluded.cached_input_tokens, cache_write_tokens = u.cache_write_tokens + excluded.cache_write_tokens,
		cost_nano_usd = u.cost_nano_usd + excluded.cost_nano_usd;
	RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "request_usage_daily_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	-- Rows locked in key order, as the insert trigger's upsert takes them: no deadlock between the two.
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
	RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "request_usage_daily_add" AFTER INSERT ON "request_records" REFERENCING NEW TABLE AS request_usage_new FOR EACH STATEMENT EXECUTE FUNCTION request_usage_daily_add();
--> statement-breakpoint
CREATE TRIGGER "request_usage_daily_remove" AFTER DELETE ON "request_records" REFERENCING OLD TABLE AS request_usage_old FOR EACH STATEMENT EXECUTE FUNCTION request_usage_daily_remove();
--> statement-breakpoint
INSERT INTO request_usage_daily (customer_id, project_id, day, api_key_id, model, provider, requests, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_nano_usd)
SELECT coalesce(customer_id, ''), coalesce(project_id, ''), (received_at AT TIME ZONE 'UTC')::date, coalesce(api_key_id, ''), coalesce(model, ''), coalesce(provider, ''),
	count(*), sum(input_tokens), sum(output_tokens), sum(cached_input_tokens), sum(cache_write_tokens), sum(cost_nano_usd)
FROM request_records GROUP BY 1, 2, 3, 4, 5, 6;
--> statement-breakpoint
CREATE FUNCTION "request_usage_daily_clear"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	TRUNCATE request_usage_daily;
	RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "request_usage_daily_clear" AFTER TRUNCATE ON "request_records" FOR EACH STATEMENT EXECUTE FUNCTION request_usage_daily_clear();
