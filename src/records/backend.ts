import { sql } from 'drizzle-orm';
import type { RecordEntry } from '../core/records.ts';
import type { Db } from '../store/db.ts';
import { pgliteOf } from '../store/pglite.ts';
import { requestRecords } from '../store/schema/index.ts';
import { COPY_SQL, entryCsv, entryJson, INSERT_COLUMNS } from './entry.ts';

/** What the writer thread (pg-worker.ts) answers for a COPY the server refused. */
export const COPY_REFUSED = 'CopyRefused';

/**
 * Where a batch of records goes: one insert of all of them. Resolves to undefined when stored,
 * else to the error (an object with the driver's `code` when it has one).
 */
export interface RecordStore {
  insert(entries: readonly RecordEntry[]): Promise<unknown>;
  /** The same for a batch already serialised by batchJson (a spooled batch); duplicates are skipped. */
  insertJson(batch: string): Promise<unknown>;
  close?(): Promise<void>;
}

/** The driver's own error under drizzle's wrapper (whose message quotes the query and its parameters). */
export const rootCause = (e: unknown): unknown => {
  let cur = e;
  for (let i = 0; i < 5 && cur instanceof Error && cur.cause !== undefined; i++) cur = cur.cause;
  return cur;
};

/**
 * A data error: the database answered and refused these rows (SQLSTATE other than connection
 * exception 08, insufficient resources 53, operator intervention 57, system error 58). Anything
 * else — no connection, a closed pool, an unknown failure — counts as the store being down: the
 * rows stay queued (or spooled) and nothing is split, cleaned or dropped for it.
 */
export const isDataError = (e: unknown): boolean => {
  const code = (rootCause(e) as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9][0-9A-Z]{4}$/.test(code) && !/^(08|53|57|58)/.test(code);
};

/** The batch as one JSON array text with SQL column names (jsonb_populate_recordset). */
export const batchJson = (entries: readonly RecordEntry[]): string => {
  let text = '[';
  for (let i = 0; i < entries.length; i++) text += (i === 0 ? '' : ',') + entryJson(entries[i] as RecordEntry);
  return `${text}]`;
};

const UNIQUE_VIOLATION = '23505';

export const INSERT_SQL = `insert into request_records (${INSERT_COLUMNS}) select ${INSERT_COLUMNS} from jsonb_populate_recordset(null::request_records, $1::text::jsonb) on conflict do nothing`;

/** The JSON insert (jsonb_populate_recordset; duplicates skipped) through this thread's handle. */
export const jsonStore = (db: Db): RecordStore => {
  const insertJson = async (batch: string): Promise<unknown> => {
    try {
      await db.execute(
        sql`insert into ${requestRecords} (${sql.raw(INSERT_COLUMNS)}) select ${sql.raw(INSERT_COLUMNS)} from jsonb_populate_recordset(null::${requestRecords}, ${batch}::jsonb) on conflict do nothing`,
      );
      return undefined;
    } catch (e) {
      return e ?? new Error('insert failed');
    }
  };
  return { insert: (entries) => insertJson(batchJson(entries)), insertJson };
};

/**
 * The database handle of this thread (the embedded PGlite, through its own thread's client,
 * and tests on either driver). On PGlite a batch is one `COPY` of CSV lines handed over as a Blob
 * of parts (no batch string is built): it costs about half the jsonb_populate_recordset insert
 * (bench/records-insert.ts). COPY has no ON CONFLICT: a batch refused for a duplicate request id
 * (a record sent twice) is written again through the JSON insert, which skips duplicates.
 */
export const directStore = (db: Db): RecordStore => {
  const json = jsonStore(db);
  const pglite = pgliteOf(db);
  if (!pglite) return json;
  return {
    async insert(entries) {
      try {
        // entryCsv throws UnstorableText (a data error, as the database's own) for a field it must refuse.
        await pglite.exec(COPY_SQL, { blob: new Blob(entries.map(entryCsv)) });
        return undefined;
      } catch (e) {
        if ((e as { code?: unknown } | undefined)?.code === UNIQUE_VIOLATION) return json.insert(entries);
        return e ?? new Error('insert failed');
      }
    },
    insertJson: json.insertJson,
  };
};

/** What the writer thread answers per batch. */
export type WorkerReply = { id: number; ok: true } | { id: number; ok: false; code: string | undefined; name: string; message: string };

/**
 * PostgreSQL: the inserts run in a worker thread with `connections` postgres.js connections of its
 * own (stack-notes §3; one per batch the RecordWriter keeps in flight, its `writers`), so neither
 * the driver's encoding nor its protocol work is on the event loop.
 * The main thread only sends the batch text: CSV lines for `COPY … FROM STDIN`, the JSON insert for
 * a spooled batch. As on PGlite, a COPY refused for a duplicate request id is written again
 * through the JSON insert, which skips duplicates.
 */
export const workerStore = (url: string, connections = 1): RecordStore => {
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
  worker.postMessage({ type: 'open', url, connections });
  const send = (type: 'insert' | 'copy', batch: string): Promise<unknown> => {
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
      worker.postMessage({ type, id, batch });
    });
  };
  const insertJson = (batch: string): Promise<unknown> => send('insert', batch);
  return {
    async insert(entries) {
      let csv = '';
      try {
        // entryCsv throws UnstorableText (a data error, as the database's own) for a field it must refuse.
        for (const e of entries) csv += entryCsv(e);
      } catch (e) {
        return e;
      }
      const e = await send('copy', csv);
      // Refused (a duplicate request id, or a value the database will not take): the JSON insert
      // skips duplicates and answers the database's own error for the rest.
      return e instanceof Error && (e.name === COPY_REFUSED || isDataError(e)) ? insertJson(batchJson(entries)) : e;
    },
    insertJson,
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
