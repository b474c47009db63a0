import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RemoteRecordSink } from '../src/data-plane/remote/remote-sink.ts';
import type { RecordEntry } from '../src/core/records.ts';

/**
 * The separate data plane's record sink under load. While one batch is being sent, requests keep
 * adding records: no further flush is started per request meanwhile (that piled up one waiter per
 * request, each listing the spool again), and what arrived goes in full batches once the send
 * ends, or with the next interval — not as a trickle of small pushes right after every push (each
 * push costs the management plane a token check, an account lookup and a COPY). Every record is
 * sent once. The management plane's side of PushRecords is covered with real processes in
 * dataplanes-remote.test.ts.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const dataDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'remote-sink-'));
  dirs.push(d);
  return d;
};

const entry = (i: number): RecordEntry => ({
  row: { request_id: `r-${i}`, endpoint: '/v1/chat/completions' },
  requestBody: null,
  responseBody: null,
  sanitized: null,
});
const idsOf = (json: string): string[] => (JSON.parse(json) as { request_id: string }[]).map((r) => r.request_id);

test('records added while a batch is in flight start no flush per request, and go in full batches once it ends, each once', async () => {
  const sent: string[][] = [];
  let release: (() => void) | undefined;
  const sink = new RemoteRecordSink(
    async (json) => {
      sent.push(idsOf(json));
      // The first push is slow (a busy management plane); the rest answer at once.
      if (sent.length === 1) await new Promise<void>((r) => (release = r));
      return 'ok';
    },
    dataDir(),
    { flushMs: 60_000, maxBatch: 100 },
  );
  const flush = sink.flush.bind(sink);
  let flushes = 0;
  sink.flush = () => {
    flushes++;
    return flush();
  };
  for (let i = 0; i < 100; i++) sink.add(entry(i));
  expect(flushes).toBe(1);
  await Bun.sleep(5);
  expect(sent).toHaveLength(1);
  // 2,450 more arrive while the first batch is in flight.
  for (let i = 100; i < 2550; i++) sink.add(entry(i));
  expect(flushes).toBe(1);
  release?.();
  await sink.flush();
  // The batch in flight, then the 2,450 that arrived meanwhile in full batches of 100 (and the half one).
  expect(sent.map((b) => b.length)).toEqual([100, ...Array.from({ length: 24 }, () => 100), 50]);
  const all = sent.flat();
  expect(all).toHaveLength(2550);
  expect(new Set(all).size).toBe(2550);
  expect(Math.max(...sent.map((b) => b.length))).toBeLessThanOrEqual(100);
  expect(sink.stats).toMatchObject({ queued: 0, sent: 2550, spooledBatches: 0 });
  await sink.stop();
});

test('a management plane that does not take the batch: it is spooled whole and re-sent first, oldest first', async () => {
  const dir = dataDir();
  let up = false;
  const sent: string[][] = [];
  const sink = new RemoteRecordSink(
    async (json) => {
      if (!up) return 'retry';
      sent.push(idsOf(json));
      return 'ok';
    },
    dir,
    { flushMs: 60_000, maxBatch: 10 },
  );
  for (let i = 0; i < 25; i++) sink.add(entry(i));
  await sink.flush();
  expect(sent).toHaveLength(0);
  expect(readdirSync(join(dir, 'record-spool')).filter((f) => f.endsWith('.json'))).toHaveLength(3);
  up = true;
  for (let i = 25; i < 30; i++) sink.add(entry(i));
  await sink.flush();
  expect(sent.flat()).toEqual(Array.from({ length: 30 }, (_, i) => `r-${i}`));
  expect(readdirSync(join(dir, 'record-spool')).filter((f) => f.endsWith('.json'))).toHaveLength(0);
  await sink.stop();
});

test('a steady trickle of records is sent once per interval, not as a push after every push', async () => {
  const sent: number[] = [];
  const sink = new RemoteRecordSink(
    async (json) => {
      sent.push(idsOf(json).length);
      // Each push takes a while (a management plane writing the batch).
      await Bun.sleep(15);
      return 'ok';
    },
    dataDir(),
    { flushMs: 100, maxBatch: 1000 },
  );
  sink.start();
  let i = 0;
  // ~2 records every millisecond for 600 ms: about 6 intervals.
  const producer = setInterval(() => {
    sink.add(entry(i++));
    sink.add(entry(i++));
  }, 1);
  await Bun.sleep(600);
  clearInterval(producer);
  await sink.stop();
  expect(sent.reduce((a, b) => a + b, 0)).toBe(i);
  // One push per interval (≈ 6, and the final one at stop); sending every trickle at once made
  // a push every ~15 ms here (≈ 40).
  expect(sent.length).toBeLessThanOrEqual(12);
});
