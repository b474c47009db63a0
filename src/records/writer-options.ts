import type { RecordEntry } from '../core/records.ts';
import type { Spool } from '../core/spool.ts';
import type { BodyFiles } from './body-files.ts';

/** RecordWriter's (writer.ts) options, bounds and queue entries. */

/** What a body becomes when it cannot be stored or kept. */
export const OMITTED = '{"omitted":"not stored"}';
export const QUEUE_FULL = '{"omitted":"record queue full"}';

export interface Queued {
  entry: RecordEntry;
  /** Characters of bodies this entry holds (0 once its bodies were dropped). */
  chars: number;
  /** Bodies checked for depth (once, off the request path). */
  checked: boolean;
  done: boolean;
  /** Already counted in `sanitized` (when it was spooled). */
  counted?: boolean;
}

/** A batch being written (writer.ts): its rows, the spool name reserved for it, its result. */
export interface Flight {
  batch: readonly Queued[];
  name: string | undefined;
  done: Promise<'ok' | 'down'>;
}

/** Rows at the front of the queue that go to the spool as one batch under a name reserved for them. */
export interface SpoolFront {
  name: string;
  rows: number;
}

export interface RecordWriterOptions {
  flushMs?: number;
  /**
   * Batches written at once at most (default 1): each its own insert (on PostgreSQL its own
   * connection of the writer thread), settled in queue order.
   */
  writers?: number;
  /** Rows per insert at most. */
  maxBatch?: number;
  /** Characters per insert at most (a single larger row still goes alone). */
  maxBatchChars?: number;
  /** Rows kept in memory at most; past it the queue goes to the spool, or (none) newer rows are dropped and counted. */
  maxQueued?: number;
  /** Characters of request/response bodies kept in memory at most; past it the oldest rows lose their bodies. */
  maxBodyChars?: number;
  /** Bodies kept beside the rows (body-files.ts) rather than in them: taken at once, never queued. */
  bodyFiles?: BodyFiles;
  /**
   * Where the queue goes while the store is down or past its bounds (core/spool.ts); its batches
   * are written before the queue, oldest first. Without one, rows wait in memory and are dropped
   * past the bound.
   */
  spool?: Spool;
}

export const MAX_BACKOFF_MS = 2_000;
/** After the spool failed to take a batch (disk full, directory gone), it is not tried for this long. */
export const SPOOL_RETRY_MS = 5_000;
/** What a row's columns other than its bodies count for against maxBatchChars (their text is ~400–600 characters). */
export const ROW_CHARS = 512;
