import type { EmbeddedFiles } from './embedded.ts';
import { fromWireError, type OpenPglite, type PgliteReply, type PgliteRequest } from './pglite-protocol.ts';

/**
 * The embedded store as the main thread holds it: the calls drizzle's PGlite driver and the
 * gateway make of a PGlite client (`query`, `exec`, `transaction`, `listen`, `close`), each a
 * message to the owner thread (pglite-worker.ts), which alone runs PGlite. Results cross as
 * structured clones (rows of strings, numbers, booleans, parsed JSON, bytes); errors keep their
 * message and PostgreSQL fields (`code`, `constraint`, …).
 *
 * drizzle passes parsers (functions) with every query: the owner applies the same ones (drizzle's
 * own, keeping timestamps, intervals and dates as text), as functions cannot be sent.
 */

/** What the remote takes instead of PGlite's query options: only the row mode crosses. */
interface QueryOptions {
  rowMode?: 'array' | 'object';
}

export interface RemoteResults {
  rows: unknown[];
  fields: { name: string; dataTypeID: number }[];
  affectedRows?: number;
}

type Ask = (m: DistributiveOmit<PgliteRequest, 'id'>) => Promise<unknown>;
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

const isResults = (v: unknown): v is RemoteResults => typeof v === 'object' && v !== null && 'rows' in v && Array.isArray(v.rows);
const asResults = (v: unknown): RemoteResults => {
  if (!isResults(v)) throw new Error('the embedded store answered a query without rows');
  return v;
};
const asResultList = (v: unknown): RemoteResults[] => (Array.isArray(v) ? v.map(asResults) : []);

/** `query` and `exec` on the store itself (`tx` undefined) or inside one open transaction. */
class RemoteQueries {
  constructor(
    private readonly send: Ask,
    private readonly tx: number | undefined,
  ) {}

  async query(text: string, params: unknown[] = [], options: QueryOptions = {}): Promise<RemoteResults> {
    return asResults(
      await this.send({
        op: 'query',
        text,
        params,
        rowMode: options.rowMode ?? 'object',
        ...(this.tx === undefined ? {} : { tx: this.tx }),
      }),
    );
  }

  async exec(text: string, options: { blob?: Blob } = {}): Promise<RemoteResults[]> {
    return asResultList(
      await this.send({
        op: 'exec',
        text,
        ...(options.blob ? { blob: options.blob } : {}),
        ...(this.tx === undefined ? {} : { tx: this.tx }),
      }),
    );
  }
}

/** Queries of one open transaction (what drizzle's transaction session calls). */
export class RemoteTransaction extends RemoteQueries {}

export class PgliteRemote {
  /** Marks the embedded store for `pgliteOf` (store/pglite.ts). */
  readonly embedded = true;
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly #listeners = new Map<number, (payload: string) => void>();
  #next = 1;
  #closed = false;

  private constructor() {
    this.#worker = new Worker(new URL('./pglite-worker.ts', import.meta.url).href);
    this.#worker.addEventListener('message', (ev: MessageEvent<PgliteReply>) => {
      const m = ev.data;
      if ('notify' in m) {
        this.#listeners.get(m.notify)?.(m.payload);
        return;
      }
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (!p) return;
      if (m.ok) p.resolve(m.value);
      else p.reject(fromWireError(m.error));
    });
    this.#worker.addEventListener('error', (ev) => {
      // The owner thread died: nothing in flight will be answered.
      const e = new Error(`PGlite is closed: the embedded store's thread failed (${ev.message})`);
      // Nothing will answer again: later calls fail at once (the store reads as unavailable).
      this.#closed = true;
      for (const p of this.#pending.values()) p.reject(e);
      this.#pending.clear();
    });
  }

  /** Starts the owner thread and opens (and, unless told not to, migrates) the store there. */
  static async open(o: OpenPglite, embedded: EmbeddedFiles | undefined): Promise<PgliteRemote> {
    const remote = new PgliteRemote();
    try {
      await remote.ask({ op: 'open', open: embedded ? { ...o, embedded } : o });
    } catch (e) {
      remote.#worker.terminate();
      throw e;
    }
    return remote;
  }

  readonly ask: Ask = (m) => {
    if (this.#closed) return Promise.reject(new Error('PGlite is closed'));
    const id = this.#next++;
    return new Promise<unknown>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // The spread keeps the discriminant: a PgliteRequest with its id.
      this.#worker.postMessage({ ...m, id } satisfies PgliteRequest);
    });
  };

  /** Queries on the store outside any transaction. */
  readonly #queries = new RemoteQueries((m) => this.ask(m), undefined);

  query(text: string, params?: unknown[], options?: QueryOptions): Promise<RemoteResults> {
    return this.#queries.query(text, params, options);
  }

  exec(text: string, options?: { blob?: Blob }): Promise<RemoteResults[]> {
    return this.#queries.exec(text, options);
  }

  /** Runs `fn` in one transaction of the store: committed when it resolves, rolled back when it throws. */
  async transaction<T>(fn: (tx: RemoteTransaction) => Promise<T>): Promise<T> {
    const id = await this.ask({ op: 'begin' });
    if (typeof id !== 'number') throw new Error('the embedded store did not open a transaction');
    let result: T;
    try {
      result = await fn(new RemoteTransaction(this.ask, id));
    } catch (e) {
      // Rolled back; the caller sees its own error, not a failure of the rollback.
      await this.ask({ op: 'end', tx: id, commit: false }).catch(() => undefined);
      throw e;
    }
    await this.ask({ op: 'end', tx: id, commit: true });
    return result;
  }

  /** LISTEN on `channel`; resolves to the function that stops it. */
  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    const listener = await this.ask({ op: 'listen', channel });
    if (typeof listener !== 'number') throw new Error('the embedded store did not start listening');
    this.#listeners.set(listener, onNotify);
    return async () => {
      this.#listeners.delete(listener);
      await this.ask({ op: 'unlisten', listener });
    };
  }

  /** Closes the store and ends its thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.ask({ op: 'close' });
    } finally {
      this.#closed = true;
      this.#worker.terminate();
      // What the thread had not answered when it ended never will be: refuse it as a closed store
      // (a shutdown waiting on such a query would otherwise hang).
      const e = new Error('PGlite is closed');
      for (const p of this.#pending.values()) p.reject(e);
      this.#pending.clear();
    }
  }
}
