import { afterAll, beforeAll, expect, test } from 'bun:test';
import { inArray } from 'drizzle-orm';
import { setLogLevel, setLogSink } from '../src/core/log.ts';
import { directStore } from '../src/records/backend.ts';
import { entryOf } from '../src/records/entry.ts';
import { RecordWriter } from '../src/records/writer.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { type NewRequestRecord, requestRecords } from '../src/store/schema/index.ts';
import { type TestDatabase, testDatabase } from './support/db.ts';

/**
 * The record sink's policies against the real store (PGlite, or PostgreSQL with TEST_DATABASE_URL):
 * the queue bound (bodies first, then rows), a store that is down (rows kept, never split or
 * dropped, until stop's deadline), and the cleaning of refused rows.
 */

let tdb: TestDatabase;
let store: Store;
const lines: string[] = [];

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
});

const row = (extra: Partial<NewRequestRecord> = {}): NewRequestRecord => ({
  requestId: crypto.randomUUID(),
  receivedAt: new Date(),
  endpoint: '/v1/chat/completions',
  httpStatus: 200,
  latencyMs: 1,
  ...extra,
});

const stored = async (ids: string[]) => store.db.select().from(requestRecords).where(inArray(requestRecords.requestId, ids));

test('past the body bound the oldest queued rows lose their bodies; past the row bound new rows are dropped and counted', async () => {
  const sink = new RecordWriter(directStore(store.db), { maxQueued: 5, maxBodyChars: 100, maxBatch: 100 });
  const body = `{"content":"${'b'.repeat(40)}"}`;
  const rows = Array.from({ length: 7 }, () => row({ requestBody: body }));
  for (const r of rows) sink.add(entryOf(r));
  expect(sink.stats).toMatchObject({ queued: 5, dropped: 2 });
  expect(sink.stats.queuedBodyChars).toBeLessThanOrEqual(100);
  await sink.stop();
  const got = await stored(rows.map((r) => r.requestId as string));
  expect(got).toHaveLength(5);
  const byId = new Map(got.map((g) => [g.requestId, g]));
  // The newest rows keep their bodies; the oldest were shed, still recorded, flagged.
  expect(byId.get(rows[4]?.requestId as string)?.requestBody).toEqual({ content: 'b'.repeat(40) });
  expect(byId.get(rows[0]?.requestId as string)).toMatchObject({ requestBody: { omitted: 'record queue full' }, sanitized: 'bodies' });
});

test('a store that is down keeps every row queued (no split, no cleaning, no drop) and stop() gives up at its deadline', async () => {
  const down = await openStore({ driver: 'pglite', dataDir: 'memory' });
  await down.close();
  const sink = new RecordWriter(directStore(down.db), { flushMs: 20 });
  sink.start();
  for (let i = 0; i < 10; i++) sink.add(entryOf(row({ model: `m\u0000${i}`, requestBody: '{"a":"MARK-DOWN-BODY"}' })));
  await sink.flush();
  expect(sink.stats).toMatchObject({ queued: 10, dropped: 0, sanitized: 0, storeDown: true });
  const t = Date.now();
  await sink.stop(400);
  expect(Date.now() - t).toBeLessThan(2_000);
  expect(sink.stats.dropped).toBe(10);
  expect(lines.some((l) => l.includes('MARK-DOWN-BODY'))).toBe(false);
}, 30_000);

test('refused rows are cleaned precisely: escaped backslashes and valid pairs stay, lone surrogates and NUL go', async () => {
  const sink = new RecordWriter(directStore(store.db));
  const good = row();
  const odd = row({
    clientRequestId: 'c\udc00x',
    requestBody: String.raw`{"keep":"\\udead","pair":"\ud83d\ude00","lone":"a\udeadb","nul":"x\u0000y"}`,
    responseBody: { text: 'r\ud800s' },
    latencyMs: 1e12,
    costNanoUsd: Number.NaN,
  });
  sink.add(entryOf(odd));
  sink.add(entryOf(good));
  await sink.stop();
  const got = new Map((await stored([odd.requestId as string, good.requestId as string])).map((g) => [g.requestId, g]));
  expect(got.get(good.requestId as string)?.sanitized).toBeNull();
  const o = got.get(odd.requestId as string);
  expect(o?.requestBody).toEqual({ keep: '\\udead', pair: '\u{1F600}', lone: 'a\ufffdb', nul: 'xy' });
  expect(o?.responseBody).toEqual({ text: 'r\ufffds' });
  expect(o?.clientRequestId).toBe('c\ufffdx');
  expect(o?.latencyMs).toBe(2_147_483_647);
  expect(o?.costNanoUsd).toBe(0);
  expect(o?.sanitized?.split(',').sort()).toEqual(['numbers', 'text']);
  expect(sink.stats).toMatchObject({ queued: 0, dropped: 0 });
});

test('a body nested deeper than the store can take is never sent to it: the row is stored without it, flagged', async () => {
  const sink = new RecordWriter(directStore(store.db), { maxBatch: 100 });
  const depth = 20_000;
  const deep = `{"tools":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
  const rows = [row({ requestBody: deep }), row(), row({ responseBody: deep })];
  for (const r of rows) sink.add(entryOf(r));
  await sink.stop();
  const got = await stored(rows.map((r) => r.requestId as string));
  expect(got).toHaveLength(3);
  const byId = new Map(got.map((g) => [g.requestId, g]));
  expect(byId.get(rows[0]?.requestId as string)).toMatchObject({ requestBody: { omitted: 'not stored' }, sanitized: 'bodies' });
  expect(byId.get(rows[2]?.requestId as string)).toMatchObject({ responseBody: { omitted: 'not stored' }, sanitized: 'bodies' });
  expect(byId.get(rows[1]?.requestId as string)?.sanitized ?? null).toBeNull();
}, 30_000);

test('a record sent twice is stored once and not counted as dropped; quotes, commas, newlines and \\x01 round-trip', async () => {
  const odd = 'a "quoted", \x01 value\nwith a newline\r\n\\N and \\. too';
  const first = row({ clientRequestId: odd, model: '', requestBody: JSON.stringify({ t: odd }), responseBody: { t: odd, n: null } });
  const again = new RecordWriter(directStore(store.db));
  again.add(entryOf(first));
  await again.flush();
  const fresh = row({ provider: odd });
  again.add(entryOf(first));
  again.add(entryOf(fresh));
  await again.stop();
  expect(again.stats).toMatchObject({ queued: 0, dropped: 0, bodiesDropped: 0, sanitized: 0 });
  const got = new Map((await stored([first.requestId as string, fresh.requestId as string])).map((g) => [g.requestId, g]));
  expect(got.get(first.requestId as string)).toMatchObject({
    clientRequestId: odd,
    model: '',
    requestBody: { t: odd },
    responseBody: { t: odd, n: null },
    sanitized: null,
  });
  expect(got.get(fresh.requestId as string)).toMatchObject({ provider: odd, clientRequestId: null, requestBody: null });
});
