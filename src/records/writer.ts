import { describeError, log } from '../core/log.ts';
import type { Spool, SpooledBatch } from '../core/spool.ts';
import type { RecordEntry, RecordSink, RecordSinkStats } from '../core/records.ts';
import { batchJson, isDataError, type RecordStore, rootCause } from './backend.ts';
import type { BodyFiles } from './body-files.ts';
import { bodyChars, cleanEntry, entriesOfBatch, hasDeepBody, withoutBodies } from './entry.ts';
import { MAX_BACKOFF_MS, OMITTED, type Queued, QUEUE_FULL, ROW_CHARS, type RecordWriterOptions, SPOOL_RETRY_MS } from './writer-options.ts';

/**
 * Takes the data plane's pre-serialised records and writes them in size-bounded batches off the
 * request path: every `flushMs`, or at once when `maxBatch` rows are waiting. A store that is down
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
  #spoolRetryAt = 0;
  #stopped = false;
  #stats = { sanitized: 0, bodiesDropped: 0, dropped: 0 };
  readonly #store: RecordStore;
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
    if (this.#queue.length >= this.#maxBatch && !this.#down && !this.#flushing) void this.flush();
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
   * Moves the queue behind the batch in flight to the spool, in insert-sized batches, oldest first;
   * the first `front.rows` rows go under the name reserved for them. A spool that fails keeps the
   * rest in memory and is not tried again for SPOOL_RETRY_MS.
   */
  #spoolQueue(front?: { name: string; rows: number }): void {
    const spool = this.#spool;
    if (!spool || Date.now() < this.#spoolRetryAt) return;
    const start = this.#inflight;
    let at = start;
    try {
      while (at < this.#queue.length) {
        const end = front && at === start ? start + front.rows : at + this.#nextBatch(at).length;
        const part = this.#queue.slice(at, end);
        spool.put(this.#spoolText(part), part.length, front && at === start ? front.name : undefined);
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
      const spooled = this.#spool?.oldest();
      if (!spooled && this.#queue.length === 0) return;
      // The rows may point at bodies appended beside them: those reach the OS first.
      await this.#bodyFiles?.flush();
      const result = spooled ? await this.#writeSpooled(spooled) : await this.#writeFront();
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

  /** The batch at the front of the queue; on a store found down, what is left of it is spooled first. */
  async #writeFront(): Promise<'ok' | 'down'> {
    const batch = this.#nextBatch();
    for (const q of batch) if (!q.checked) this.#checkDepth(q);
    // Named now: spooled after a failed write, it still goes before what was spooled meanwhile.
    const name = this.#spool?.reserve();
    this.#inflight = batch.length;
    let result: 'ok' | 'down';
    try {
      result = await this.#write(batch);
    } finally {
      this.#inflight = 0;
    }
    // stop() spooled the queue, this batch included.
    if (this.#stopped) return result;
    // Only this method removes from the front; add() appends behind the batch, the spool takes from behind it.
    const left = batch.filter((q) => !q.done);
    this.#queue.splice(0, batch.length, ...left);
    for (const q of batch) if (q.done) this.#chars -= q.chars;
    this.#shedFrom = 0;
    if (result === 'down' && name !== undefined && left.length > 0) this.#spoolQueue({ name, rows: left.length });
    return result;
  }

  /**
   * A spooled batch: inserted as the text it was spooled as. Refused by the database, it is taken
   * apart and written row by row (split, cleaned, dropped as a queued batch is); what the store
   * did not take before it went down stays in the spool in its place.
   */
  async #writeSpooled(b: SpooledBatch): Promise<'ok' | 'down'> {
    const spool = this.#spool as Spool;
    const e = await this.#store.insertJson(b.text);
    if (e === undefined) {
      spool.remove(b.name);
      return 'ok';
    }
    if (!isDataError(e)) return this.#storeDown(e);
    let queued: Queued[];
    try {
      queued = entriesOfBatch(b.text).map((entry) => ({ entry, chars: 0, checked: true, done: false, counted: true }));
    } catch (err) {
      spool.remove(b.name);
      this.#stats.dropped += b.rows;
      log.error('a spooled batch of request records is not readable; dropped', { rows: b.rows, error: describeError(err) });
      return 'ok';
    }
    const result = await this.#write(queued);
    const left = queued.filter((q) => !q.done);
    if (left.length === 0) spool.remove(b.name);
    else spool.replace(b.name, batchJson(left.map((q) => q.entry)), left.length);
    return result;
  }

  /** One insert; its text lives only for its duration. */
  #insert(entries: readonly RecordEntry[]): Promise<unknown> {
    return this.#store.insert(entries);
  }

  #stored(queued: readonly Queued[], entries: readonly RecordEntry[]): 'ok' {
    for (let i = 0; i < queued.length; i++) {
      const q = queued[i] as Queued;
      q.done = true;
      // A spooled row was counted when spooled, unless cleaning flagged it only now.
      if (entries[i]?.sanitized && !(q.counted && q.entry.sanitized)) this.#stats.sanitized++;
    }
    return 'ok';
  }

  #storeDown(e: unknown): 'down' {
    this.#down = true;
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
    return 'down';
  }

  async #write(queued: readonly Queued[]): Promise<'ok' | 'down'> {
    const entries = queued.map((q) => q.entry);
    const e = await this.#insert(entries);
    if (e === undefined) return this.#stored(queued, entries);
    if (!isDataError(e)) return this.#storeDown(e);
    if (queued.length === 1) return this.#writeOne(queued[0] as Queued, e);
    log.every('records-split', 'warn', 'the database refused a batch of request records; writing it in parts', {
      rows: queued.length,
      error: describeError(rootCause(e)),
    });
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
        // The batch in flight too: if its write still lands, the next start skips its rows.
        this.#stopped = true;
        this.#inflight = 0;
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
