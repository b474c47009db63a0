import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inArray } from 'drizzle-orm';
import { setLogLevel, setLogSink } from '../src/core/log.ts';
import { Spool } from '../src/core/spool.ts';
import type { RecordEntry } from '../src/core/records.ts';
import { directStore, type RecordStore } from '../src/records/backend.ts';
import { entryOf } from '../src/records/entry.ts';
import { RecordWriter } from '../src/records/writer.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { type NewRequestRecord, requestRecords } from '../src/store/schema/index.ts';
import { type TestDatabase, testDatabase } from './support/db.ts';

/**
 * Issue 22, defect 6: the store writer's spool (core/spool.ts, the one a separate data plane uses)
 * against the real store (PGlite, or PostgreSQL with TEST_DATABASE_URL). The store is put behind
 * a switch that fails inserts the way a lost connection does; every insert that succeeds logs its
 * request ids, so the order rows reach the store in is checked, not only that they arrive.
 * records-spool-outage.test.ts does the same with a whole gateway and a PostgreSQL server stopped.
 */

let tdb: TestDatabase;
let store: Store;
const lines: string[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  tdb = await testDatabase();
  store = tdb.url ? await openStore({ driver: 'postgres', url: tdb.url }) : await openStore({ driver: 'pglite', dataDir: 'memory' });
  setLogLevel('debug');
  setLogSink((line) => void lines.push(line));
}, 30_000);

afterAll(async () => {
  setLogSink(undefined);
  setLogLevel('error');
  await store.close();
  await tdb.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const spoolDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'records-spool-'));
  dirs.push(d);
  return join(d, 'record-spool');
};

const row = (extra: Partial<NewRequestRecord> = {}): NewRequestRecord => ({
  requestId: crypto.randomUUID(),
  receivedAt: new Date(),
  endpoint: '/v1/chat/completions',
  httpStatus: 200,
  latencyMs: 1,
  requestBody: '{"messages":[{"role":"user","content":"hello MARK-SPOOL-BODY"}]}',
  ...extra,
});

const stored = async (ids: string[]) => store.db.select().from(requestRecords).where(inArray(requestRecords.requestId, ids));

/** The real store behind a switch: `down` fails inserts as a refused connection does; `gate` holds them. */
const switchable = (inner: RecordStore) => {
  const sw = { down: false, gate: undefined as Promise<void> | undefined, written: [] as string[] };
  const lost = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const store: RecordStore = {
    async insert(entries) {
      if (sw.gate) await sw.gate;
      if (sw.down) return lost();
      const e = await inner.insert(entries);
      if (e === undefined) sw.written.push(...entries.map((x) => String(x.row.request_id)));
      return e;
    },
    async insertJson(batch) {
      if (sw.gate) await sw.gate;
      if (sw.down) return lost();
      const e = await inner.insertJson(batch);
      if (e === undefined) sw.written.push(...(JSON.parse(batch) as { request_id: string }[]).map((r) => r.request_id));
      return e;
    },
  };
  return { sw, store };
};

const until = async (done: () => boolean, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await Bun.sleep(10);
};

const jsonFiles = (dir: string): string[] => {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
};

test('store down: past the bound and on every tick the queue goes to the spool; once back, every row is written in order, once', async () => {
  const dir = spoolDir();
  const { sw, store: s } = switchable(directStore(store.db));
  const writer = new RecordWriter(s, { flushMs: 20, maxBatch: 100, maxQueued: 300, spool: new Spool(dir) });
  writer.start();
  const rows = Array.from({ length: 2_000 }, () => row());
  const ids = rows.map((r) => r.requestId as string);
  for (const r of rows.slice(0, 50)) writer.add(entryOf(r));
  await writer.flush();
  expect(sw.written).toHaveLength(50);

  sw.down = true;
  let maxQueued = 0;
  for (let i = 50; i < 1_950; i += 50) {
    for (const r of rows.slice(i, i + 50)) writer.add(entryOf(r));
    maxQueued = Math.max(maxQueued, writer.stats.queued);
    await Bun.sleep(i % 400 === 0 ? 30 : 0);
  }
  await Bun.sleep(60);
  // Nothing dropped, memory within the bound, and /readyz's counters say what waits on disk.
  expect(maxQueued).toBeLessThanOrEqual(300);
  expect(writer.stats).toMatchObject({ dropped: 0, storeDown: true });
  expect(writer.stats.spooled + writer.stats.queued).toBe(1_900);
  expect(writer.stats.spooled).toBeGreaterThan(1_500);
  expect(writer.stats.spooledBytes).toBeGreaterThan(writer.stats.spooled * 100);
  expect(jsonFiles(dir).length).toBeGreaterThan(1);
  expect(sw.written).toHaveLength(50);

  sw.down = false;
  for (const r of rows.slice(1_950)) writer.add(entryOf(r));
  await until(() => writer.stats.queued === 0 && writer.stats.spooled === 0);
  await writer.stop();
  expect(writer.stats).toMatchObject({ queued: 0, spooled: 0, spooledBytes: 0, dropped: 0, storeDown: false });
  expect(sw.written).toEqual(ids);
  expect(jsonFiles(dir)).toEqual([]);
  const got = await stored(ids);
  expect(got).toHaveLength(2_000);
  expect(got.find((g) => g.requestId === ids[1_000])?.requestBody).toEqual({
    messages: [{ role: 'user', content: 'hello MARK-SPOOL-BODY' }],
  });
  expect(lines.some((l) => l.includes('MARK-SPOOL-BODY'))).toBe(false);
}, 30_000);

test('a batch in flight when the store goes down is spooled ahead of what was spooled while it was in flight', async () => {
  const { sw, store: s } = switchable(directStore(store.db));
  const writer = new RecordWriter(s, { flushMs: 60_000, maxBatch: 100, maxQueued: 150, spool: new Spool(spoolDir()) });
  let release: () => void = () => undefined;
  sw.gate = new Promise<void>((r) => (release = r));
  const rows = Array.from({ length: 400 }, () => row());
  const ids = rows.map((r) => r.requestId as string);
  // The first 100 start a write that hangs; the next 300 pass the bound behind it and are spooled.
  for (const r of rows.slice(0, 100)) writer.add(entryOf(r));
  await Bun.sleep(5);
  for (const r of rows.slice(100)) writer.add(entryOf(r));
  expect(writer.stats.queued).toBeLessThanOrEqual(150);
  expect(writer.stats.queued).toBeGreaterThanOrEqual(100);
  expect(writer.stats.spooled).toBeGreaterThanOrEqual(200);
  sw.down = true;
  release();
  sw.gate = undefined;
  await writer.flush();
  expect(writer.stats).toMatchObject({ queued: 0, spooled: 400, dropped: 0, storeDown: true });
  sw.down = false;
  await writer.flush();
  await writer.stop();
  expect(sw.written).toEqual(ids);
  expect(writer.stats).toMatchObject({ queued: 0, spooled: 0, dropped: 0 });
}, 30_000);

test('stop() during an outage spools what is queued; a writer started later writes it once, skipping rows already stored', async () => {
  const dir = spoolDir();
  const { sw, store: s } = switchable(directStore(store.db));
  sw.down = true;
  const before = new RecordWriter(s, { flushMs: 20, spool: new Spool(dir) });
  before.start();
  const rows = Array.from({ length: 120 }, () => row());
  const ids = rows.map((r) => r.requestId as string);
  for (const r of rows) before.add(entryOf(r));
  const t = Date.now();
  await before.stop(5_000);
  expect(Date.now() - t).toBeLessThan(2_000);
  expect(before.stats).toMatchObject({ queued: 0, spooled: 120, dropped: 0 });

  // Half of them reached the store before a crash kept their batch from being removed.
  expect(await directStore(store.db).insert(rows.slice(0, 60).map((r) => entryOf(r)))).toBeUndefined();

  const { sw: sw2, store: s2 } = switchable(directStore(store.db));
  const after = new RecordWriter(s2, { flushMs: 20, spool: new Spool(dir) });
  // Found again at start: /readyz counts it before anything is written.
  expect(after.stats.spooled).toBe(120);
  after.start();
  await until(() => after.stats.spooled === 0);
  await after.stop();
  expect(after.stats).toMatchObject({ queued: 0, spooled: 0, dropped: 0 });
  expect(sw2.written).toEqual(ids);
  expect(await stored(ids)).toHaveLength(120);
  expect(jsonFiles(dir)).toEqual([]);
}, 30_000);

test('a spooled batch the database refuses: its bad rows are cleaned and flagged, the others stored as they are', async () => {
  const { sw, store: s } = switchable(directStore(store.db));
  sw.down = true;
  const writer = new RecordWriter(s, { flushMs: 60_000, spool: new Spool(spoolDir()) });
  const good = [row(), row()];
  const nul = row({ model: 'm\u0000x' });
  const surrogate = row({ responseBody: '{"text":"bad \udead reply"}' });
  for (const r of [good[0], nul, surrogate, good[1]] as NewRequestRecord[]) writer.add(entryOf(r));
  await writer.flush();
  expect(writer.stats).toMatchObject({ queued: 0, spooled: 4 });
  sw.down = false;
  await writer.flush();
  await writer.stop();
  expect(writer.stats).toMatchObject({ spooled: 0, dropped: 0, sanitized: 2 });
  const got = new Map((await stored([...good, nul, surrogate].map((r) => r.requestId as string))).map((g) => [g.requestId, g]));
  expect(got.size).toBe(4);
  expect(got.get(nul.requestId as string)).toMatchObject({ model: 'mx', sanitized: 'text' });
  expect(got.get(surrogate.requestId as string)).toMatchObject({ responseBody: { text: 'bad \ufffd reply' }, sanitized: 'text' });
  expect(got.get(good[0]?.requestId as string)?.sanitized ?? null).toBeNull();
}, 30_000);

test('a spool that cannot be written: rows stay in memory up to the bound, then are dropped and counted; add() never throws', async () => {
  const d = mkdtempSync(join(tmpdir(), 'records-spool-'));
  dirs.push(d);
  writeFileSync(join(d, 'not-a-dir'), '');
  const { sw, store: s } = switchable(directStore(store.db));
  sw.down = true;
  const writer = new RecordWriter(s, {
    flushMs: 60_000,
    maxBatch: 100,
    maxQueued: 1_000,
    spool: new Spool(join(d, 'not-a-dir', 'record-spool')),
  });
  const entries: RecordEntry[] = Array.from({ length: 1_200 }, () => entryOf(row()));
  for (const e of entries) writer.add(e);
  expect(writer.stats).toMatchObject({ queued: 1_000, dropped: 200, spooled: 0 });
  expect(lines.some((l) => l.includes('could not be spooled'))).toBe(true);
  await writer.stop(100);
});

test('the spool finds batches of an earlier process, oldest first, counting rows of files named without them', () => {
  const dir = spoolDir();
  const a = new Spool(dir);
  const early = a.reserve();
  a.put('[{"request_id":"b"}]', 1);
  a.put('[{"request_id":"a"}]', 1, early);
  // A batch of an older version: no row count in its name.
  writeFileSync(join(dir, '000000000000001-1-000001.json'), '[{"request_id":"x"},{"request_id":"y"}]');
  const b = new Spool(dir, (text) => (text.match(/"request_id":/g) ?? []).length);
  expect(b.stats).toMatchObject({ batches: 3, rows: 4 });
  const order: string[] = [];
  for (let x = b.oldest(); x; x = b.oldest()) {
    order.push(x.text);
    b.remove(x.name);
  }
  expect(order).toEqual(['[{"request_id":"x"},{"request_id":"y"}]', '[{"request_id":"a"}]', '[{"request_id":"b"}]']);
  expect(b.stats).toEqual({ batches: 0, rows: 0, bytes: 0 });
});
