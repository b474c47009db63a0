import { afterAll, beforeAll, expect, test } from 'bun:test';
import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import { batchJson, directStore, isDataError, jsonStore, workerStore } from '../src/records/backend.ts';
import { entryOf } from '../src/records/entry.ts';
import { RecordRetention } from '../src/records/retention.ts';
import { searchRecordsQuery } from '../src/records/search.ts';
import { type UsageGroupBy, type UsageQuery, usageQuery, usageSums } from '../src/records/usage.ts';
import { RecordWriter } from '../src/records/writer.ts';
import { openStore, type Store } from '../src/store/db.ts';
import {
  customers,
  type NewRequestRecord,
  projectSettings,
  projects,
  type RequestRecordRow,
  requestRecords,
  requestUsageDaily,
  requestUsageHourly,
} from '../src/store/schema/index.ts';
import { type TestDatabase, testDatabase } from './support/db.ts';

/**
 * GetUsage's rollup (request_usage_daily, kept by triggers on request_records) against a scan of
 * the records after mixed inserts — the writer's COPY (PGlite) and JSON insert, batches sent twice —
 * deletes and retention purges; usageSums over whole and partial days against sums computed here;
 * and the plans of SearchRequestRecords and GetUsage on a table of thousands of rows.
 * PGlite, or PostgreSQL with TEST_DATABASE_URL.
 */

let tdb: TestDatabase;
let store: Store;

beforeAll(async () => {
  tdb = await testDatabase();
  store = tdb.url ? await openStore({ driver: 'postgres', url: tdb.url }) : await openStore({ driver: 'pglite', dataDir: 'memory' });
}, 30_000);

afterAll(async () => {
  await store.close();
  await tdb.drop();
});

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 20, 15, 30);
let seed = 7;
const rand = (n: number): number => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed % n;
};
const pick = <T>(a: readonly T[]): T => a[rand(a.length)] as T;

/** A record somewhere in the 12 days before NOW, over 2 customers (and none), 3 projects, keys, models. */
const randomRow = (): NewRequestRecord => ({
  requestId: crypto.randomUUID(),
  clientRequestId: rand(4) === 0 ? `c-${rand(1_000_000)}` : null,
  receivedAt: new Date(NOW - rand(12 * DAY)),
  customerId: pick(['acme', 'acme', 'beta', null]),
  projectId: pick(['default', 'p2', null]),
  apiKeyId: pick(['k0', 'k1', 'k2', 'k3', null]),
  endpoint: '/v1/chat/completions',
  model: pick(['m0', 'm1', 'm2', null]),
  provider: pick(['openai', 'anthropic']),
  httpStatus: 200,
  latencyMs: 5,
  inputTokens: rand(1000),
  outputTokens: rand(1000),
  cachedInputTokens: rand(100),
  cacheWriteTokens: rand(50),
  costNanoUsd: rand(2_000_000_000),
});

const write = async (rows: NewRequestRecord[], how: 'direct' | 'json'): Promise<void> => {
  const writer = new RecordWriter(how === 'direct' ? directStore(store.db) : jsonStore(store.db), { maxBatch: 97 });
  for (const r of rows) writer.add(entryOf(r));
  await writer.stop();
};

/** request_usage_daily and request_usage_hourly (keys `h|…`) as they are, and as a scan of request_records says they should be. */
const rollupAndScan = async () => {
  const u = requestUsageDaily;
  const h = requestUsageHourly;
  const r = requestRecords;
  const keptHours = await store.db
    .select({
      k: sql<string>`'h|' || ${h.customerId} || '|' || ${h.projectId} || '|' || to_char(${h.hour} at time zone 'UTC', 'YYYY-MM-DD HH24') || '|' || ${h.apiKeyId} || '|' || ${h.model} || '|' || ${h.provider}`,
      v: sql<string>`${h.requests} || ' ' || ${h.inputTokens} || ' ' || ${h.outputTokens} || ' ' || ${h.cachedInputTokens} || ' ' || ${h.cacheWriteTokens} || ' ' || ${h.costNanoUsd}`,
    })
    .from(h);
  const scannedHours = await store.db
    .select({
      k: sql<string>`'h|' || coalesce(${r.customerId}, '') || '|' || coalesce(${r.projectId}, '') || '|' || to_char(${r.receivedAt} at time zone 'UTC', 'YYYY-MM-DD HH24') || '|' || coalesce(${r.apiKeyId}, '') || '|' || coalesce(${r.model}, '') || '|' || coalesce(${r.provider}, '')`,
      v: sql<string>`count(*) || ' ' || sum(${r.inputTokens}) || ' ' || sum(${r.outputTokens}) || ' ' || sum(${r.cachedInputTokens}) || ' ' || sum(${r.cacheWriteTokens}) || ' ' || sum(${r.costNanoUsd})`,
    })
    .from(r)
    .groupBy(sql`1`);
  const kept = await store.db
    .select({
      k: sql<string>`${u.customerId} || '|' || ${u.projectId} || '|' || ${u.day}::text || '|' || ${u.apiKeyId} || '|' || ${u.model} || '|' || ${u.provider}`,
      v: sql<string>`${u.requests} || ' ' || ${u.inputTokens} || ' ' || ${u.outputTokens} || ' ' || ${u.cachedInputTokens} || ' ' || ${u.cacheWriteTokens} || ' ' || ${u.costNanoUsd}`,
    })
    .from(u);
  const scanned = await store.db
    .select({
      k: sql<string>`coalesce(${r.customerId}, '') || '|' || coalesce(${r.projectId}, '') || '|' || ((${r.receivedAt} at time zone 'UTC')::date)::text || '|' || coalesce(${r.apiKeyId}, '') || '|' || coalesce(${r.model}, '') || '|' || coalesce(${r.provider}, '')`,
      v: sql<string>`count(*) || ' ' || sum(${r.inputTokens}) || ' ' || sum(${r.outputTokens}) || ' ' || sum(${r.cachedInputTokens}) || ' ' || sum(${r.cacheWriteTokens}) || ' ' || sum(${r.costNanoUsd})`,
    })
    .from(r)
    .groupBy(sql`1`);
  const asMap = (rows: { k: string; v: string }[]) =>
    Object.fromEntries(rows.map((x) => [x.k, x.v]).sort(([a], [b]) => ((a ?? '') < (b ?? '') ? -1 : 1)));
  return { kept: asMap([...kept, ...keptHours]), scanned: asMap([...scanned, ...scannedHours]) };
};

test('the rollup equals a scan of the records after COPY and JSON inserts, batches written twice, deletes, a retention purge and a truncate', async () => {
  const first = Array.from({ length: 700 }, randomRow);
  await write(first, 'direct');
  await write(Array.from({ length: 500 }, randomRow), 'json');
  // The same rows again (a spooled batch written after a crash): skipped, not counted twice.
  await write(first.slice(0, 300), 'direct');
  await write(first.slice(200, 400), 'json');
  let { kept, scanned } = await rollupAndScan();
  expect(Object.keys(kept).length).toBeGreaterThan(100);
  expect(kept).toEqual(scanned);
  const before = await store.db.select({ n: sql<string>`sum(${requestUsageDaily.requests})` }).from(requestUsageDaily);
  expect(Number(before[0]?.n)).toBe(1200);

  // Deleting rows takes them out; a group left with nothing is gone.
  await store.db.delete(requestRecords).where(
    inArray(
      requestRecords.requestId,
      first.slice(0, 150).map((r) => r.requestId),
    ),
  );
  await store.db.delete(requestRecords).where(and(eq(requestRecords.customerId, 'beta'), eq(requestRecords.model, 'm2')));
  ({ kept, scanned } = await rollupAndScan());
  expect(kept).toEqual(scanned);
  expect(Object.keys(kept).some((k) => k.startsWith('beta|') && k.split('|')[4] === 'm2')).toBe(false);
  expect(Object.keys(kept).some((k) => k.startsWith('h|beta|') && k.split('|')[5] === 'm2')).toBe(false);

  // A retention purge (days: 5 for acme/default), in batches of 40 rows.
  const [c] = await store.db.insert(customers).values({ customerId: 'acme' }).returning();
  const [p] = await store.db
    .insert(projects)
    .values({ customerUuid: c?.id as string, customerId: 'acme', projectId: 'default' })
    .returning();
  await store.db.insert(projectSettings).values({
    projectUuid: p?.id as string,
    customerId: 'acme',
    projectId: 'default',
    settingName: 'record-retention',
    settingValue: '{"bodies":"full","days":5}',
  });
  const purged = await new RecordRetention(store.db, { batch: 40, responseRetentionMs: 30 * DAY }).purge(NOW);
  expect(purged).toBeGreaterThan(40);
  ({ kept, scanned } = await rollupAndScan());
  expect(kept).toEqual(scanned);
  const oldAcme = Object.keys(kept).filter((k) => k.startsWith('acme|default|') && Date.parse(k.split('|')[2] ?? '') < NOW - 6 * DAY);
  expect(oldAcme).toEqual([]);

  // More writes after the purge still add up.
  await write(Array.from({ length: 300 }, randomRow), 'direct');
  ({ kept, scanned } = await rollupAndScan());
  expect(kept).toEqual(scanned);

  await store.db.execute(sql`truncate request_records`);
  ({ kept, scanned } = await rollupAndScan());
  expect(kept).toEqual({});
  expect(scanned).toEqual({});
}, 60_000);

/** GetUsage's sums computed here from every record. */
const expected = (rows: RequestRecordRow[], q: UsageQuery) => {
  const groups = new Map<
    string,
    { requests: number; inputTokens: number; outputTokens: number; cachedInputTokens: number; cacheWriteTokens: number; costNano: bigint }
  >();
  for (const r of rows) {
    if (r.customerId !== q.customerId || (q.projectId && r.projectId !== q.projectId) || (q.apiKeyId && r.apiKeyId !== q.apiKeyId))
      continue;
    if ((q.start && r.receivedAt < q.start) || (q.end && r.receivedAt >= q.end)) continue;
    const by: Record<UsageGroupBy, string> = {
      api_key: r.apiKeyId ?? '',
      model: r.model ?? '',
      provider: r.provider ?? '',
      day: r.receivedAt.toISOString().slice(0, 10),
    };
    const g = groups.get(by[q.groupBy]) ?? {
      requests: 0,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      costNano: 0n,
    };
    g.requests++;
    g.inputTokens += r.inputTokens;
    g.outputTokens += r.outputTokens;
    g.cachedInputTokens += r.cachedInputTokens;
    g.cacheWriteTokens += r.cacheWriteTokens;
    g.costNano += BigInt(r.costNanoUsd);
    groups.set(by[q.groupBy], g);
  }
  return [...groups].map(([key, g]) => ({ key, ...g })).sort((a, b) => (a.key < b.key ? -1 : 1));
};

test('usageSums over whole days, partial days, one day and open ranges equals the sums of the records', async () => {
  await write(Array.from({ length: 1500 }, randomRow), 'direct');
  await store.db.delete(requestRecords).where(lt(requestRecords.receivedAt, new Date(NOW - 11 * DAY)));
  const rows = await store.db.select().from(requestRecords);
  const ranges: [Date | undefined, Date | undefined][] = [
    [undefined, undefined],
    [new Date(NOW - 30 * DAY), new Date(NOW + DAY)],
    [new Date(Date.UTC(2026, 10, 12)), new Date(Date.UTC(2026, 10, 19))],
    [new Date(NOW - 7.3 * DAY), new Date(NOW - 1.6 * DAY)],
    [new Date(NOW - 3 * DAY - 3_600_000), new Date(NOW - 3 * DAY + 3_600_000)],
    [new Date(NOW - 2.5 * DAY), undefined],
    [undefined, new Date(NOW - 4.2 * DAY)],
  ];
  let compared = 0;
  for (const [start, end] of ranges) {
    for (const groupBy of ['api_key', 'model', 'provider', 'day'] as const) {
      for (const scope of [{}, { projectId: 'default' }, { projectId: 'p2', apiKeyId: 'k1' }]) {
        const q: UsageQuery = { customerId: 'acme', start, end, groupBy, ...scope };
        const got = await usageSums(store.db, q);
        expect([...got].sort((a, b) => (a.key < b.key ? -1 : 1))).toEqual(expected(rows, q));
        compared += got.length;
      }
    }
  }
  expect(compared).toBeGreaterThan(200);
}, 60_000);

/** The plan of a query as one text. */
const plan = async (query: { getSQL(): ReturnType<typeof sql> }): Promise<string> => {
  const res: unknown = await store.db.execute(sql`explain ${query}`);
  const rows = Array.isArray(res) ? res : ((res as { rows?: unknown[] }).rows ?? []);
  return rows.map((r) => Object.values(r as Record<string, unknown>).join(' ')).join('\n');
};

test('SearchRequestRecords by request id and by client request id, and GetUsage over a month, use indexes and the rollup, not a scan of the records', async () => {
  await store.db.execute(sql`
    insert into request_records (request_id, client_request_id, received_at, customer_id, project_id, api_key_id, endpoint, model, provider, http_status, latency_ms)
    select gen_random_uuid(), case when i % 10 = 0 then 'c-' || i end, timestamptz '2026-10-01' + i * interval '1 minute', 'acme', 'default', 'k' || (i % 50),
      '/v1/chat/completions', 'm' || (i % 7), 'openai', 200, 5
    from generate_series(1, 60000) i`);
  await store.db.execute(sql`analyze request_records`);
  await store.db.execute(sql`analyze request_usage_daily`);
  const [one] = await store.db.select().from(requestRecords).where(eq(requestRecords.clientRequestId, 'c-31000'));
  expect(one).toBeDefined();

  const byId = await plan(searchRecordsQuery(store.db, { requestId: one?.requestId.toUpperCase(), customerId: 'acme', limit: 51 }));
  // Partitioned (migration 0019): each partition's primary key (request_id, received_at) is probed;
  // the one holding the rows (the default one: October has no partition here) is never scanned.
  expect(byId).toMatch(/Index Scan[^\n]* using request_records_default_pkey on request_records_default/);
  expect(byId).not.toContain('Seq Scan on request_records_default');
  const byClient = await plan(
    searchRecordsQuery(store.db, { clientRequestId: 'c-31000', customerId: 'acme', projectId: 'default', limit: 51 }),
  );
  expect(byClient).toMatch(/Index Scan[^\n]* using request_records_default_client_request_id_idx on request_records_default/);
  expect(byClient).not.toContain('Seq Scan on request_records_default');
  const found = await searchRecordsQuery(store.db, { clientRequestId: 'c-31000', limit: 51 });
  expect(found.map((r) => r.requestId)).toEqual([one?.requestId as string]);

  // A month of whole days: the rollup only. A range with partial days reads those from the records by time.
  const october = { customerId: 'acme', start: new Date('2026-10-01T00:00:00Z'), end: new Date('2026-11-01T00:00:00Z') };
  const month = await usageSums(store.db, { ...october, groupBy: 'model' });
  expect(month.reduce((n, g) => n + g.requests, 0)).toBe(44_639);
  expect(month.map((g) => g.key)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
  for (const groupBy of ['api_key', 'model'] as const) {
    const monthPlan = await plan(usageQuery(store.db, { ...october, groupBy }));
    expect(monthPlan).toContain('request_usage_daily');
    expect(monthPlan).not.toContain('request_records');
  }
  const partial = {
    customerId: 'acme',
    start: new Date('2026-10-03T12:30:00Z'),
    end: new Date('2026-11-02T06:15:00Z'),
    groupBy: 'api_key' as const,
  };
  // Whole days from the daily rollup, the whole hours of the partial days from the hourly one, the
  // two partial hours from the records by time.
  const partialPlan = await plan(usageQuery(store.db, partial));
  expect(partialPlan).toContain('request_usage_daily');
  expect(partialPlan).toContain('request_usage_hourly');
  expect(partialPlan).toMatch(/Index[^\n]*request_records_default_(received_at|api_key_id_received_at)_idx/);
  expect(partialPlan).not.toContain('Seq Scan on request_records_default');
  expect((await usageSums(store.db, partial)).reduce((n, g) => n + g.requests, 0)).toBe(
    (partial.end.getTime() - partial.start.getTime()) / 60_000,
  );
}, 60_000);

test.skipIf(!process.env.TEST_DATABASE_URL)(
  'the PostgreSQL writer thread COPYs batches; a batch with a request id already stored is written again skipping it; the rollup counts each row once',
  async () => {
    const ws = workerStore(tdb.url as string);
    try {
      const rows = Array.from({ length: 300 }, randomRow);
      const ids = rows.map((r) => r.requestId as string);
      expect(await ws.insert(rows.slice(0, 200).map((r) => entryOf(r)))).toBeUndefined();
      // 100 already stored, 100 new: COPY refuses the batch (23505), the JSON insert stores the new ones.
      expect(await ws.insert(rows.slice(100).map((r) => entryOf(r)))).toBeUndefined();
      const stored = await store.db
        .select({ id: requestRecords.requestId })
        .from(requestRecords)
        .where(inArray(requestRecords.requestId, ids));
      expect(stored).toHaveLength(300);
      const { kept, scanned } = await rollupAndScan();
      expect(kept).toEqual(scanned);
      // A field the database cannot hold is refused as the database would (a data error, split and cleaned by the writer).
      const bad = await ws.insert([entryOf({ ...randomRow(), errorCode: 'x\uD800y' })]);
      expect(isDataError(bad)).toBe(true);
      const refused = await ws.insertJson(batchJson([entryOf({ ...randomRow(), endpoint: 'x'.repeat(10), httpStatus: 2 ** 40 })]));
      expect(isDataError(refused)).toBe(true);
    } finally {
      await ws.close?.();
    }
  },
  60_000,
);
