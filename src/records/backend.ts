import { sql } from 'drizzle-orm';
import type { Db } from '../store/db.ts';
import { requestRecords } from '../store/schema/index.ts';

/**
 * Where a batch of records goes: one JSON array text (SQL column names) → one insert. Resolves to
 * undefined when stored, else to the error (an object with the driver's `code` when it has one).
 */
export interface RecordStore {
  insert(batchJson: string): Promise<unknown>;
  close?(): Promise<void>;
}

export const INSERT_SQL =
  'insert into request_records select * from jsonb_populate_recordset(null::request_records, $1::text::jsonb) on conflict do nothing';

/**
 * The database handle of this thread (the embedded PGlite, whose single owner is the main thread,
 * and tests on either driver).
 */
export const directStore = (db: Db): RecordStore => ({
  async insert(batchJson) {
    try {
      await db.execute(sql`insert into ${requestRecords} select * from jsonb_populate_recordset(null::${requestRecords}, ${batchJson}::jsonb) on conflict do nothing`);
      return undefined;
    } catch (e) {
      return e ?? new Error('insert failed');
    }
  },
});

/** What the writer thread answers per batch. */
export type WorkerReply = { id: number; ok: true } | { id: number; ok: false; code: string | undefined; name: string; message: string };

/**
 * PostgreSQL: the inserts run in a worker thread with its own postgres.js connection
 * (stack-notes §3), so neither the driver's encoding nor its protocol work is on the event loop.
 * The main thread only sends the batch text.
 */
export const workerStore = (url: string): RecordStore => {
  const worker = new Worker(new URL('./pg-worker.ts', import.meta.url).href);
  (worker as Worker & { unref?(): void }).unref?.();
  const pending = new Map<number, (r: WorkerReply) => void>();
  let next = 1;
  let closed = false;
  worker.addEventListener('message', (ev: MessageEvent<WorkerReply>) => {
    const done = pending.get(ev.data.id);
    pending.delete(ev.data.id);
    done?.(ev.data);
  });
  worker.addEventListener('error', () => {
    for (const [, done] of pending) done({ id: 0, ok: false, code: undefined, name: 'Error', message: 'record writer thread failed' });
    pending.clear();
  });
  worker.postMessage({ type: 'open', url });
  return {
    insert(batchJson) {
      if (closed) return Promise.resolve(new Error('record writer closed'));
      const id = next++;
      return new Promise<unknown>((resolve) => {
        pending.set(id, (r) => {
          if (r.ok) return resolve(undefined);
          const e = new Error(r.message);
          e.name = r.name;
          if (r.code !== undefined) Object.assign(e, { code: r.code });
          resolve(e);
        });
        worker.postMessage({ type: 'insert', id, batch: batchJson });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 2_000);
        worker.addEventListener('message', (ev: MessageEvent<{ type?: string }>) => {
          if (ev.data.type === 'closed') {
            clearTimeout(t);
            resolve();
          }
        });
        worker.postMessage({ type: 'close' });
      });
      worker.terminate();
    },
  };
};
