import { sql } from 'drizzle-orm';
import { bigint, boolean, date, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * One row per inference request, written in batches off the hot path. Range-partitioned by UTC day
 * of received_at (migration 0019, src/records/partitions.ts): the primary key carries the partition
 * key, as PostgreSQL requires; a record written twice has the same (request_id, received_at).
 */
export const requestRecords = pgTable(
  'request_records',
  {
    requestId: uuid('request_id').notNull(),
    clientRequestId: text('client_request_id'),
    receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }).notNull(),
    customerId: text('customer_id'),
    projectId: text('project_id'),
    apiKeyId: text('api_key_id'),
    endpoint: text('endpoint').notNull(),
    model: text('model'),
    provider: text('provider'),
    connection: text('connection'),
    upstreamModel: text('upstream_model'),
    httpStatus: integer('http_status').notNull(),
    latencyMs: integer('latency_ms').notNull(),
    ttfbMs: integer('ttfb_ms'),
    stream: boolean('stream').notNull().default(false),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    totalTokens: integer('total_tokens').notNull().default(0),
    cachedInputTokens: integer('cached_input_tokens').notNull().default(0),
    cacheWriteTokens: integer('cache_write_tokens').notNull().default(0),
    /** USD in micro-dollars ×1000 (nano-dollars) to keep sums exact. */
    costNanoUsd: bigint('cost_nano_usd', { mode: 'number' }).notNull().default(0),
    attempts: integer('attempts').notNull().default(0),
    errorCode: text('error_code'),
    requestBody: jsonb('request_body'),
    responseBody: jsonb('response_body'),
    /**
     * What had to be changed for the row to be stored, comma-separated (`usage`: token counts
     * clamped or rounded; `text`: ill-formed text or NUL cleaned; `bodies`: bodies left out);
     * null when stored as is. See docs/records.md, "Where the bodies are".
     */
    sanitized: text('sanitized'),
    /** Guardrails whose `flag` action matched (names, comma-separated); null when none did. */
    guardrailFlags: text('guardrail_flags'),
    /**
     * X-Gateway-Correlation-Id (contract §12): the A2A task's correlation id on its own record, and
     * on the records of the model and MCP calls an agent made with the header sent back.
     */
    correlationId: text('correlation_id'),
    /**
     * Decisions of provider guardrails (contract §15) as JSON text, `[{name, stage, action, provider,
     * latencyMs}]`; null when the project has none.
     */
    guardrails: text('guardrails'),
    /** The response cache's part (contract §11): `hit`, `miss` or `bypass`; null for projects without the `response-cache` setting. */
    cache: text('cache'),
    /** A cache hit: what the answer would have cost, in nano-USD (its cost_nano_usd is 0). */
    costSavedNanoUsd: bigint('cost_saved_nano_usd', { mode: 'number' }),
    /**
     * Where the bodies are when they are kept beside the row rather than in it (the embedded store
     * with a data directory, src/records/body-files.ts): `segment:offset:requestBytes:responseBytes`,
     * -1 for a body not kept. Null when the bodies are in request_body/response_body.
     */
    bodiesAt: text('bodies_at'),
    /**
     * When the row was stored: set by the database at insert (its default; no insert path names
     * the column), whatever the path — the embedded COPY, the JSON insert, a data plane's spooled
     * batch arriving late. The telemetry forwarder's cursor (src/records/forward.ts): `received_at`
     * cannot be one, a record may be stored long after it was received.
     */
    storedAt: timestamp('stored_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'request_records_pkey', columns: [t.requestId, t.receivedAt] }),
    // Only rows that carry a client id (most requests do not): a NULL entry per row cost ~2 µs of
    // every embedded insert; an equality search on the column still uses it.
    index('request_records_client_id').on(t.clientRequestId).where(sql`client_request_id is not null`),
    index('request_records_correlation').on(t.correlationId).where(sql`correlation_id is not null`),
    index('request_records_time').on(t.receivedAt),
    index('request_records_key_time').on(t.apiKeyId, t.receivedAt),
    index('request_records_stored').on(t.storedAt, t.requestId),
  ],
);

export type RequestRecordRow = typeof requestRecords.$inferSelect;
export type NewRequestRecord = typeof requestRecords.$inferInsert;

/**
 * Usage per UTC day, customer, project, API key, model and provider, summed from request_records
 * and kept equal to them by statement-level triggers on that table (migration 0014): every insert
 * (the JSON insert, the embedded COPY, a spooled batch written again) adds the rows it stored, every
 * delete (retention purges) takes its rows away. GetUsage answers whole days from here and reads
 * records only for the partial days at the ends of its range. Absent values are ''.
 */
export const requestUsageDaily = pgTable(
  'request_usage_daily',
  {
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    apiKeyId: text('api_key_id').notNull(),
    model: text('model').notNull(),
    provider: text('provider').notNull(),
    requests: bigint('requests', { mode: 'number' }).notNull(),
    inputTokens: bigint('input_tokens', { mode: 'number' }).notNull(),
    outputTokens: bigint('output_tokens', { mode: 'number' }).notNull(),
    cachedInputTokens: bigint('cached_input_tokens', { mode: 'number' }).notNull(),
    cacheWriteTokens: bigint('cache_write_tokens', { mode: 'number' }).notNull(),
    costNanoUsd: bigint('cost_nano_usd', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ name: 'request_usage_daily_pk', columns: [t.customerId, t.projectId, t.day, t.apiKeyId, t.model, t.provider] })],
);

/**
 * The same sums per UTC hour (migration 0019, kept by the same triggers): GetUsage answers the whole
 * hours of a range's partial days from here, and reads records only for the partial hours at its ends.
 */
export const requestUsageHourly = pgTable(
  'request_usage_hourly',
  {
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    hour: timestamp('hour', { withTimezone: true, mode: 'date' }).notNull(),
    apiKeyId: text('api_key_id').notNull(),
    model: text('model').notNull(),
    provider: text('provider').notNull(),
    requests: bigint('requests', { mode: 'number' }).notNull(),
    inputTokens: bigint('input_tokens', { mode: 'number' }).notNull(),
    outputTokens: bigint('output_tokens', { mode: 'number' }).notNull(),
    cachedInputTokens: bigint('cached_input_tokens', { mode: 'number' }).notNull(),
    cacheWriteTokens: bigint('cache_write_tokens', { mode: 'number' }).notNull(),
    costNanoUsd: bigint('cost_nano_usd', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ name: 'request_usage_hourly_pk', columns: [t.customerId, t.projectId, t.hour, t.apiKeyId, t.model, t.provider] })],
);
