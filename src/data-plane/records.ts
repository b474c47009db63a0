import { getTableColumns, sql } from 'drizzle-orm';
import { describeError, log } from '../core/log.ts';
import type { Db } from '../store/db.ts';
import { type NewRequestRecord, requestRecords } from '../store/schema/index.ts';

declare global {
  interface String {
    /** ES2024: the string with every lone surrogate replaced by U+FFFD. */
    toWellFormed(): string;
  }
}

/**
 * A JSON value that is already serialised (the request body as the client sent it, the response
 * body as it went out): embedded in the batch as is, never parsed or serialised again.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Column property → SQL column name, its kind, and the constant defaults of NOT NULL columns. */
const COLUMNS = Object.entries(getTableColumns(requestRecords)).map(([key, col]) => ({
  key: key as keyof NewRequestRecord,
  name: JSON.stringify(col.name),
  kind: col.columnType === 'PgInteger' ? 'int4' : col.columnType === 'PgBigInt53' ? 'int8' : col.columnType === 'PgJsonb' ? 'json' : 'other',
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

// ---- cleaning (only on the failure path: a row the database refused) ----------------------------

const INT4 = 2_147_483_647;
const clampNumber = (n: number, max: number): number => (Number.isFinite(n) ? Math.max(-max, Math.min(max, Math.round(n))) : 0);

/** Well-formed text without NUL: what a PostgreSQL text column and jsonb can hold. */
const cleanText = (s: string): string => s.toWellFormed().replaceAll('\0', '');

/**
 * Escapes in JSON text that jsonb refuses: a lone surrogate (→ U+FFFD) and `\u0000` (removed). An
 * escaped backslash is matched first so that `\\udead` (a backslash, then text) is left alone.
 */
const BAD_ESCAPES = /\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}|\\u0000/g;
const cleanJsonText = (text: string): string =>
  text.toWellFormed().replace(BAD_ESCAPES, (m) => (m.length === 2 || m.length === 12 ? m : m === '\\u0000' ? '' : '\\ufffd'));

const cleanJson = (v: unknown): unknown => {
  if (v instanceof RawJson) return new RawJson(cleanJsonText(v.text));
  try {
    return new RawJson(cleanJsonText(JSON.stringify(v) ?? 'null'));
  } catch {
    return OMITTED;
  }
};

/** What a body becomes when it cannot be stored or kept. */
const OMITTED = new RawJson('{"omitted":"not stored"}');
const QUEUE_FULL = new RawJson('{"omitted":"record queue full"}');

const addFlag = (row: NewRequestRecord, flag: string): string => {
  const flags = row.sanitized ? row.sanitized.split(',') : [];
  if (!flags.includes(flag)) flags.push(flag);
  return flags.join(',');
};

/** The row with text made well-formed, NUL removed and numbers clamped to their columns; flagged when changed. */
const cleanRow = (row: NewRequestRecord): NewRequestRecord => {
  const out: Record<string, unknown> = { ...row };
  let text = false;
  let numbers = false;
  for (const c of COLUMNS) {
    const v: unknown = row[c.key];
    if (c.kind === 'json' && v !== null && v !== undefined) {
      const cleaned = cleanJson(v);
      text ||= !(v instanceof RawJson && cleaned instanceof RawJson && cleaned.text === v.text);
      out[c.key] = cleaned;
    } else if (typeof v === 'string') {
      const cleaned = cleanText(v);
      text ||= cleaned !== v;
      out[c.key] = cleaned;
    } else if (typeof v === 'number' && (c.kind === 'int4' || c.kind === 'int8')) {
      const cleaned = clampNumber(v, c.kind === 'int4' ? INT4 : Number.MAX_SAFE_INTEGER);
      numbers ||= cleaned !== v;
      out[c.key] = cleaned;
    }
  }
  const cleaned = out as NewRequestRecord;
  if (text) cleaned.sanitized = addFlag(cleaned, 'text');
  if (numbers) cleaned.sanitized = addFlag(cleaned, 'numbers');
  return cleaned;
};

const withoutBodies = (row: NewRequestRecord, marker: RawJson): NewRequestRecord => ({
  ...row,
  requestBody: row.requestBody === null || row.requestBody === undefined ? null : marker,
  responseBody: row.responseBody === null || row.responseBody === undefined ? null : marker,
  sanitized: addFlag(row, 'bodies'),
});

/**
 * Bodies nested deeper than this are not stored (the record keeps a marker instead). PostgreSQL
 * refuses very deep jsonb with a stack-depth error, and the embedded PGlite fails on it silently
 * (rows vanish) or hangs, so such a body must never reach the store.
 */
const MAX_BODY_DEPTH = 1000;

/** Whether JSON text nests deeper than MAX_BODY_DEPTH. Text shorter than 2×depth cannot, and is not scanned. */
const tooDeep = (text: string): boolean => {
  if (text.length <= 2 * MAX_BODY_DEPTH) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > MAX_BODY_DEPTH) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
};

const hasDeepBody = (row: NewRequestRecord): boolean =>
  (row.requestBody instanceof RawJson && tooDeep(row.requestBody.text)) || (row.responseBody instanceof RawJson && tooDeep(row.responseBody.text));

const bodyChars = (row: NewRequestRecord): number =>
  (row.requestBody instanceof RawJson ? row.requestBody.text.length : 0) + (row.responseBody instanceof RawJson ? row.responseBody.text.length : 0);

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

// ---- the sink -----------------------------------------------------------------------------------

interface Entry {
  row: NewRequestRecord;
  /** Characters of RawJson bodies this entry holds (0 once its bodies were dropped). */
  chars: number;
  /** Bodies checked for depth (once, off the request path). */
  checked: boolean;
  done: boolean;
}

export interface RecordSinkOptions {
  flushMs?: number;
  maxBatch?: number;
  /** Rows kept in memory at most; newer rows past it are dropped and counted. */
  maxQueued?: number;
  /** Characters of request/response bodies kept in memory at most; past it the oldest rows lose their bodies. */
  maxBodyChars?: number;
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

const MAX_BACKOFF_MS = 2_000;

/**
 * Collects request records and writes them in batches off the hot path: every `flushMs`, or at
 * once when `maxBatch` rows are waiting. A store that is down keeps the queue and is retried with
 * backoff. A batch the database refuses is split (halves, then single rows); a single refused row
 * is cleaned, then stored without bodies, then dropped and counted — one bad row never holds back
 * the others. The queue is bounded (docs/operating.md, "Request records").
 */
export class RecordSink {
  #queue: Entry[] = [];
  #chars = 0;
  /** Queue entries before this index hold no bodies (shedding resumes here). */
  #shedFrom = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #flushing: Promise<void> | undefined;
  #backoffMs = 0;
  #retryAt = 0;
  #down = false;
  #stats = { sanitized: 0, bodiesDropped: 0, dropped: 0 };
  readonly #flushMs: number;
  readonly #maxBatch: number;
  readonly #maxQueued: number;
  readonly #maxBodyChars: number;

  constructor(
    private readonly db: Db,
    opts: RecordSinkOptions = {},
  ) {
    this.#flushMs = opts.flushMs ?? 100;
    this.#maxBatch = opts.maxBatch ?? 1000;
    this.#maxQueued = opts.maxQueued ?? 50_000;
    this.#maxBodyChars = opts.maxBodyChars ?? 64 * 1024 * 1024;
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

  add(record: NewRequestRecord): void {
    if (this.#queue.length >= this.#maxQueued) {
      this.#stats.dropped++;
      log.every('records-queue-full', 'error', 'request records dropped: the record queue is full', { queued: this.#queue.length, dropped: this.#stats.dropped });
      return;
    }
    const chars = bodyChars(record);
    this.#queue.push({ row: record, chars, checked: chars === 0, done: false });
    this.#chars += chars;
    if (this.#chars > this.#maxBodyChars) this.#shedBodies();
    if (this.#queue.length >= this.#maxBatch && !this.#down) void this.flush();
  }

  /** Past the body bound: the oldest queued rows lose their bodies (they are still recorded). */
  #shedBodies(): void {
    for (; this.#shedFrom < this.#queue.length && this.#chars > this.#maxBodyChars; this.#shedFrom++) {
      const e = this.#queue[this.#shedFrom] as Entry;
      if (e.chars === 0) continue;
      e.row = withoutBodies(e.row, QUEUE_FULL);
      this.#chars -= e.chars;
      e.chars = 0;
      this.#stats.bodiesDropped++;
    }
    log.every('records-bodies-shed', 'warn', 'request record queue over its body bound: bodies of the oldest queued records left out', { queued: this.#queue.length });
  }

  #checkDepth(e: Entry): void {
    e.checked = true;
    if (!hasDeepBody(e.row)) return;
    e.row = withoutBodies(e.row, OMITTED);
    this.#chars -= e.chars;
    e.chars = 0;
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

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.slice(0, this.#maxBatch);
      for (const e of batch) if (!e.checked) this.#checkDepth(e);
      const result = await this.#write(batch);
      // Only this method removes from the front; add() appends behind the batch.
      this.#queue.splice(0, batch.length, ...batch.filter((e) => !e.done));
      for (const e of batch) if (e.done) this.#chars -= e.chars;
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
    }
  }

  /** One insert; undefined when stored, else the error. */
  async #insert(rows: readonly NewRequestRecord[]): Promise<unknown> {
    try {
      await this.db.execute(
        sql`insert into ${requestRecords} select * from jsonb_populate_recordset(null::${requestRecords}, ${batchJson(rows)}::jsonb) on conflict do nothing`,
      );
      return undefined;
    } catch (e) {
      return e ?? new Error('insert failed');
    }
  }

  #stored(entries: readonly Entry[], rows: readonly NewRequestRecord[]): 'ok' {
    for (const e of entries) e.done = true;
    for (const r of rows) if (r.sanitized) this.#stats.sanitized++;
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

  async #write(entries: readonly Entry[]): Promise<'ok' | 'down'> {
    const rows = entries.map((e) => e.row);
    const e = await this.#insert(rows);
    if (e === undefined) return this.#stored(entries, rows);
    if (!isDataError(e)) return this.#storeDown(e);
    if (entries.length === 1) return this.#writeOne(entries[0] as Entry, e);
    log.every('records-split', 'warn', 'the database refused a batch of request records; writing it in parts', { rows: entries.length, error: describeError(rootCause(e)) });
    const mid = entries.length >>> 1;
    if ((await this.#write(entries.slice(0, mid))) === 'down') return 'down';
    return this.#write(entries.slice(mid));
  }

  /** A single row the database refused: cleaned, then without bodies, then dropped and counted. */
  async #writeOne(entry: Entry, first: unknown): Promise<'ok' | 'down'> {
    const cleaned = cleanRow(entry.row);
    let e = await this.#insert([cleaned]);
    if (e === undefined) return this.#stored([entry], [cleaned]);
    if (!isDataError(e)) return this.#storeDown(e);
    const bare = withoutBodies(cleaned, OMITTED);
    e = await this.#insert([bare]);
    if (e === undefined) {
      this.#stats.bodiesDropped++;
      return this.#stored([entry], [bare]);
    }
    if (!isDataError(e)) return this.#storeDown(e);
    entry.done = true;
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
   * has passed; rows still queued then are counted as dropped.
   */
  async stop(withinMs = 5_000): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const deadline = Date.now() + withinMs;
    for (;;) {
      const left = deadline - Date.now();
      if (left > 0) await Promise.race([this.flush(), Bun.sleep(left)]);
      if (this.#queue.length === 0) return;
      if (Date.now() >= deadline) break;
      await Bun.sleep(Math.min(Math.max(this.#backoffMs, 50), deadline - Date.now()));
    }
    this.#stats.dropped += this.#queue.length;
    log.error('request records not written before the shutdown deadline', { rows: this.#queue.length });
  }
}
