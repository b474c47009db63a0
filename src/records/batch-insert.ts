import { describeError, log } from '../core/log.ts';
import type { RecordEntry } from '../core/records.ts';
import type { Spool, SpooledBatch } from '../core/spool.ts';
import { batchJson, isDataError, type RecordStore, rootCause } from './backend.ts';
import { cleanEntry, entriesOfBatch, withoutBodies } from './entry.ts';
import { OMITTED, type Queued } from './writer-options.ts';

/** RecordWriter's counters (writer.ts, `stats`). */
export interface WriteStats {
  sanitized: number;
  bodiesDropped: number;
  dropped: number;
}

/**
 * One batch of the RecordWriter (writer.ts) into the store: one insert; refused by the database
 * (a data error), split in halves down to single rows, a refused single row cleaned, then stored
 * without bodies, then dropped and counted. Every row stored or dropped is marked `done`; a store
 * found down (`onDown`) stops the batch where it is, its rows not done stay for the writer to keep.
 * Several batches may be written at once (the writer's `writers`): each call only touches its own rows.
 */
export class BatchInsert {
  readonly #store: RecordStore;
  readonly #stats: WriteStats;
  readonly #onDown: (e: unknown) => void;

  constructor(store: RecordStore, stats: WriteStats, onDown: (e: unknown) => void) {
    this.#store = store;
    this.#stats = stats;
    this.#onDown = onDown;
  }

  async write(queued: readonly Queued[]): Promise<'ok' | 'down'> {
    const entries = queued.map((q) => q.entry);
    const e = await this.#store.insert(entries);
    if (e === undefined) return this.#stored(queued, entries);
    if (!isDataError(e)) return this.#down(e);
    if (queued.length === 1) return this.#writeOne(queued[0] as Queued, e);
    log.every('records-split', 'warn', 'the database refused a batch of request records; writing it in parts', {
      rows: queued.length,
      error: describeError(rootCause(e)),
    });
    const mid = queued.length >>> 1;
    if ((await this.write(queued.slice(0, mid))) === 'down') return 'down';
    return this.write(queued.slice(mid));
  }

  /**
   * A spooled batch: inserted as the text it was spooled as. Refused by the database, it is taken
   * apart and written row by row (split, cleaned, dropped as a queued batch is); what the store
   * did not take before it went down stays in the spool in its place.
   */
  async writeSpooled(spool: Spool, b: SpooledBatch): Promise<'ok' | 'down'> {
    const e = await this.#store.insertJson(b.text);
    if (e === undefined) {
      spool.remove(b.name);
      return 'ok';
    }
    if (!isDataError(e)) return this.#down(e);
    let queued: Queued[];
    try {
      queued = entriesOfBatch(b.text).map((entry) => ({ entry, chars: 0, checked: true, done: false, counted: true }));
    } catch (err) {
      spool.remove(b.name);
      this.#stats.dropped += b.rows;
      log.error('a spooled batch of request records is not readable; dropped', { rows: b.rows, error: describeError(err) });
      return 'ok';
    }
    const result = await this.write(queued);
    const left = queued.filter((q) => !q.done);
    if (left.length === 0) spool.remove(b.name);
    else spool.replace(b.name, batchJson(left.map((q) => q.entry)), left.length);
    return result;
  }

  #down(e: unknown): 'down' {
    this.#onDown(e);
    return 'down';
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

  /** A single row the database refused: cleaned, then without bodies, then dropped and counted. */
  async #writeOne(q: Queued, first: unknown): Promise<'ok' | 'down'> {
    const cleaned = cleanEntry(q.entry);
    let e = await this.#store.insert([cleaned]);
    if (e === undefined) return this.#stored([q], [cleaned]);
    if (!isDataError(e)) return this.#down(e);
    const bare = withoutBodies(cleaned, OMITTED);
    e = await this.#store.insert([bare]);
    if (e === undefined) {
      this.#stats.bodiesDropped++;
      return this.#stored([q], [bare]);
    }
    if (!isDataError(e)) return this.#down(e);
    q.done = true;
    this.#stats.dropped++;
    log.every('records-row-dropped', 'error', 'a request record could not be stored even cleaned and without bodies; dropped', {
      dropped: this.#stats.dropped,
      error: describeError(rootCause(first)),
      cleanedError: describeError(rootCause(e)),
    });
    return 'ok';
  }
}
