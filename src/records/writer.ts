import { describeError, log } from '../core/log.ts';
import type { Spool } from '../core/spool.ts';
import type { RecordEntry, RecordSink, RecordSinkStats } from '../core/records.ts';
import { batchJson, type RecordStore, rootCause } from './backend.ts';
import { BatchInsert } from './batch-insert.ts';
import type { BodyFiles } from './body-files.ts';
import { bodyChars, cleanEntry, hasDeepBody, withoutBodies } from './entry.ts';
import {
  type Flight,
  MAX_BACKOFF_MS,
  OMITTED,
  type Queued,
  QUEUE_FULL,
  ROW_CHARS,
  type RecordWriterOptions,
  SPOOL_RETRY_MS,
  type SpoolFront,
} from './writer-options.ts';

/**
 * Takes the data plane's pre-serialised records and writes them in size-bounded batches off the
 * request path: every `flushMs`, or at once when `maxBatch` rows are waiting; up to `writers`
 * batches at once (each its own insert, settled in queue order; batch-insert.ts). A store that is down
 * keeps the queue and is retried with backoff. A batch the database refuses is split (halves, then
 * single rows); a single refused row is cleaned, then stored without bodies, then dropped and
 * counted — one bad row never holds back the others. The queue is bounded (docs/records.md,
 * "Request records"). The insert itself runs where `store` runs it: on this thread (PGlite, whose
 * only owner is the main thread) or in a writer thread (PostgreSQL, backend.ts).
 *
 * With a spool, a store found down, a queue past its bounds and a shutdown deadline move the queue
 * to disk in insert-sized batches instead of holding or dropping it; spooled batches are written
 * first, oldest first, as the text they were spooled as (the insert skips a request id already
 * stored, so a batch written again after a crash is stored once). While the store is up and keeps
 * pace, nothing touches the spool: a record costs what it did without one.
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
  /** Queue entries at the front being written now (the spool takes only what is behind them). */
  #inflight = 0;
  /** The batches being written, in queue order: together the first `#inflight` queue entries. */
  #flights: Flight[] = [];
  /** Inside #writeQueue: add() may start a batch. */
  #pumping = false;
  /** A batch of this round found the store down: no more are started. */
  #halted = false;
  #spoolRetryAt = 0;
  #stopped = false;
  #stats = { sanitized: 0, bodiesDropped: 0, dropped: 0 };
  readonly #store: RecordStore;
  readonly #batches: BatchInsert;
  readonly #writers: number;
  readonly #flushMs: number;
  readonly #maxBatch: number;
  readonly #maxBatchChars: number;
  readonly #maxQueued: number;
  readonly #maxBodyChars: number;
  readonly #bodyFiles: BodyFiles | undefined;
  readonly #spool: Spool | undefined;

  constructor(store: RecordStore, opts: RecordWriterOptions = {}) {
    this.#store = store;
    this.#flushMs = opts.flushMs ?? 100;
    this.#maxBatch = opts.maxBatch ?? 500;
    this.#maxBatchChars = opts.maxBatchChars ?? 1024 * 1024;
    this.#maxQueued = opts.maxQueued ?? 50_000;
    this.#maxBodyChars = opts.maxBodyChars ?? 64 * 1024 * 1024;
    this.#bodyFiles = opts.bodyFiles;
    this.#spool = opts.spool;
    this.#writers = Math.max(1, opts.writers ?? 1);
    this.#batches = new BatchInsert(store, this.#stats, (e) => this.#storeDown(e));
  }

  get stats(): RecordSinkStats {
    const spooled = this.#spool?.stats;
    return {
      queued: this.#queue.length,
      queuedBodyChars: this.#chars,
      ...this.#stats,
      spooled: spooled?.rows ?? 0,
      spooledBytes: spooled?.bytes ?? 0,
      storeDown: this.#down,
    };
  }

  /** Writes on a timer; while the store is down, each tick moves what was queued to the spool. */
  start(): void {
    this.#timer ??= setInterval(() => {
      if (this.#flushing) {
        if (this.#down) this.#spoolQueue();
        return;
      }
      if (this.#queue.length === 0 && (this.#spool?.stats.batches ?? 0) === 0) return;
      if (Date.now() >= this.#retryAt) void this.flush();
      else this.#spoolQueue();
    }, this.#flushMs);
    this.#timer.unref?.();
  }

  add(added: RecordEntry): void {
    if (this.#queue.length >= this.#maxQueued && !this.#overflow()) {
      this.#stats.dropped++;
      log.every('records-queue-full', 'error', 'request records dropped: the record queue is full', {
        queued: this.#queue.length,
        dropped: this.#stats.dropped,
      });
      return;
    }
    const entry = this.#bodyFiles ? this.#bodyFiles.keep(added) : added;
    const chars = bodyChars(entry);
    this.#queue.push({ entry, chars, checked: chars === 0, done: false });
    this.#chars += chars;
    if (this.#chars > this.#maxBodyChars && !this.#overflow()) this.#shedBodies();
    if (this.#queue.length - this.#inflight >= this.#maxBatch && !this.#down) {
      if (this.#pumping) this.#dispatch();
      else if (!this.#flushing) void this.flush();
    }
  }

  /** Past a bound with a spool: what is queued behind the batch in flight goes to disk. Whether that made room. */
  #overflow(): boolean {
    if (!this.#spool) return false;
    const before = this.#queue.length;
    this.#spoolQueue();
    if (this.#queue.length < before)
      log.every(
        'records-spooled',
        'warn',
        'request record queue past its bound: records spooled to disk',
        { dir: this.#spool.dir, spooled: this.#spool.stats.rows },
        30_000,
      );
    return this.#queue.length < this.#maxQueued && this.#chars <= this.#maxBodyChars;
  }

  /**
   * Moves the queue behind the batches in flight to the spool, in insert-sized batches, oldest
   * first; the first rows go as `fronts` says, each part under the name reserved for it. A spool
   * that fails keeps the rest in memory and is not tried again for SPOOL_RETRY_MS.
   */
  #spoolQueue(fronts: readonly SpoolFront[] = []): void {
    const spool = this.#spool;
    if (!spool || Date.now() < this.#spoolRetryAt) return;
    const start = this.#inflight;
    let at = start;
    try {
      for (let f = 0; at < this.#queue.length; f++) {
        const front = fronts[f];
        const end = front ? at + front.rows : at + this.#nextBatch(at).length;
        const part = this.#queue.slice(at, end);
        spool.put(this.#spoolText(part), part.length, front?.name);
        at = end;
      }
    } catch (e) {
      this.#spoolRetryAt = Date.now() + SPOOL_RETRY_MS;
      log.every(
        'records-spool-failed',
        'error',
        'request records could not be spooled to disk; they stay in memory (bounded)',
        { dir: spool.dir, error: describeError(e) },
        30_000,
      );
    }
    for (const q of this.#queue.splice(start, at - start)) this.#chars -= q.chars;
    this.#shedFrom = Math.min(this.#shedFrom, start);
  }

  /** Rows as a spooled batch: what the store's insert takes, bodies as well-formed text (a file holds UTF-8). */
  #spoolText(part: Queued[]): string {
    const entries: RecordEntry[] = [];
    for (const q of part) {
      if (!q.checked) this.#checkDepth(q);
      let e = q.entry;
      if (!(e.requestBody?.isWellFormed() ?? true) || !(e.responseBody?.isWellFormed() ?? true)) e = cleanEntry(e);
      // Counted now: the row is stored with its flag, from this process or the next.
      if (e.sanitized) this.#stats.sanitized++;
      entries.push(e);
    }
    return batchJson(entries);
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
    log.every('records-bodies-shed', 'warn', 'request record queue over its body bound: bodies of the oldest queued records left out', {
      queued: this.#queue.length,
    });
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

  /** The next batch from `from`: at most maxBatch rows and (past the first row) maxBatchChars characters. */
  #nextBatch(from = 0): Queued[] {
    let chars = 0;
    let n = 0;
    for (; from + n < this.#queue.length && n < this.#maxBatch; n++) {
      const q = this.#queue[from + n] as Queued;
      chars += q.chars + ROW_CHARS;
      if (n > 0 && chars > this.#maxBatchChars) break;
    }
    return this.#queue.slice(from, from + Math.max(1, n));
  }

  /** Spooled batches first (oldest first), then the queue; on a store found down the queue goes to the spool. */
  async #drain(): Promise<void> {
    for (;;) {
      // Stopped (a flush() that waited for the drain stop() gave up on): the spool is the next start's.
      if (this.#stopped) return;
      const spooled = this.#spool?.oldest();
      if (!spooled && this.#queue.length === 0) return;
      // The rows may point at bodies appended beside them: those reach the OS first.
      await this.#bodyFiles?.flush();
      const result = spooled ? await this.#batches.writeSpooled(this.#spool as Spool, spooled) : await this.#writeQueue();
      if (this.#stopped) return;
      if (result === 'down') {
        this.#backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(this.#flushMs, this.#backoffMs * 2));
        this.#retryAt = Date.now() + this.#backoffMs;
        this.#spoolQueue();
        return;
      }
      if (this.#down) log.info('the request record store is available again', { queued: this.#queue.length });
      this.#down = false;
      this.#backoffMs = 0;
      this.#retryAt = 0;
      // Back to the event loop between batches: an insert on this thread (PGlite) runs
      // synchronously, and requests waiting for I/O must not queue behind a whole backlog.
      if (this.#queue.length > 0 || (this.#spool?.stats.batches ?? 0) > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Batches from the front of the queue, up to `writers` at once (add() starts one when a full
   * batch waits), settled in queue order: only the front is ever removed from. Until the queue is
   * written, a batch finds the store down, or spooled batches wait (they go first).
   */
  async #writeQueue(): Promise<'ok' | 'down'> {
    this.#pumping = true;
    this.#halted = false;
    try {
      this.#dispatch();
      for (let f = this.#flights[0]; f; f = this.#flights[0]) {
        const result = await f.done;
        // stop() spooled the queue, the batches in flight included.
        if (this.#stopped) return result;
        if (result === 'down') return await this.#settleDown();
        this.#flights.shift();
        this.#queue.splice(0, f.batch.length);
        for (const q of f.batch) this.#chars -= q.chars;
        this.#inflight -= f.batch.length;
        this.#shedFrom = Math.max(0, this.#shedFrom - f.batch.length);
        // Back to the event loop between batches: an insert on this thread (PGlite) runs
        // synchronously, and requests waiting for I/O must not queue behind a whole backlog.
        if (this.#queue.length > this.#inflight) await new Promise<void>((resolve) => setImmediate(resolve));
        this.#dispatch();
      }
      return 'ok';
    } finally {
      this.#pumping = false;
    }
  }

  /** Starts batches behind those in flight, up to `writers`, while the store is up and nothing is spooled. */
  #dispatch(): void {
    while (
      this.#flights.length < this.#writers &&
      this.#queue.length > this.#inflight &&
      !this.#halted &&
      !this.#stopped &&
      (this.#spool?.stats.batches ?? 0) === 0
    ) {
      const batch = this.#nextBatch(this.#inflight);
      for (const q of batch) if (!q.checked) this.#checkDepth(q);
      this.#inflight += batch.length;
      // Named now: spooled after a failed write, it still goes before what was spooled meanwhile.
      this.#flights.push({ batch, name: this.#spool?.reserve(), done: this.#fly(batch) });
    }
  }

  async #fly(batch: readonly Queued[]): Promise<'ok' | 'down'> {
    // The rows may point at bodies appended beside them: those reach the OS first.
    await this.#bodyFiles?.flush();
    return this.#batches.write(batch);
  }

  /**
   * A batch found the store down: none is started; once every batch in flight is back, what each
   * left unwritten stays at the front, in queue order, and goes to the spool under its own name.
   */
  async #settleDown(): Promise<'down'> {
    await Promise.all(this.#flights.map((f) => f.done));
    if (this.#stopped) return 'down';
    const fronts: SpoolFront[] = [];
    const left: Queued[] = [];
    for (const f of this.#flights) {
      const rest = f.batch.filter((q) => !q.done);
      for (const q of f.batch) if (q.done) this.#chars -= q.chars;
      left.push(...rest);
      if (f.name !== undefined && rest.length > 0) fronts.push({ name: f.name, rows: rest.length });
    }
    this.#queue.splice(0, this.#inflight, ...left);
    this.#flights = [];
    this.#inflight = 0;
    this.#shedFrom = 0;
    if (fronts.length > 0) this.#spoolQueue(fronts);
    return 'down';
  }

  #storeDown(e: unknown): void {
    this.#down = true;
    this.#halted = true;
    const where = this.#spool ? 'records are spooled to disk' : 'records stay queued';
    log.every(
      'records-store-down',
      'warn',
      `the request record store is unavailable; ${where} and are retried`,
      {
        queued: this.#queue.length,
        error: describeError(rootCause(e)),
      },
      30_000,
    );
  }

  /**
   * Stops the timer and writes everything queued, retrying a store that is down until `withinMs`
   * has passed; rows still queued then go to the spool (written at the next start), or without one
   * are counted as dropped. Spooled batches not written by then stay spooled. The writer thread (if
   * any) is closed.
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
      if (this.#spool) {
        // The batches in flight too: if their writes still land, the next start skips their rows.
        this.#stopped = true;
        this.#inflight = 0;
        this.#flights = [];
        const rows = this.#queue.length;
        this.#spoolRetryAt = 0;
        this.#spoolQueue();
        if (this.#queue.length === 0) {
          log.warn('request records not written before the shutdown deadline were spooled; they are written at the next start', {
            rows,
            dir: this.#spool.dir,
          });
          return;
        }
      }
      this.#stats.dropped += this.#queue.length;
      log.error('request records not written before the shutdown deadline', { rows: this.#queue.length });
    } finally {
      await this.#bodyFiles?.close();
      await this.#store.close?.().catch(() => undefined);
    }
  }
}
