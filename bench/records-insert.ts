/**
 * Standalone: CPU µs per request record written to the embedded store (PGlite in a data directory,
 * as the gateway runs it), through the real RecordWriter, per store variant, in paired interleaved
 * rounds (each round runs every variant once, in rotating order; the median per variant is shown).
 *   bun bench/records-insert.ts [rounds=15] [rows-per-batch=500] [variant,…]
 * Rows carry ~1.2 KB of bodies like a small chat request/answer. CPU is this process's (all threads).
 *
 * Measured on the shared 2-core machine (2026-11-23, medians of 15 rounds of 500 rows):
 *   json  (jsonb_populate_recordset of one JSON array text, the former path)   60.6 µs/row
 *   copy  (COPY … FROM '/dev/blob' of CSV lines, the current path)             32.9 µs/row
 *   copy, no bodies (GATEWAY_RECORD_BODIES=0)                                   17.9 µs/row
 * Earlier standalone SQL variants (same machine): WAL settings (synchronous_commit, full_page_writes,
 * wal_level=minimal), UNLOGGED and fewer indexes moved nothing measurable; with COPY, json or text
 * body columns instead of jsonb save only ~3 µs/row (records keep jsonb bodies).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordEntry } from '../src/core/records.ts';
import { directStore, jsonStore, type RecordStore } from '../src/records/backend.ts';
import { BodyFiles } from '../src/records/body-files.ts';
import { entryOf } from '../src/records/entry.ts';
import { RecordWriter } from '../src/records/writer.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { sampleRecordRow } from './lib/record-sample.ts';

const ROUNDS = Number(process.argv[2] ?? 15);
const BATCH = Number(process.argv[3] ?? 500);
const ONLY = process.argv[4]?.split(',');

const reqBody = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'x'.repeat(300) },
    { role: 'user', content: 'y'.repeat(300) },
  ],
  max_tokens: 100,
});
const resBody = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'z'.repeat(350) }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
});
const entry = (bodies: boolean): RecordEntry =>
  entryOf({
    ...sampleRecordRow({ requestId: crypto.randomUUID(), clientRequestId: `c-${Math.random()}` }),
    requestBody: bodies ? reqBody : undefined,
    responseBody: bodies ? resBody : undefined,
  });

interface Variant {
  name: string;
  store: (s: Store) => RecordStore;
  bodies: boolean;
  sharedBuffersKb?: number;
  /** Bodies kept beside the rows (src/records/body-files.ts), as the gateway does with a data directory. */
  beside?: boolean;
}
const all: Variant[] = [
  { name: 'json', store: (s) => jsonStore(s.db), bodies: true },
  { name: 'copy', store: (s) => directStore(s.db), bodies: true },
  { name: 'copy-nobodies', store: (s) => directStore(s.db), bodies: false },
  { name: 'copy-beside', store: (s) => directStore(s.db), bodies: true, beside: true },
  { name: 'copy-sb128', store: (s) => directStore(s.db), bodies: true, sharedBuffersKb: 131072 },
  { name: 'copy-sb16', store: (s) => directStore(s.db), bodies: true, sharedBuffersKb: 16384 },
];
const variants = ONLY ? all.filter((v) => ONLY.includes(v.name)) : all;
const dirs: string[] = [];
const runs = await Promise.all(
  variants.map(async (v) => {
    const dir = mkdtempSync(join(tmpdir(), 'records-insert-'));
    dirs.push(dir);
    const store = await openStore({ driver: 'pglite', dataDir: dir, sharedBuffersKb: v.sharedBuffersKb ?? 32768 });
    const bodyFiles = v.beside ? new BodyFiles(join(dir, 'record-bodies')) : undefined;
    return {
      v,
      store,
      writer: new RecordWriter(v.store(store), { maxBatch: BATCH * 2, ...(bodyFiles ? { bodyFiles } : {}) }),
      us: [] as number[],
    };
  }),
);
for (let r = 0; r < ROUNDS + 2; r++) {
  for (let k = 0; k < runs.length; k++) {
    const run = runs[(k + r) % runs.length] as (typeof runs)[number];
    const entries = Array.from({ length: BATCH }, () => entry(run.v.bodies));
    Bun.gc(true);
    const c0 = process.cpuUsage();
    for (const e of entries) run.writer.add(e);
    await run.writer.flush();
    const c = process.cpuUsage(c0);
    if (r >= 2) run.us.push((c.user + c.system) / BATCH);
  }
}
const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1] ?? 0;
for (const run of runs) {
  await run.writer.stop();
  console.log(`${run.v.name.padEnd(16)} ${median(run.us).toFixed(1)} µs/row  (stored ${JSON.stringify(run.writer.stats)})`);
  await run.store.close();
}
for (const d of dirs) rmSync(d, { recursive: true, force: true });
