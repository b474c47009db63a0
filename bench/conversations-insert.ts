/**
 * Standalone: CPU µs per stored Responses answer written by the embedded conversation store
 * (PGlite in a data directory, as the gateway runs it), with `concurrency` writes in flight.
 *   bun bench/conversations-insert.ts [writes=4000] [concurrency=64]
 * Each answer is a ~0.6 KB conversation with two referable items (one input, one output message).
 *
 * Measured on the shared, loaded 2-core machine (2026-11-25), 4000 writes at 64 in flight:
 *   a transaction of two drizzle inserts per answer (the former path)   2,174–2,902 µs/write
 *   batched: one transaction per batch, jsonb_to_recordset of one text   285–491 µs/write
 * 2026-11-26 (CI running beside it), the batch as one `exec` of both statements (simple protocol,
 * dollar-quoted JSON) instead of drizzle's BEGIN + 2 inserts + COMMIT (four extended-protocol calls):
 *   writes/in flight   before (transaction)   after (one exec)
 *   2000/1             3,677 µs               1,299 µs
 *   2000/4             1,464 µs                 568 µs
 *   8000/64              248 µs                 201 µs
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DbConversationStore } from '../src/conversations/db-store.ts';
import type { StoredResponse } from '../src/data-plane/conversations.ts';
import { openStore } from '../src/store/db.ts';

const N = Number(process.argv[2] ?? 4000);
const C = Number(process.argv[3] ?? 64);
const dir = mkdtempSync(join(tmpdir(), 'conversations-insert-'));
const store = await openStore({ driver: 'pglite', dataDir: dir, sharedBuffersKb: 32768 });
const cs = new DbConversationStore(store.db, 86_400_000);
const project = crypto.randomUUID();
const answer = (i: number): StoredResponse => ({
  kind: 'response',
  id: `resp_${i}`,
  createdAt: 1_700_000_000,
  input: [{ id: `msg_in_${i}`, type: 'message', role: 'user', content: 'hello '.repeat(40) }],
  response: {
    id: `resp_${i}`,
    object: 'response',
    output: [{ id: `msg_${i}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'answer '.repeat(50) }] }],
    usage: { input_tokens: 12, output_tokens: 50 },
  },
});
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < N; i += C) await Promise.all(Array.from({ length: Math.min(C, N - i) }, (_, k) => cs.put(project, answer(i + k))));
const cpu = process.cpuUsage(c0);
console.log(
  `${N} writes, ${C} in flight: ${((cpu.user + cpu.system) / N).toFixed(0)} µs CPU/write, ${(performance.now() - t0).toFixed(0)} ms wall`,
);
await cs.stop();
await store.close();
rmSync(dir, { recursive: true, force: true });
