import { log } from '../core/log.ts';
import type { Db } from '../store/db.ts';
import { type NewRequestRecord, requestRecords } from '../store/schema/index.ts';

/**
 * Collects request records and writes them in batches off the hot path: every `flushMs`, or at
 * once when `maxBatch` rows are waiting. A failed write is retried with the next batch; rows beyond
 * `maxQueued` are dropped with a warning rather than growing memory without bound.
 */
export class RecordSink {
  #queue: NewRequestRecord[] = [];
  #timer: ReturnType<typeof setInterval> | undefined;
  #flushing: Promise<void> | undefined;
  #dropped = 0;

  constructor(
    private readonly db: Db,
    private readonly flushMs = 250,
    private readonly maxBatch = 500,
    private readonly maxQueued = 50_000,
  ) {}

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), this.flushMs);
    this.#timer.unref?.();
  }

  add(record: NewRequestRecord): void {
    if (this.#queue.length >= this.maxQueued) {
      this.#dropped++;
      if (this.#dropped % 1000 === 1) log.warn('request records dropped: the store is not keeping up', { dropped: this.#dropped });
      return;
    }
    this.#queue.push(record);
    if (this.#queue.length >= this.maxBatch) void this.flush();
  }

  /** Writes everything queued so far; resolves when it is stored (or the store failed). */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing;
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.maxBatch);
      let ok = true;
      this.#flushing = this.db
        .insert(requestRecords)
        .values(batch)
        .onConflictDoNothing()
        .then(
          () => undefined,
          (e: unknown) => {
            ok = false;
            log.error('writing request records failed; will retry', { rows: batch.length, error: e instanceof Error ? e.message : String(e) });
            this.#queue.unshift(...batch);
          },
        )
        .finally(() => {
          this.#flushing = undefined;
        });
      await this.#flushing;
      // A failing store is retried on the next tick, not in a tight loop.
      if (!ok) return;
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}
