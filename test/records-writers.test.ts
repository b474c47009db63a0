import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inArray } from 'drizzle-orm';
import { loadConfig } from '../src/config/env.ts';
import { setLogLevel, setLogSink } from '../src/core/log.ts';
import type { RecordEntry } from '../src/core/records.ts';
import { Spool } from '../src/core/spool.ts';
import { directStore, type RecordStore, workerStore } from '../src/records/backend.ts';
import { entryOf } from '../src/records/entry.ts';
import { RecordWriter } from '../src/records/writer.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { type NewRequestRecord, requestRecords } from '../src/store/schema/index.ts';
import { type TestDatabase, testDatabase } from './support/db.ts';

/**
 * Issue 49: the RecordWriter with several batches in flight (`writers`, GATEWAY_RECORD_WRITERS)
 * against the real store (PGlite, or PostgreSQL with TEST_DATABASE_URL, there through the writer
 * thread with a connection per batch). The store is wrapped to count the inserts under way at
 * once, to hold them at a gate and to fail some the way a lost connection does; every insert that
 * succeeds logs its request ids, so "once" and the order are checked, not only that rows arrive.
 */

let tdb: TestDatabase;
let store: Store;
const lines: string[] = [];
const dirs: string[] = [];
const closers: RecordStore[] = [];

beforeAll(async () => {
  tdb = await testDatabase();
  store = tdb.url ? await openStore({ driver: 'postgres', url: tdb.url }) : await openStore({ driver: 'pglite', dataDir: 'memory' });
  setLogLevel('debug');
  setLogSink((line) => void lines.push(line));
}, 30_000);

afterAll(async () => {
  setLogSink(undefined);
  setLogLevel('error');
  for (const c of closers) await c.close?.();
  await store.close();
  await tdb.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const spoolDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'records-writers-'));
  dirs.push(d);
  return join(d, 'record-spool');
};

/** The store the gateway would use here: the writer thread with `n` connections on PostgreSQL, the embedded store's own on PGlite. */
const realStore = (n: number): RecordStore => {
  if (!tdb.url) return directStore(store.db);
  const s = workerStore(tdb.url, n);
  closers.push(s);
  return s;
};

const row = (extra: Partial<NewRequestRecord> = {}): NewRequestRecord => ({
  requestId: crypto.randomUUID(),
  receivedAt: new Date(),
  endpoint: '/v1/chat/completions',
  httpStatus: 200,
  latencyMs: 1,
  requestBody: '{"messages":[{"role":"user","content":"hello"}]}',
  ...extra,
});

const idsOf = (rows: readonly NewRequestRecord[]): string[] => rows.map((r) => r.requestId as string);
const stored = async (ids: string[]) => store.db.select().from(requestRecords).where(inArray(requestRecords.requestId, ids));

/** The real store behind a probe: `active`/`maxActive` inserts at once, a `gate` holding them, `down(ids)` failing a batch as a lost connection does. */
const probed = (inner: RecordStore) => {
  const p = {
    active: 0,
    maxActive: 0,
    gate: undefined as Promise<void> | undefined,
    down: (_ids: readonly string[]): boolean => false,
    written: [] as string[],
    /** The batches stored, in the order their inserts were started. */
    sent: [] as { ids: string[]; ok: boolean }[],
  };
  const lost = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const run = async (ids: string[], insert: () => Promise<unknown>): Promise<unknown> => {
    p.active++;
    p.maxActive = Math.max(p.maxActive, p.active);
    const call = { ids, ok: false };
    p.sent.push(call);
    try {
      if (p.gate) await p.gate;
      if (p.down(ids)) return lost();
      const e = await insert();
      if (e === undefined) p.written.push(...ids);
      call.ok = e === undefined;
      return e;
    } finally {
      p.active--;
    }
  };
  const s: RecordStore = {
    insert: (entries: readonly RecordEntry[]) =>
      run(
        entries.map((x) => String(x.row.request_id)),
        () => inner.insert(entries),
      ),
    insertJson: (batch: string) =>
      run(
        (JSON.parse(batch) as { request_id: string }[]).map((r) => r.request_id),
        () => inner.insertJson(batch),
      ),
  };
  return { p, store: s };
};

const hold = (p: { gate: Promise<void> | undefined }): (() => void) => {
  let release: () => void = () => undefined;
  p.gate = new Promise<void>((r) => (release = r));
  return () => {
    p.gate = undefined;
    release();
  };
};

test('under load, up to `writers` batches are written at once and every row is stored exactly once (a record sent twice too)', async () => {
  const { p, store: s } = probed(realStore(3));
  const writer = new RecordWriter(s, { flushMs: 10, maxBatch: 200, writers: 3 });
  writer.start();
  const rows = Array.from({ length: 8_000 }, () => row());
  for (let i = 0; i < rows.length; i += 400) {
    for (const r of rows.slice(i, i + 400)) writer.add(entryOf(r));
    // A record sent twice (a data plane's push retried): stored once.
    writer.add(entryOf(rows[i] as NewRequestRecord));
    await Bun.sleep(2);
  }
  await writer.stop();
  expect(p.maxActive).toBeGreaterThanOrEqual(2);
  expect(p.maxActive).toBeLessThanOrEqual(3);
  const got = await stored(idsOf(rows));
  expect(got.length).toBe(rows.length);
  expect(new Set(got.map((g) => g.requestId)).size).toBe(rows.length);
  expect(writer.stats).toMatchObject({ queued: 0, dropped: 0 });
}, 60_000);

test('a row refused in one of two batches in flight is dropped alone; the other rows of both batches are stored as sent', async () => {
  const { p, store: s } = probed(realStore(2));
  const writer = new RecordWriter(s, { flushMs: 60_000, maxBatch: 50, writers: 2 });
  const rows = Array.from({ length: 100 }, () => row());
  // Refused even cleaned and without bodies (no time to store it under): dropped and counted.
  rows[70] = row({ receivedAt: new Date(Number.NaN) });
  // Refused, then stored cleaned and flagged.
  rows[20] = row({ clientRequestId: 'c\u0000x' });
  const release = hold(p);
  for (const r of rows) writer.add(entryOf(r));
  await Bun.sleep(20);
  expect(p.active).toBe(2);
  release();
  await writer.flush();
  await writer.stop();
  const got = new Map((await stored(idsOf(rows))).map((g) => [g.requestId, g]));
  expect(got.size).toBe(99);
  expect(got.has(rows[70]?.requestId as string)).toBe(false);
  expect(got.get(rows[20]?.requestId as string)?.sanitized).toBe('text');
  for (const [id, g] of got) if (id !== rows[20]?.requestId) expect(g.sanitized).toBeNull();
  expect(writer.stats).toMatchObject({ queued: 0, dropped: 1, sanitized: 1 });
  expect(lines.some((l) => l.includes('dropped') && l.includes('could not be stored even cleaned'))).toBe(true);
}, 30_000);

for (const spooled of [true, false])
  test(`the store goes down under batches in flight (one lands, two fail), ${spooled ? 'with' : 'without'} a spool: once back, every row is written once, in order`, async () => {
    const { p, store: s } = probed(realStore(3));
    const writer = new RecordWriter(s, {
      flushMs: 60_000,
      maxBatch: 100,
      writers: 3,
      ...(spooled ? { spool: new Spool(spoolDir()) } : {}),
    });
    const rows = Array.from({ length: 600 }, () => row());
    const ids = idsOf(rows);
    const landed = new Set(ids.slice(0, 100));
    const release = hold(p);
    for (const r of rows.slice(0, 300)) writer.add(entryOf(r));
    await Bun.sleep(20);
    expect(p.active).toBe(3);
    // Queued behind the batches in flight while they hang.
    for (const r of rows.slice(300, 500)) writer.add(entryOf(r));
    let outage = true;
    // The first batch lands; every other write fails until the store is back.
    p.down = (batch) => outage && !landed.has(batch[0] as string);
    release();
    await writer.flush();
    expect(writer.stats.storeDown).toBe(true);
    expect(p.written).toEqual(ids.slice(0, 100));
    if (spooled) expect(writer.stats).toMatchObject({ queued: 0, spooled: 400, dropped: 0 });
    else expect(writer.stats).toMatchObject({ queued: 400, spooled: 0, dropped: 0 });
    // More arrive during the outage; a retry finds the store still down.
    for (const r of rows.slice(500)) writer.add(entryOf(r));
    await writer.flush();
    expect(p.written.length).toBe(100);
    outage = false;
    await writer.flush();
    await writer.stop();
    expect(writer.stats).toMatchObject({ queued: 0, spooled: 0, dropped: 0, storeDown: false });
    // Nothing doubled: no row was written twice (a batch that landed is never sent again).
    expect(p.written.length).toBe(600);
    expect(new Set(p.written).size).toBe(600);
    // In order: the batches that stored rows were started in the order the rows were made (the
    // failed ones first once back). Batches in flight together may commit in any order.
    expect(p.sent.filter((c) => c.ok).flatMap((c) => c.ids)).toEqual(ids);
    // From the spool, one batch at a time: committed in order too.
    if (spooled) expect(p.written).toEqual(ids);
    expect((await stored(ids)).length).toBe(600);
  }, 30_000);

test('stop() while batches are in flight waits for them and writes everything queued behind them', async () => {
  const { p, store: s } = probed(realStore(3));
  const writer = new RecordWriter(s, { flushMs: 60_000, maxBatch: 100, writers: 3, spool: new Spool(spoolDir()) });
  const rows = Array.from({ length: 1_000 }, () => row());
  const release = hold(p);
  for (const r of rows) writer.add(entryOf(r));
  await Bun.sleep(20);
  expect(p.active).toBe(3);
  const stopping = writer.stop(10_000);
  await Bun.sleep(100);
  expect(writer.stats.queued).toBe(1_000);
  release();
  await stopping;
  expect(writer.stats).toMatchObject({ queued: 0, spooled: 0, dropped: 0 });
  expect(p.written.length).toBe(1_000);
  expect(new Set(p.written).size).toBe(1_000);
  expect((await stored(idsOf(rows))).length).toBe(1_000);
}, 30_000);

test('stop() past its deadline with batches still in flight spools them too; a later writer stores each row once', async () => {
  const dir = spoolDir();
  const { p, store: s } = probed(realStore(3));
  const writer = new RecordWriter(s, { flushMs: 60_000, maxBatch: 100, writers: 3, spool: new Spool(dir) });
  const rows = Array.from({ length: 500 }, () => row());
  const release = hold(p);
  for (const r of rows) writer.add(entryOf(r));
  await Bun.sleep(20);
  expect(p.active).toBe(3);
  await writer.stop(200);
  expect(writer.stats).toMatchObject({ queued: 0, spooled: 500, dropped: 0 });
  // The hung inserts land after all: their rows are in the store and in the spool.
  release();
  while (p.active > 0) await Bun.sleep(10);
  expect(p.written.length).toBe(300);
  const after = new RecordWriter(realStore(2), { flushMs: 60_000, writers: 2, spool: new Spool(dir) });
  await after.stop();
  expect(after.stats).toMatchObject({ queued: 0, spooled: 0, dropped: 0 });
  const got = await stored(idsOf(rows));
  expect(got.length).toBe(500);
  expect(new Set(got.map((g) => g.requestId)).size).toBe(500);
}, 30_000);

test.skipIf(!process.env.TEST_DATABASE_URL)(
  "PostgreSQL: every connection of the writer thread cuts a batch at 4 s (the forwarding cursor's bound), so batches in flight together never commit later; cut, they are written again once",
  async () => {
    const { p, store: s } = probed(realStore(2));
    const writer = new RecordWriter(s, { flushMs: 60_000, maxBatch: 100, writers: 2 });
    const rows = Array.from({ length: 200 }, () => row());
    const locker = (await import('postgres')).default(tdb.url as string, { max: 1, onnotice: () => undefined });
    let unlock: () => void = () => undefined;
    let locked: () => void = () => undefined;
    const isLocked = new Promise<void>((r) => (locked = r));
    const held = locker.begin(async (tx) => {
      await tx`lock table request_records in access exclusive mode`;
      locked();
      await new Promise<void>((r) => (unlock = r));
    });
    await isLocked;
    const t0 = Date.now();
    for (const r of rows) writer.add(entryOf(r));
    while (!writer.stats.storeDown && Date.now() - t0 < 10_000) await Bun.sleep(20);
    const cut = Date.now() - t0;
    // Both batches waited on the lock at once and were cut by the statement timeout, not by the lock's end.
    expect(p.sent.map((c) => c.ok)).toEqual([false, false]);
    expect(p.maxActive).toBe(2);
    expect(cut).toBeGreaterThanOrEqual(3_900);
    expect(cut).toBeLessThan(5_500);
    expect(writer.stats).toMatchObject({ queued: 200, storeDown: true });
    unlock();
    await held;
    await locker.end();
    await writer.flush();
    await writer.stop();
    expect(writer.stats).toMatchObject({ queued: 0, dropped: 0, storeDown: false });
    expect(new Set(p.written).size).toBe(200);
    expect((await stored(idsOf(rows))).length).toBe(200);
  },
  30_000,
);

test('GATEWAY_RECORD_WRITERS: 1 on PGlite and 2 on PostgreSQL unless set; 1–16, anything else refused naming it', () => {
  const base = { GATEWAY_DATA_DIR: 'memory://' };
  const pg = { ...base, DATABASE_URL: 'postgres://u:p@db.internal:5432/gw', GATEWAY_KEK: Buffer.alloc(32, 7).toString('base64') };
  expect(loadConfig([], base).recordWriters).toBe(1);
  expect(loadConfig([], pg).recordWriters).toBe(2);
  expect(loadConfig([], { ...pg, GATEWAY_RECORD_WRITERS: '4' }).recordWriters).toBe(4);
  expect(loadConfig([], { ...base, GATEWAY_RECORD_WRITERS: '3' }).recordWriters).toBe(3);
  for (const bad of ['0', '17', 'two'])
    expect(() => loadConfig([], { ...pg, GATEWAY_RECORD_WRITERS: bad })).toThrow(/GATEWAY_RECORD_WRITERS/);
});
