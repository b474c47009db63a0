import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RemoteRecordSink } from '../src/data-plane/remote/remote-sink.ts';
import type { RecordEntry } from '../src/data-plane/records.ts';

/**
 * The separate data plane's record sink under load: while one batch is being sent, requests keep
 * adding records past the batch size. The flush in progress takes them all (batches of at most
 * maxBatch, each record once); no further flush is started per request meanwhile (that piled up
 * one waiter per request, each listing the spool again: measured at ~25 % of a data plane's CPU).
 * The management plane's side of PushRecords is covered with real processes in
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

const entry = (i: number): RecordEntry => ({ fields: `"request_id":"r-${i}","endpoint":"/v1/chat/completions"`, requestBody: null, responseBody: null, sanitized: null });
const idsOf = (json: string): string[] => (JSON.parse(json) as { request_id: string }[]).map((r) => r.request_id);

test('records added while a batch is in flight are sent by that flush, in bounded batches, each once, with no flush per request', async () => {
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
