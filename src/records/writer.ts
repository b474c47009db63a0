import { describeError, log } from '../core/log.ts';
import type { RecordEntry, RecordSink, RecordSinkStats } from '../data-plane/records.ts';
import type { RecordStore } from './backend.ts';
import type { BodyFiles } from './body-files.ts';
import { bodyChars, cleanEntry, hasDeepBody, withoutBodies } from './entry.ts';

/** What a body becomes when it cannot be stored or kept. */
const OMITTED = '{"omitted":"not stored"}';
const QUEUE_FULL = '{"omitted":"record queue full"}';

// ---- error classes ------------------------------------------------------------------------------

/** The driver's own error under drizzle's wrapper (whose message quotes the query and its parameters). */
const rootCause = (e: unknown): unknown => {
  let cur = e;
  for (let i = 0; i < 5 && cur instanceof Error && cur.cause !== undefined; i++) cur = cur.cause;
  return cur;
};

/**
 * A data error: the database answered and refused these rows (SQLSTATE other than connection
 * exception 08, insufficient resources 53, operator intervention 57, system error 58). Anything
 * else — no connection, a closed pool, an unknown failure — counts as the store being down: the
 * rows stay queued and nothing is split, cleaned or dropped for it.
 */
const isDataError = (e: unknown): boolean => {
  const code = (rootCause(e) as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9][0-9A-Z]{4}$/.test(code) && !/^(08|53|57|58)/.test(code);
};

// ---- the writer ---------------------------------------------------------------------------------

interface Queued {
  entry: RecordEntry;
  /** Characters of bodies this entry holds (0 once its bodies were dropped). */
  chars: number;
  /** Bodies checked for depth (once, off the request path). */
  checked: boolean;
  done: boolean;
}

export interface RecordWriterOptions {
  flushMs?: number;
  /** Rows per insert at most. */
  maxBatch?: number;
  /** Characters per insert at most (a single larger row still goes alone). */
  maxBatchChars?: number;
  /** Rows kept in memory at most; newer rows past it are dropped and counted. */
  maxQueued?: number;
  /** Characters of request/response bodies kept in memory at most; past it the oldest rows lose their bodies. */
  maxBodyChars?: number;
  /** Bodies kept beside the rows (body-files.ts) rather than in them: taken at once, never queued. */
  bodyFiles?: BodyFiles;
}

const MAX_BACKOFF_MS = 2_000;
/** What a row's columns other than its bodies count for against maxBatchChars (their text is ~400–600 characters). */
const ROW_CHARS = 512;

/**
 * Takes the data plane's pre-serialised records and writes them in size-bounded batches off the
 * request path: every `flushMs`, or at once when `maxBatch` rows are waiting. A store that is down
 * keeps the queue and is retried with backoff. A batch the database refuses is split (halves, then
 * single rows); a single refused row is cleaned, then stored without bodies, then dropped and
 * counted — one bad row never holds back the others. The queue is bounded (docs/operating.md,
 * "Request records"). The insert itself runs where `store` runs it: on this thread (PGlite, whose
 * only owner is the main thread) or in a writer thread (PostgreSQL, backend.ts).
 */
export class RecordWriter implements RecordSink {
  #queue: Queued[] = [];
  #chars = 0;
  /** Queue entries before this index hold no bodies (shedding resumes here). */
  #shedFrom = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #flushing: Promise<void> | undefined;
  #backoffMs = 0;
  #retryAt = 0;
  #down = false;
  #stats = { sanitized: 0, bodiesDropped: 0, dropped: 0 };
  readonly #store: RecordStore;
  readonly #flushMs: number;
  readonly #maxBatch: number;
  readonly #maxBatchChars: number;
  readonly #maxQueued: number;
  readonly #maxBodyChars: number;
  readonly #bodyFiles: BodyFiles | undefined;

  constructor(store: RecordStore, opts: RecordWriterOptions = {}) {
    this.#store = store;
    this.#flushMs = opts.flushMs ?? 100;
    this.#maxBatch = opts.maxBatch ?? 500;
    this.#maxBatchChars = opts.maxBatchChars ?? 1024 * 1024;
    this.#maxQueued = opts.maxQueued ?? 50_000;
    this.#maxBodyChars = opts.maxBodyChars ?? 64 * 1024 * 1024;
    this.#bodyFiles = opts.bodyFiles;
  }

  get stats(): RecordSinkStats {
    return { queued: this.#queue.length, queuedBodyChars: this.#chars, ...this.#stats, storeDown: this.#down };
  }

  start(): void {
    this.#timer ??= setInterval(() => {
      if (this.#queue.length > 0 && Date.now() >= this.#retryAt) void this.flush();
    }, this.#flushMs);
    this.#timer.unref?.();
  }

  add(added: RecordEntry): void {
    if (this.#queue.length >= this.#maxQueued) {
      this.#stats.dropped++;
      log.every('records-queue-full', 'error', 'request records dropped: the record queue is full', { queued: this.#queue.length, dropped: this.#stats.dropped });
      return;
    }
    const entry = this.#bodyFiles ? this.#bodyFiles.keep(added) : added;
    const chars = bodyChars(entry);
    this.#queue.push({ entry, chars, checked: chars === 0, done: false });
    this.#chars += chars;
    if (this.#chars > this.#maxBodyChars) this.#shedBodies();
    if (this.#queue.length >= this.#maxBatch && !this.#down && !this.#flushing) void this.flush();
  }

  /** Past the body bound: the oldest queued rows lose their bodies (they are still recorded). */
  #shedBodies(): void {
    for (; this.#shedFrom < this.#queue.length && this.#chars > this.#maxBodyChars; this.#shedFrom++) {
      const q = this.#queue[this.#shedFrom] as Queued;
      if (q.chars === 0) continue;
      q.entry = withoutBodies(q.entry, QUEUE_FULL);
      this.#chars -= q.chars;
      q.chars = 0;
      this.#stats.bodiesDropped++;
    }
    log.every('records-bodies-shed', 'warn', 'request record queue over its body bound: bodies of the oldest queued records left out', { queued: this.#queue.length });
  }

  #checkDepth(q: Queued): void {
    q.checked = true;
    if (!hasDeepBody(q.entry)) return;
    q.entry = withoutBodies(q.entry, OMITTED);
    this.#chars -= q.chars;
    q.chars = 0;
    this.#stats.bodiesDropped++;
  }

  /** Writes everything queued so far; resolves when it is stored or the store was found down. */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing;
    this.#flushing = this.#drain().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  /** The next batch from the front: at most maxBatch rows and (past the first row) maxBatchChars characters. */
  #nextBatch(): Queued[] {
    let chars = 0;
    let n = 0;
    for (; n < this.#queue.length && n < this.#maxBatch; n++) {
      const q = this.#queue[n] as Queued;
      chars += q.chars + ROW_CHARS;
      if (n > 0 && chars > this.#maxBatchChars) break;
    }
    return this.#queue.slice(0, Math.max(1, n));
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#nextBatch();
      for (const q of batch) if (!q.checked) this.#checkDepth(q);
      // The rows of this batch may point at bodies appended beside them: those reach the OS first.
      await this.#bodyFiles?.flush();
      const result = await this.#write(batch);
      // Only this method removes from the front; add() appends behind the batch.
      this.#queue.splice(0, batch.length, ...batch.filter((q) => !q.done));
      for (const q of batch) if (q.done) this.#chars -= q.chars;
      this.#shedFrom = 0;
      if (result === 'down') {
        this.#backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(this.#flushMs, this.#backoffMs * 2));
        this.#retryAt = Date.now() + this.#backoffMs;
        return;
      }
      if (this.#down) log.info('the request record store is available again', { queued: this.#queue.length });
      this.#down = false;
      this.#backoffMs = 0;
      this.#retryAt = 0;
      // Back to the event loop between batches: an insert on this thread (PGlite) runs
      // synchronously, and requests waiting for I/O must not queue behind a whole backlog.
      if (this.#queue.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** One insert; its text lives only for its duration. */
  #insert(entries: readonly RecordEntry[]): Promise<unknown> {
    return this.#store.insert(entries);
  }

  #stored(queued: readonly Queued[], entries: readonly RecordEntry[]): 'ok' {
    for (const q of queued) q.done = true;
    for (const e of entries) if (e.sanitized) this.#stats.sanitized++;
    return 'ok';
  }

  #storeDown(e: unknown): 'down' {
    this.#down = true;
    log.every('records-store-down', 'warn', 'the request record store is unavailable; records stay queued and are retried', {
      queued: this.#queue.length,
      error: describeError(rootCause(e)),
    }, 30_000);
    return 'down';
  }

  async #write(queued: readonly Queued[]): Promise<'ok' | 'down'> {
    const entries = queued.map((q) => q.entry);
    const e = await this.#insert(entries);
    if (e === undefined) return this.#stored(queued, entries);
    if (!isDataError(e)) return this.#storeDown(e);
    if (queued.length === 1) return this.#writeOne(queued[0] as Queued, e);
    log.every('records-split', 'warn', 'the database refused a batch of request records; writing it in parts', { rows: queued.length, error: describeError(rootCause(e)) });
    const mid = queued.length >>> 1;
    if ((await this.#write(queued.slice(0, mid))) === 'down') return 'down';
    return this.#write(queued.slice(mid));
  }

  /** A single row the database refused: cleaned, then without bodies, then dropped and counted. */
  async #writeOne(q: Queued, first: unknown): Promise<'ok' | 'down'> {
    const cleaned = cleanEntry(q.entry);
    let e = await this.#insert([cleaned]);
    if (e === undefined) return this.#stored([q], [cleaned]);
    if (!isDataError(e)) return this.#storeDown(e);
    const bare = withoutBodies(cleaned, OMITTED);
    e = await this.#insert([bare]);
    if (e === undefined) {
      this.#stats.bodiesDropped++;
      return this.#stored([q], [bare]);
    }
    if (!isDataError(e)) return this.#storeDown(e);
    q.done = true;
    this.#stats.dropped++;
    log.every('records-row-dropped', 'error', 'a request record could not be stored even cleaned and without bodies; dropped', {
      dropped: this.#stats.dropped,
      error: describeError(rootCause(first)),
      cleanedError: describeError(rootCause(e)),
    });
    return 'ok';
  }

  /**
   * Stops the timer and writes everything queued, retrying a store that is down until `withinMs`
   * has passed; rows still queued then are counted as dropped. The writer thread (if any) is closed.
   */
  async stop(withinMs = 5_000): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const deadline = Date.now() + withinMs;
    try {
      for (;;) {
        const left = deadline - Date.now();
        if (left > 0) await Promise.race([this.flush(), Bun.sleep(left)]);
        if (this.#queue.length === 0) return;
        if (Date.now() >= deadline) break;
        await Bun.sleep(Math.min(Math.max(this.#backoffMs, 50), deadline - Date.now()));
      }
      this.#stats.dropped += this.#queue.length;
      log.error('request records not written before the shutdown deadline', { rows: this.#queue.length });
    } finally {
      await this.#bodyFiles?.close();
      await this.#store.close?.().catch(() => undefined);
    }
  }
}
