/**
 * Request records as both planes see them: what one request hands over, and the interface of
 * whatever takes it. The data plane knows no store (the writer that puts records into the database
 * lives in src/records/, composed in src/app.ts); the management plane takes pushed records in the
 * same shape. Framework-free, imported by both.
 */

/** A column value of a request record as the store takes it (numbers and flags as they are, time as ISO text). */
export type RecordValue = string | number | boolean | null;

/**
 * One request record, built once on the request path. `row` holds the request_records columns by
 * their SQL names (every column but the bodies and `sanitized`; a column left out is NULL or its
 * default); the bodies are JSON texts as the retention setting keeps them (null when not kept),
 * never parsed or serialised again. Each sink serialises the row in one native step (a JSON line,
 * a COPY line): a row pre-serialised as JSON text had to be parsed again by every sink and cost
 * more than the object (docs/benchmarks.md, session 9). Nothing else of the request is held until
 * the record is written.
 */
export interface RecordEntry {
  readonly row: Readonly<Record<string, RecordValue>>;
  readonly requestBody: string | null;
  readonly responseBody: string | null;
  /** Comma-separated flags of what was adjusted for the record (`usage`), or null. */
  readonly sanitized: string | null;
}

/** The row's JSON object text with `more` (`"key":value` pairs, JSON already) added before the closing brace. */
export const rowJsonWith = (row: RecordEntry['row'], more: string): string => {
  const json = JSON.stringify(row);
  return json.length > 2 ? `${json.slice(0, -1)},${more}}` : `{${more}}`;
};

export interface RecordSinkStats {
  /** Rows waiting to be written. */
  queued: number;
  /** Characters of bodies those rows hold. */
  queuedBodyChars: number;
  /** Rows stored with a `sanitized` flag (cleaned text, clamped numbers or left-out bodies). */
  sanitized: number;
  /** Rows stored without their bodies (unstorable bodies, or the queue's body bound). */
  bodiesDropped: number;
  /** Rows lost: the queue was full and could not be spooled, the database refused even the cleaned row, or shutdown's deadline passed without a spool. */
  dropped: number;
  /** Rows waiting in the on-disk spool (GATEWAY_DATA_DIR/record-spool), written after those in memory went. */
  spooled: number;
  /** Bytes of the spool's files. */
  spooledBytes: number;
  /** Whether the last write found the store unavailable (rows are kept and retried with backoff). */
  storeDown: boolean;
}

/** Takes request records; never blocks and never throws on the request path. */
export interface RecordSink {
  add(entry: RecordEntry): void;
  readonly stats: RecordSinkStats;
}
