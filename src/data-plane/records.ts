import { getTableColumns, sql } from 'drizzle-orm';
import { log } from '../core/log.ts';
import type { Db } from '../store/db.ts';
import { type NewRequestRecord, requestRecords } from '../store/schema/index.ts';

/**
 * A JSON value that is already serialised (the request body as the client sent it, the response
 * body as it went out): embedded in the batch as is, never parsed or serialised again.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Column property → SQL column name, and the constant defaults of NOT NULL columns, from the schema. */
const COLUMNS = Object.entries(getTableColumns(requestRecords)).map(([key, col]) => ({
  key: key as keyof NewRequestRecord,
  name: JSON.stringify(col.name),
  fallback: col.hasDefault && ['number', 'boolean', 'string'].includes(typeof col.default) ? (col.default as unknown) : null,
}));

/** One batch as one JSON array with SQL column names (Dates become ISO strings, RawJson is embedded). */
const batchJson = (rows: readonly NewRequestRecord[]): string => {
  const parts: string[] = [];
  for (const row of rows) {
    let out = '';
    for (const c of COLUMNS) {
      const v: unknown = row[c.key];
      const value = v === undefined ? c.fallback : v;
      if (value === null || value === undefined) continue;
      out += `,${c.name}:${value instanceof RawJson ? value.text : JSON.stringify(value)}`;
    }
    parts.push(`{${out.slice(1)}}`);
  }
  return `[${parts.join(',')}]`;
};

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
    private readonly maxBatch = 2000,
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
      this.#flushing = Promise.resolve()
        .then(() =>
          this.db.execute(
            sql`insert into ${requestRecords} select * from jsonb_populate_recordset(null::${requestRecords}, ${batchJson(batch)}::jsonb) on conflict do nothing`,
          ),
        )
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
