import { getTableColumns } from 'drizzle-orm';
import { type RecordEntry, type RecordValue, rowJsonWith } from '../core/records.ts';
import { type NewRequestRecord, requestRecords } from '../store/schema/index.ts';

declare global {
  interface String {
    /** ES2024: the string with every lone surrogate replaced by U+FFFD. */
    toWellFormed(): string;
    /** ES2024: whether the string has no lone surrogate. */
    isWellFormed(): boolean;
  }
}

/** The value a column takes, by drizzle column type (anything else is text). */
const HOLDS: Record<string, 'uuid' | 'time' | 'boolean' | 'number' | 'json' | 'text'> = {
  PgUUID: 'uuid',
  PgTimestamp: 'time',
  PgBoolean: 'boolean',
  PgInteger: 'number',
  PgBigInt53: 'number',
  PgJsonb: 'json',
};

/**
 * SQL column name → its kind and, for NOT NULL columns, the constant default. Every column an
 * insert names: `stored_at` is left out, the database sets it (its default) whatever the path.
 */
export const COLUMNS = Object.entries(getTableColumns(requestRecords))
  .filter(([key]) => key !== 'storedAt')
  .map(([key, col]) => ({
    key: key as keyof NewRequestRecord,
    name: col.name,
    kind:
      col.columnType === 'PgInteger' ? 'int4' : col.columnType === 'PgBigInt53' ? 'int8' : col.columnType === 'PgJsonb' ? 'json' : 'other',
    /** What the column holds, as a pushed record (control-plane/pushed-records.ts) is checked against it. */
    holds: HOLDS[col.columnType] ?? 'text',
    notNull: col.notNull,
    fallback: col.hasDefault && ['number', 'boolean', 'string'].includes(typeof col.default) ? (col.default as unknown) : null,
  }));
const BY_NAME = new Map(COLUMNS.map((c) => [c.name, c]));

/**
 * A row object (drizzle's keys) as a record entry (tests and tools; the request path builds entries
 * directly). Bodies: a string is taken as JSON text as is, anything else is serialised.
 */
export const entryOf = (
  row: Omit<NewRequestRecord, 'requestBody' | 'responseBody'> & { requestBody?: unknown; responseBody?: unknown },
): RecordEntry => {
  const out: Record<string, RecordValue> = {};
  for (const c of COLUMNS) {
    if (c.kind === 'json' || c.name === 'sanitized') continue;
    const v: unknown = row[c.key as keyof typeof row];
    const value = v === undefined ? c.fallback : v;
    if (value === null || value === undefined) continue;
    out[c.name] = recordValue(value);
  }
  const body = (v: unknown): string | null =>
    v === null || v === undefined ? null : typeof v === 'string' ? v : (JSON.stringify(v) ?? null);
  return { row: out, requestBody: body(row.requestBody), responseBody: body(row.responseBody), sanitized: row.sanitized ?? null };
};

/** A value as a record column holds it: primitives as they are, a time as ISO text, anything else as its JSON text. */
export const recordValue = (v: unknown): RecordValue => {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'invalid date' : v.toISOString();
  return JSON.stringify(v) ?? null;
};

/** The entry as one JSON object with SQL column names. */
export const entryJson = (e: RecordEntry): string =>
  rowJsonWith(
    e.row,
    `"sanitized":${e.sanitized === null ? 'null' : JSON.stringify(e.sanitized)},"request_body":${e.requestBody ?? 'null'},"response_body":${e.responseBody ?? 'null'}`,
  );

/**
 * A batch as batchJson wrote it (a spooled batch) as entries again. Only for a spooled batch the
 * database refused, which is then split and cleaned row by row; a batch that is not a JSON array
 * of objects throws (SyntaxError).
 */
export const entriesOfBatch = (text: string): RecordEntry[] => {
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) throw new SyntaxError('a record batch is a JSON array');
  const body = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));
  return parsed.map((o: unknown): RecordEntry => {
    if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new SyntaxError('a record is a JSON object');
    const fields = o as Record<string, unknown>;
    const row: Record<string, RecordValue> = {};
    for (const k in fields) if (k !== 'request_body' && k !== 'response_body' && k !== 'sanitized') row[k] = recordValue(fields[k]);
    return {
      row,
      requestBody: body(fields.request_body),
      responseBody: body(fields.response_body),
      sanitized: typeof fields.sanitized === 'string' ? fields.sanitized : null,
    };
  });
};

export const bodyChars = (e: RecordEntry): number => (e.requestBody?.length ?? 0) + (e.responseBody?.length ?? 0);

export const addFlag = (sanitized: string | null, flag: string): string => {
  const flags = sanitized ? sanitized.split(',') : [];
  if (!flags.includes(flag)) flags.push(flag);
  return flags.join(',');
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

/** The entry with text made well-formed, NUL removed and numbers clamped to their columns; flagged when changed. */
export const cleanEntry = (e: RecordEntry): RecordEntry => {
  let text = false;
  let numbers = false;
  const out: Record<string, RecordValue> = {};
  for (const [name, v] of Object.entries(e.row)) {
    const c = BY_NAME.get(name);
    if (!c) continue;
    if (typeof v === 'string') {
      const cleaned = cleanText(v);
      text ||= cleaned !== v;
      out[name] = cleaned;
    } else if ((c.kind === 'int4' || c.kind === 'int8') && (typeof v === 'number' || (v === null && c.notNull))) {
      const cleaned = typeof v === 'number' ? clampNumber(v, c.kind === 'int4' ? INT4 : Number.MAX_SAFE_INTEGER) : 0;
      numbers ||= cleaned !== v;
      out[name] = cleaned;
    } else out[name] = v;
  }
  const body = (b: string | null): string | null => {
    if (b === null) return null;
    const cleaned = cleanJsonText(b);
    text ||= cleaned !== b;
    return cleaned;
  };
  const requestBody = body(e.requestBody);
  const responseBody = body(e.responseBody);
  let sanitized = e.sanitized;
  if (text) sanitized = addFlag(sanitized, 'text');
  if (numbers) sanitized = addFlag(sanitized, 'numbers');
  return { row: out, requestBody, responseBody, sanitized };
};

export const withoutBodies = (e: RecordEntry, marker: string): RecordEntry => ({
  row: e.row,
  requestBody: e.requestBody === null ? null : marker,
  responseBody: e.responseBody === null ? null : marker,
  sanitized: addFlag(e.sanitized, 'bodies'),
});

/**
 * Bodies nested deeper than this are not stored (the record keeps a marker instead). PostgreSQL
 * refuses very deep jsonb with a stack-depth error, and the embedded PGlite fails on it silently
 * (rows vanish) or hangs, so such a body must never reach the store.
 */
const MAX_BODY_DEPTH = 1000;

/** Whether JSON text nests deeper than MAX_BODY_DEPTH. Text shorter than 2×depth cannot, and is not scanned. */
const tooDeep = (text: string | null): boolean => {
  if (text === null || text.length <= 2 * MAX_BODY_DEPTH) return false;
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

export const hasDeepBody = (e: RecordEntry): boolean => tooDeep(e.requestBody) || tooDeep(e.responseBody);

// ---- COPY (the embedded store) ------------------------------------------------------------------

/**
 * The CSV quote character of the COPY text: a control character no JSON text, id or name carries
 * unescaped, so quoting a value almost never needs more than wrapping it (a \x01 inside is doubled).
 */
const Q = '\x01';
const quoted = (s: string): string => (s.includes(Q) ? `${Q}${s.replaceAll(Q, Q + Q)}${Q}` : `${Q}${s}${Q}`);

/** Columns in table order: the COPY column list, and the order of every CSV line. */
const COPY_COLUMNS = COLUMNS.map((c) => c.name);
/**
 * The JSON insert's columns: named, so that `stored_at` (absent from a batch, null in its
 * jsonb_populate_recordset row) takes its default.
 */
export const INSERT_COLUMNS = COPY_COLUMNS.join(',');
export const COPY_SQL = `copy request_records (${COPY_COLUMNS.join(',')}) from '/dev/blob' with (format csv, quote e'\\x01')`;
/** The same from the client's stream (PostgreSQL: the record writer thread, pg-worker.ts). */
export const COPY_STDIN_SQL = `copy request_records (${COPY_COLUMNS.join(',')}) from stdin with (format csv, quote e'\\x01')`;

/**
 * Text a column cannot hold (a lone surrogate, NUL). On the JSON path the database refuses it;
 * COPY would be handed U+FFFD silently, so such a row is refused here with the database's code
 * for it and takes the same way (cleaned and flagged by the writer).
 */
export class UnstorableText extends Error {
  readonly code = '22P05';
}

const csvValue = (v: RecordValue | undefined): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') {
    if (!v.isWellFormed() || v.includes('\0')) throw new UnstorableText('untranslatable character in a record field');
    return quoted(v);
  }
  return String(v);
};

/**
 * The entry as one CSV line of COPY_SQL (an unquoted empty value is NULL, as a missing key is to
 * jsonb_populate_recordset). Values are passed as the text the JSON path would hand to the same
 * column type, so the database accepts and refuses exactly the same rows. Built from an array
 * joined once: a line concatenated value by value is a rope of ~80 pieces that costs as much again
 * to flatten when the batch's Blob is made.
 */
export const entryCsv = (e: RecordEntry): string => {
  const values = new Array<string>(COLUMNS.length);
  for (let i = 0; i < COLUMNS.length; i++) {
    const c = COLUMNS[i] as (typeof COLUMNS)[number];
    if (c.name === 'request_body') values[i] = e.requestBody === null ? '' : quoted(e.requestBody);
    else if (c.name === 'response_body') values[i] = e.responseBody === null ? '' : quoted(e.responseBody);
    else if (c.name === 'sanitized') values[i] = csvValue(e.sanitized);
    else values[i] = csvValue(e.row[c.name]);
  }
  return `${values.join(',')}\n`;
};
