/**
 * Request records at scale (issue 25 item 6), on PostgreSQL: loads N records into a fresh database
 * through the gateway's own insert path (the writer thread's COPY FROM STDIN, records/pg-worker.ts,
 * batches of 500, one in flight, the rollup triggers firing), then reports
 *   - insert rate (rows/s, overall and per slice of the load),
 *   - SearchRequestRecords by request id and by client request id: p50/p99 (its query, records/search.ts),
 *   - GetUsage for a calendar month by key and by model: p50/p99 (records/usage.ts); and for a
 *     30-day range with partial days at both ends,
 *   - the retention purge's rate (records/retention.ts, batches of 5000, the rollup kept by trigger),
 *   - table + index size per million rows; and checks the rollup against a scan of the records.
 *
 *   bun bench/records-scale.ts [--rows 10000000] [--bodies small|none] [--base postgres://gateway:gateway@127.0.0.1:5432] [--keep]
 *
 * Data: 61 days (2026-09-01 … 2026-10-31) in time order, UUIDv7 ids, 20 customers × 3 projects,
 * 2,000 API keys (each using 3 of 30 models), 5 providers, 1 in 10 with a client request id; bodies
 * `small` are ~0.5 KB of JSON each way. The database (`records_scale`) is dropped at the end
 * unless --keep. Goals: search ≤ 10 ms, GetUsage ≤ 200 ms, ingest ≥ 20,000 rows/s.
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import type { RecordEntry } from '../src/core/records.ts';
import { workerStore } from '../src/records/backend.ts';
import { entryOf } from '../src/records/entry.ts';
import { RecordRetention } from '../src/records/retention.ts';
import { searchRecordsQuery } from '../src/records/search.ts';
import { type UsageGroupBy, usageSums } from '../src/records/usage.ts';
import { openStore } from '../src/store/db.ts';
import { customers, projectSettings, projects } from '../src/store/schema/index.ts';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000000' },
    bodies: { type: 'string', default: 'small' },
    base: { type: 'string', default: 'postgres://gateway:gateway@127.0.0.1:5432' },
    keep: { type: 'boolean', default: false },
  },
});
const ROWS = Number(args.rows);
const BATCH = 500;
const DB = 'records_scale';
const START = Date.UTC(2026, 8, 1);
const SPAN = 61 * 86_400_000;
const CUSTOMERS = 20;
const KEYS = 2000;
const MODELS = 30;

const admin = postgres(`${args.base}/postgres`, { max: 1, onnotice: () => undefined });
await admin.unsafe(`drop database if exists ${DB} with (force)`);
await admin.unsafe(`create database ${DB}`);
const url = `${args.base}/${DB}`;
const store = await openStore({ driver: 'postgres', url });
const raw = postgres(url, { max: 1, onnotice: () => undefined });

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const r1 = (x: number): number => Math.round(x * 10) / 10;
const rand = (n: number): number => Math.floor(Math.random() * n);

const reqBody =
  args.bodies === 'none'
    ? null
    : JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'q'.repeat(420) }], max_tokens: 256 });
const resBody =
  args.bodies === 'none'
    ? null
    : JSON.stringify({
        id: 'chatcmpl-x',
        choices: [{ index: 0, message: { role: 'assistant', content: 'a'.repeat(380) }, finish_reason: 'stop' }],
      });

/** Ids sampled for the searches. */
const ids: string[] = [];
const clientIds: string[] = [];
const row = (i: number): RecordEntry => {
  const key = rand(KEYS);
  const input = 20 + rand(2000);
  const output = 10 + rand(800);
  const requestId = Bun.randomUUIDv7();
  const clientRequestId = i % 10 === 0 ? `client-${i}` : null;
  if (i % 997 === 0) ids.push(requestId);
  if (i % 9_970 === 0 && clientRequestId) clientIds.push(clientRequestId);
  return entryOf({
    requestId,
    clientRequestId,
    receivedAt: new Date(START + Math.floor((i / ROWS) * SPAN)),
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
    requestBody: reqBody,
    responseBody: resBody,
  });
};

const out: Record<string, unknown> = { rows: ROWS, bodies: args.bodies };
try {
  // ---- ingest -----------------------------------------------------------------------------------
  const writer = workerStore(url);
  const slices: number[] = [];
  const t0 = performance.now();
  let sliceAt = t0;
  const slice = Math.max(BATCH, Math.floor(ROWS / 10 / BATCH) * BATCH);
  let inflight: Promise<unknown> | undefined;
  for (let i = 0; i < ROWS; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, ROWS - i) }, (_, j) => row(i + j));
    const e = await inflight;
    if (e) throw e;
    inflight = writer.insert(batch);
    if ((i + BATCH) % slice === 0) {
      const now = performance.now();
      slices.push(Math.round(slice / ((now - sliceAt) / 1000)));
      sliceAt = now;
      process.stderr.write(`  ${i + BATCH} rows, ${slices.at(-1)} rows/s\n`);
    }
  }
  const last = await inflight;
  if (last) throw last;
  const loadS = (performance.now() - t0) / 1000;
  await writer.close?.();
  out.insert_rows_per_s = Math.round(ROWS / loadS);
  out.insert_rows_per_s_by_tenth = slices;
  await raw.unsafe('vacuum analyze request_records');
  await raw.unsafe('vacuum analyze request_usage_daily');

  // ---- sizes ------------------------------------------------------------------------------------
  const [size] = await raw<{ table: string; indexes: string; rollup: string; rollup_rows: string }[]>`
    select pg_table_size('request_records') as table, pg_indexes_size('request_records') as indexes,
      pg_total_relation_size('request_usage_daily') as rollup, (select count(*) from request_usage_daily) as rollup_rows`;
  const mb = (b: string | undefined): number => r1(Number(b) / 1_048_576 / (ROWS / 1_000_000));
  out.mb_per_million_rows = { table: mb(size?.table), indexes: mb(size?.indexes), rollup: mb(size?.rollup) };
  out.rollup_rows = Number(size?.rollup_rows);

  // ---- search -----------------------------------------------------------------------------------
  const time = async (n: number, f: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> => {
    for (let i = 0; i < 20; i++) await f(i);
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const s = performance.now();
      await f(i);
      ms.push(performance.now() - s);
    }
    return { p50: r1(pct(ms, 50)), p99: r1(pct(ms, 99)) };
  };
  const pickOf = (a: string[], i: number): string => a[(i * 7919) % a.length] as string;
  out.search_by_request_id_ms = await time(1000, async (i) => {
    const got = await searchRecordsQuery(store.db, { requestId: pickOf(ids, i), limit: 51 });
    if (got.length !== 1) throw new Error('a sampled request id was not found');
  });
  out.search_by_client_request_id_ms = await time(1000, async (i) => {
    const got = await searchRecordsQuery(store.db, { clientRequestId: pickOf(clientIds, i), limit: 51 });
    if (got.length !== 1) throw new Error('a sampled client request id was not found');
  });

  // ---- GetUsage ---------------------------------------------------------------------------------
  const october = { start: new Date('2026-10-01T00:00:00Z'), end: new Date('2026-11-01T00:00:00Z') };
  const lastThirty = { start: new Date('2026-10-01T09:30:00Z'), end: new Date('2026-10-31T09:30:00Z') };
  const usage = (groupBy: UsageGroupBy, range: { start: Date; end: Date }) => (i: number) =>
    usageSums(store.db, { customerId: `cust-${i % CUSTOMERS}`, groupBy, ...range });
  out.usage_month_by_key_ms = await time(200, usage('api_key', october));
  out.usage_month_by_model_ms = await time(200, usage('model', october));
  out.usage_month_by_key_for_one_project_ms = await time(200, (i) =>
    usageSums(store.db, { customerId: `cust-${i % CUSTOMERS}`, projectId: `proj-${i % 3}`, groupBy: 'api_key', ...october }),
  );
  out.usage_30_days_partial_ends_by_model_ms = await time(50, usage('model', lastThirty));

  // ---- purge ------------------------------------------------------------------------------------
  for (let c = 0; c < CUSTOMERS; c++) {
    const [cust] = await store.db
      .insert(customers)
      .values({ customerId: `cust-${c}` })
      .returning();
    for (let p = 0; p < 3; p++) {
      const [proj] = await store.db
        .insert(projects)
        .values({ customerUuid: cust?.id as string, customerId: `cust-${c}`, projectId: `proj-${p}` })
        .returning();
      await store.db.insert(projectSettings).values({
        projectUuid: proj?.id as string,
        customerId: `cust-${c}`,
        projectId: `proj-${p}`,
        settingName: 'record-retention',
        settingValue: '{"bodies":"full","days":30}',
      });
    }
  }
  // "Now" 2026-10-11: the first 10 days (1/6 of the records) are past 30 days.
  const tp = performance.now();
  const purged = await new RecordRetention(store.db, { responseRetentionMs: 30 * 86_400_000 }).purge(Date.UTC(2026, 9, 11));
  const purgeS = (performance.now() - tp) / 1000;
  out.purged_rows = purged;
  out.purge_rows_per_s = Math.round(purged / purgeS);

  // ---- the rollup against a scan ----------------------------------------------------------------
  const [check] = await raw<{ differ: string }[]>`
    with kept as (select customer_id, project_id, day, api_key_id, model, provider, requests, input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_nano_usd from request_usage_daily),
    scanned as (
      select coalesce(customer_id, '') as customer_id, coalesce(project_id, '') as project_id, (received_at at time zone 'UTC')::date as day, coalesce(api_key_id, '') as api_key_id,
        coalesce(model, '') as model, coalesce(provider, '') as provider, count(*) as requests, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
        sum(cached_input_tokens) as cached_input_tokens, sum(cache_write_tokens) as cache_write_tokens, sum(cost_nano_usd) as cost_nano_usd
      from request_records group by 1, 2, 3, 4, 5, 6)
    select count(*) as differ from ((select * from kept except all select * from scanned) union all (select * from scanned except all select * from kept)) d`;
  out.rollup_rows_differing_from_scan = Number(check?.differ);
  out.goals = {
    search_le_10ms:
      Math.max((out.search_by_request_id_ms as { p99: number }).p99, (out.search_by_client_request_id_ms as { p99: number }).p99) <= 10,
    usage_le_200ms:
      Math.max((out.usage_month_by_key_ms as { p99: number }).p99, (out.usage_month_by_model_ms as { p99: number }).p99) <= 200,
    ingest_ge_20000: (out.insert_rows_per_s as number) >= 20_000,
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await raw.end();
  await store.close();
  if (!args.keep) await admin.unsafe(`drop database if exists ${DB} with (force)`);
  await admin.end();
}
