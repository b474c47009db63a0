/**
 * The records of bench/records-scale.ts: 61 days (2026-09-01 … 2026-10-31), 20 customers × 3
 * projects, 2,000 API keys (each using 3 of 30 models), 5 providers, 1 in 10 with a client request
 * id; bodies `small` are ~0.5 KB of JSON each way. Two ways in: entries for the writer thread's own
 * path (the ingest measured), and one INSERT … SELECT per day built by the server (the bulk fill
 * the reads are measured on; the same distribution, the rollup triggers firing).
 */
import type { RecordEntry } from '../../src/core/records.ts';
import { entryOf } from '../../src/records/entry.ts';

export const START = Date.UTC(2026, 8, 1);
export const DAYS = 61;
export const DAY_MS = 86_400_000;
export const CUSTOMERS = 20;
export const KEYS = 2000;
export const MODELS = 30;

const rand = (n: number): number => Math.floor(Math.random() * n);

export const bodiesOf = (kind: string): { req: string | null; res: string | null } =>
  kind === 'none'
    ? { req: null, res: null }
    : {
        req: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'q'.repeat(420) }], max_tokens: 256 }),
        res: JSON.stringify({
          id: 'chatcmpl-x',
          choices: [{ index: 0, message: { role: 'assistant', content: 'a'.repeat(380) }, finish_reason: 'stop' }],
        }),
      };

/** Record `i` of `total` spread over the 61 days in time order, through the gateway's own entry. */
export const entryAt = (i: number, total: number, bodies: { req: string | null; res: string | null }): RecordEntry => {
  const key = rand(KEYS);
  const input = 20 + rand(2000);
  const output = 10 + rand(800);
  const at = START + Math.floor((i / total) * DAYS * DAY_MS);
  return entryOf({
    // As the gateway makes them (src/core/ids.ts): a UUIDv7 of the moment the request was received.
    requestId: Bun.randomUUIDv7('hex', at),
    clientRequestId: i % 10 === 0 ? `ingest-${i}-${rand(1e9)}` : null,
    receivedAt: new Date(at),
    customerId: `cust-${key % CUSTOMERS}`,
    projectId: `proj-${key % 3}`,
    apiKeyId: `key-${key}`,
    endpoint: '/v1/chat/completions',
    model: `model-${(key * 7 + rand(3)) % MODELS}`,
    provider: `provider-${key % 5}`,
    connection: 'c',
    upstreamModel: 'gpt-4o-mini',
    httpStatus: 200,
    latencyMs: 100 + rand(900),
    ttfbMs: 50 + rand(200),
    stream: i % 2 === 0,
    inputTokens: input,
    outputTokens: output,
    totalTokens: input + output,
    costNanoUsd: rand(5_000_000),
    attempts: 1,
    requestBody: bodies.req,
    responseBody: bodies.res,
  });
};

/** One day's `n` records built by the server (`day` 0 … 60), times spread over the day, ids UUIDv7 of those times. */
export const fillDaySql = (day: number, n: number, bodies: { req: string | null; res: string | null }): string => {
  const q = (s: string | null): string => (s === null ? 'null' : `'${s.replaceAll("'", "''")}'::jsonb`);
  const from = new Date(START + day * DAY_MS).toISOString();
  return `insert into request_records (request_id, client_request_id, received_at, customer_id, project_id, api_key_id, endpoint, model, provider,
      connection, upstream_model, http_status, latency_ms, ttfb_ms, stream, input_tokens, output_tokens, total_tokens, cost_nano_usd, attempts, request_body, response_body)
    select (lpad(to_hex((extract(epoch from t) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid,
      case when i % 10 = 0 then 'fill-${day}-' || i end, t,
      'cust-' || (k % ${CUSTOMERS}), 'proj-' || (k % 3), 'key-' || k, '/v1/chat/completions', 'model-' || ((k * 7 + (i % 3)) % ${MODELS}), 'provider-' || (k % 5),
      'c', 'gpt-4o-mini', 200, 100 + (i % 900), 50 + (i % 200), i % 2 = 0, 20 + (i * 7) % 2000, 10 + (i * 13) % 800, 30 + (i * 7) % 2000 + (i * 13) % 800, (i * 7919) % 5000000, 1, ${q(bodies.req)}, ${q(bodies.res)}
    from (select i, (random() * ${KEYS - 1})::int as k, timestamptz '${from}' + (i::float8 / ${n}) * interval '1 day' as t from generate_series(0, ${n - 1}) i) g`;
};
