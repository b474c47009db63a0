import { afterAll, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { isDataError, workerStore } from '../src/records/backend.ts';
import { entryOf } from '../src/records/entry.ts';
import { dropExpiredPartitions, ensurePartitions, listPartitions } from '../src/records/partitions.ts';
import { RecordRetention } from '../src/records/retention.ts';
import { idWindow, searchRecords, searchRecordsQuery } from '../src/records/search.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { customers, projectSettings, projects, requestRecords } from '../src/store/schema/index.ts';
import { testDatabase } from './support/db.ts';
import { openMigrationHandle, removeMigrationFolders, ROOT, upTo } from './support/migrations.ts';

/**
 * request_records partitioned by UTC day (migration 0019, src/records/partitions.ts): the upgrade
 * of a table holding rows, and the retention sweep that creates partitions ahead, moves late
 * records out of the default partition and drops whole expired partitions with their rollup rows.
 */

afterAll(removeMigrationFolders);

const DAY = 86_400_000;
const HOUR = 3_600_000;

test('0019: a table with rows becomes a partition (nothing rewritten or lost); rollups, lookups and duplicate refusal survive', async () => {
  const tdb = await testDatabase();
  const h = await openMigrationHandle(tdb.url);
  try {
    await h.migrate(upTo('0017_guardrail_documents'));
    await h.query(`
      insert into request_records (request_id, client_request_id, received_at, customer_id, project_id, api_key_id, endpoint, model, provider, http_status, latency_ms, input_tokens, cost_nano_usd)
      select gen_random_uuid(), 'c-' || i, now() - i * interval '37 minutes', 'acme', 'default', 'k' || (i % 3), '/v1/chat/completions', 'm', 'openai', 200, 5, i, i * 10
      from generate_series(1, 400) i`);
    const [before] = await h.query(`select count(*)::int as n, sum(input_tokens)::int as t from request_records`);
    await h.migrate(ROOT);
    const parts = await h.query(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'request_records'::regclass order by 1`,
    );
    const names = parts.map((p) => String(p.name));
    expect(names).toContain('request_records_legacy');
    expect(names).toContain('request_records_default');
    // The next three UTC days exist ahead.
    expect(names.filter((n) => /^request_records_p\d{8}$/.test(n)).length).toBe(3);
    expect(await h.query(`select count(*)::int as n, sum(input_tokens)::int as t from request_records`)).toEqual([
      before as Record<string, unknown>,
    ]);
    expect(await h.query(`select distinct tableoid::regclass::text as part from request_records`)).toEqual([
      { part: 'request_records_legacy' },
    ]);
    // The hourly rollup is filled from the rows already there, and equals the daily one.
    expect(
      await h.query(
        `select (select sum(requests)::int from request_usage_hourly) as hourly, (select sum(requests)::int from request_usage_daily) as daily`,
      ),
    ).toEqual([{ hourly: 400, daily: 400 }]);
    // A record written again (same id, same received_at) is still refused, and not counted twice.
    await h.query(`insert into request_records select * from request_records where client_request_id = 'c-7' on conflict do nothing`);
    await expect(h.query(`insert into request_records select * from request_records where client_request_id = 'c-8'`)).rejects.toThrow();
    expect(await h.query(`select sum(requests)::int as n from request_usage_hourly`)).toEqual([{ n: 400 }]);
    // A new record lands in its day's partition and is counted.
    await h.query(
      `insert into request_records (request_id, received_at, customer_id, project_id, endpoint, http_status, latency_ms) values (gen_random_uuid(), now() + interval '1 day', 'acme', 'default', '/v1/x', 200, 1)`,
    );
    const [newest] = await h.query(`select tableoid::regclass::text as part from request_records order by received_at desc limit 1`);
    expect(String(newest?.part)).toMatch(/^request_records_p\d{8}$/);
  } finally {
    await h.close();
    await tdb.drop();
  }
}, 60_000);

const insert = async (store: Store, project: string, at: number, n: number, client?: string): Promise<void> => {
  await store.db.execute(sql`
    insert into request_records (request_id, client_request_id, received_at, customer_id, project_id, api_key_id, endpoint, model, provider, http_status, latency_ms, input_tokens)
    select gen_random_uuid(), ${client ?? null}::text, ${new Date(at).toISOString()}::timestamptz + i * interval '1 second', 'acme', ${project}, 'k', '/v1/chat/completions', 'm', 'openai', 200, 5, 1
    from generate_series(1, ${n}) i`);
};

/** Rows of a raw query on either driver (PGlite answers `{rows}`, postgres.js an array). */
const rows = async (store: Store, q: ReturnType<typeof sql>): Promise<Record<string, unknown>[]> => {
  const r: unknown = await store.db.execute(q);
  return Array.isArray(r) ? r : ((r as { rows: Record<string, unknown>[] }).rows ?? []);
};

const count = async (store: Store, where = sql`true`): Promise<number> => {
  const [row] = await store.db.select({ n: sql<number>`count(*)::int` }).from(requestRecords).where(where);
  return row?.n ?? 0;
};

test('the sweep creates partitions ahead (moving late records out of the default one), drops whole expired days with their rollup rows, and deletes a shorter retention row by row', async () => {
  const tdb = await testDatabase();
  const store = await openStore(tdb.url ? { driver: 'postgres', url: tdb.url } : { driver: 'pglite', dataDir: 'memory' });
  try {
    const d1 = Math.floor(Date.now() / DAY) * DAY + DAY; // tomorrow: the migration made its partition
    const [c] = await store.db.insert(customers).values({ customerId: 'acme' }).returning();
    for (const [projectId, days] of [
      ['short', 2],
      ['long', 5],
    ] as const) {
      const [p] = await store.db
        .insert(projects)
        .values({ customerUuid: c?.id as string, customerId: 'acme', projectId })
        .returning();
      await store.db.insert(projectSettings).values({
        projectUuid: p?.id as string,
        customerId: 'acme',
        projectId,
        settingName: 'record-retention',
        settingValue: JSON.stringify({ bodies: 'full', days }),
      });
    }
    await insert(store, 'short', d1 + HOUR, 30);
    await insert(store, 'long', d1 + HOUR, 20);
    await insert(store, 'short', d1 + DAY + HOUR, 25);
    await insert(store, 'short', d1 + 2 * DAY + HOUR, 15);
    await insert(store, 'long', d1 + 2 * DAY + HOUR, 10, 'kept-1');
    // A day without a partition yet: the default partition takes it.
    await insert(store, 'short', d1 + 7 * DAY + HOUR, 5, 'late-1');
    const late = async () =>
      (
        await rows(store, sql`select distinct tableoid::regclass::text as part from request_records where client_request_id = 'late-1'`)
      ).map((r) => r.part);
    expect(await late()).toEqual(['request_records_default']);

    // Six days on: `short` (2 days) expired everything before d1 + 4 days; `long` (5 days) before d1 + 1 day.
    const now = d1 + 6 * DAY + HOUR;
    const sweep = await new RecordRetention(store.db, { responseRetentionMs: 30 * DAY }).sweep(now);
    const day = (t: number) => `request_records_p${new Date(t).toISOString().slice(0, 10).replaceAll('-', '')}`;
    const names = (await listPartitions(store.db)).map((p) => p.name);
    // The first two days are gone whole (and the migration's empty one for today); the third is kept
    // for `long`. A new install has no upgrade partition.
    expect(names).not.toContain('request_records_legacy');
    expect(names).not.toContain(day(d1 - DAY));
    expect(names).not.toContain(day(d1));
    expect(names).not.toContain(day(d1 + DAY));
    expect(names).toContain(day(d1 + 2 * DAY));
    for (let d = 6; d <= 9; d++) expect(names).toContain(day(d1 + d * DAY));
    expect(sweep.partitionsDropped).toBe(3);
    expect(sweep.rowsInDroppedPartitions).toBe(75);
    // `short`'s rows of the third day deleted one by one; `long`'s stay.
    expect(sweep.deleted).toBe(75 + 15);
    expect(await count(store)).toBe(10 + 5);
    // The late record moved into the partition made for its day, and is kept (not yet expired).
    expect(await late()).toEqual([day(d1 + 7 * DAY)]);
    // The rollups lost exactly the records that went.
    expect(
      await rows(
        store,
        sql`select (select sum(requests)::int from request_usage_daily) as daily, (select sum(requests)::int from request_usage_hourly) as hourly`,
      ),
    ).toEqual([{ daily: 15, hourly: 15 }]);
    // A lookup by client request id finds the kept record.
    const kept = await searchRecordsQuery(store.db, { clientRequestId: 'kept-1', limit: 51 });
    expect(kept.length).toBe(10);
    expect(await count(store, eq(requestRecords.projectId, 'long'))).toBe(10);
  } finally {
    await store.close();
    await tdb.drop();
  }
}, 60_000);

test.skipIf(!process.env.TEST_DATABASE_URL)(
  'a writer batch that waits longer than the forwarding lag is cut (57014, kept for a retry), not committed behind the cursor',
  async () => {
    const tdb = await testDatabase();
    const store = await openStore({ driver: 'postgres', url: tdb.url as string });
    const ws = workerStore(tdb.url as string);
    const blocker = postgres(tdb.url as string, { max: 1, onnotice: () => undefined });
    try {
      const entry = entryOf({
        requestId: crypto.randomUUID(),
        receivedAt: new Date(),
        customerId: 'acme',
        projectId: 'default',
        endpoint: '/v1/chat/completions',
        httpStatus: 200,
        latencyMs: 1,
      });
      // Another session holds the rollup (as a long writer or a detach would): the batch's trigger waits.
      let release: () => void = () => undefined;
      const held = blocker.begin(async (tx) => {
        await tx`lock table request_usage_daily in exclusive mode`;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      await Bun.sleep(100);
      const t0 = performance.now();
      const e = await ws.insert([entry]);
      const waited = performance.now() - t0;
      release();
      await held;
      expect((e as { code?: string } | undefined)?.code).toBe('57014');
      expect(isDataError(e)).toBe(false); // the writer keeps it queued
      // Cut at 4 s per transaction (the COPY, then the JSON insert it falls back to: each its own
      // transaction and stored_at); without the cut the insert would wait for the lock for ever.
      expect(waited).toBeGreaterThan(3_500);
      expect(waited).toBeLessThan(9_000);
      expect(await count(store)).toBe(0);
      // Once the lock is gone the same batch is stored.
      expect(await ws.insert([entry])).toBeUndefined();
      expect(await count(store)).toBe(1);
    } finally {
      await blocker.end();
      await ws.close?.();
      await store.close();
      await tdb.drop();
    }
  },
  30_000,
);

test('a search by a UUIDv7 request id looks in the partitions of the days around the id first, and finds a record stored under another day too', async () => {
  const tdb = await testDatabase();
  const store = await openStore(tdb.url ? { driver: 'postgres', url: tdb.url } : { driver: 'pglite', dataDir: 'memory' });
  try {
    const d0 = Math.floor(Date.now() / DAY) * DAY;
    for (let d = 1; d <= 10; d++)
      await store.db.execute(sql`select request_records_add_partition(${new Date(d0 - d * DAY).toISOString().slice(0, 10)}::date)`);
    const near = Bun.randomUUIDv7('hex', d0 - 5 * DAY + HOUR);
    const far = Bun.randomUUIDv7('hex', d0 - 9 * DAY + HOUR); // its record says it was received 4 days later
    await store.db.execute(sql`
      insert into request_records (request_id, received_at, endpoint, http_status, latency_ms) values
        (${near}::uuid, ${new Date(d0 - 5 * DAY + HOUR + 20).toISOString()}::timestamptz, '/v1/x', 200, 1),
        (${far}::uuid, ${new Date(d0 - 5 * DAY + 2 * HOUR).toISOString()}::timestamptz, '/v1/x', 200, 1)`);
    const window = idWindow(near);
    expect(window?.map((d) => d.getTime())).toEqual([d0 - 6 * DAY + HOUR, d0 - 4 * DAY + HOUR]);
    const plan = (await rows(store, sql`explain ${searchRecordsQuery(store.db, { requestId: near, limit: 51 }, window)}`))
      .map((r) => Object.values(r).join(' '))
      .join('\n');
    const scanned = [...plan.matchAll(/on (request_records_\w+)/g)].map((m) => m[1]);
    // Three days' partitions, not the eleven there are.
    expect(new Set(scanned).size).toBe(3);
    expect((await searchRecords(store.db, { requestId: near, limit: 51 })).map((r) => r.requestId)).toEqual([near]);
    expect((await searchRecords(store.db, { requestId: far, limit: 51 })).map((r) => r.requestId)).toEqual([far]);
    expect(idWindow(crypto.randomUUID())).toBeUndefined();
  } finally {
    await store.close();
    await tdb.drop();
  }
}, 60_000);

test.skipIf(!process.env.TEST_DATABASE_URL)(
  'two replicas creating and dropping the same partitions at once: each change is made once, neither fails',
  async () => {
    const tdb = await testDatabase();
    const store = await openStore({ driver: 'postgres', url: tdb.url as string });
    const other = await openStore({ driver: 'postgres', url: tdb.url as string }, { migrate: false });
    try {
      const far = Math.floor(Date.now() / DAY) * DAY + 30 * DAY;
      const created = await Promise.all([ensurePartitions(store.db, far), ensurePartitions(other.db, far)]);
      expect(created[0] + created[1]).toBe(4);
      const later = far + 10 * DAY;
      const dropped = await Promise.all([
        dropExpiredPartitions(store.db, later, new Map()),
        dropExpiredPartitions(other.db, later, new Map()),
      ]);
      // Every empty past partition (the migration's four days and these four) dropped exactly once.
      expect(dropped[0].partitions + dropped[1].partitions).toBe(8);
      expect((await listPartitions(store.db)).map((p) => p.name)).toEqual(['request_records_default']);
    } finally {
      await other.close();
      await store.close();
      await tdb.drop();
    }
  },
  60_000,
);
