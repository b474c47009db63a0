/**
 * The data plane's side of request records: what one request hands over, and the interface of
 * whatever takes it. The data plane knows no store — the writer that puts records into the
 * database lives in src/records/ and is composed in src/app.ts.
 */

/**
 * One request record, serialised once on the request path. `fields` is the body of a JSON object
 * (no braces) whose keys are the request_records column names, every column but the bodies and
 * `sanitized`; the bodies are JSON texts as the retention setting keeps them (null when not kept).
 * Nothing else of the request is held until the record is written.
 */
export interface RecordEntry {
  readonly fields: string;
  readonly requestBody: string | null;
  readonly responseBody: string | null;
  /** Comma-separated flags of what was adjusted for the record (`usage`), or null. */
  readonly sanitized: string | null;
}

export interface RecordSinkStats {
  /** Rows waiting to be written. */
  queued: number;
  /** Characters of bodies those rows hold. */
  queuedBodyChars: number;
  /** Rows stored with a `sanitized` flag (cleaned text, clamped numbers or left-out bodies). */
  sanitized: number;
  /** Rows stored without their bodies (unstorable bodies, or the queue's body bound). */
  bodiesDropped: number;
  /** Rows lost: the queue was full, the database refused even the cleaned row, or shutdown's deadline passed. */
  dropped: number;
  /** Whether the last write found the store unavailable (rows are kept and retried with backoff). */
  storeDown: boolean;
}

/** Takes request records; never blocks and never throws on the request path. */
export interface RecordSink {
  add(entry: RecordEntry): void;
  readonly stats: RecordSinkStats;
}
