import { getTableColumns } from 'drizzle-orm';
import type { RecordEntry } from '../data-plane/records.ts';
import { type NewRequestRecord, requestRecords } from '../store/schema/index.ts';

declare global {
  interface String {
    /** ES2024: the string with every lone surrogate replaced by U+FFFD. */
    toWellFormed(): string;
    /** ES2024: whether the string has no lone surrogate. */
    isWellFormed(): boolean;
  }
}

/** SQL column name → its kind and, for NOT NULL columns, the constant default. */
export const COLUMNS = Object.entries(getTableColumns(requestRecords)).map(([key, col]) => ({
  key: key as keyof NewRequestRecord,
  name: col.name,
  kind: col.columnType === 'PgInteger' ? 'int4' : col.columnType === 'PgBigInt53' ? 'int8' : col.columnType === 'PgJsonb' ? 'json' : 'other',
  notNull: col.notNull,
  fallback: col.hasDefault && ['number', 'boolean', 'string'].includes(typeof col.default) ? (col.default as unknown) : null,
}));
const BY_NAME = new Map(COLUMNS.map((c) => [c.name, c]));

/**
 * A row object as a record entry (tests and tools; the request path builds entries directly).
 * Bodies: a string is taken as JSON text as is, anything else is serialised.
 */
export const entryOf = (row: Omit<NewRequestRecord, 'requestBody' | 'responseBody'> & { requestBody?: unknown; responseBody?: unknown }): RecordEntry => {
  let fields = '';
  for (const c of COLUMNS) {
    if (c.kind === 'json' || c.name === 'sanitized') continue;
    const v: unknown = row[c.key as keyof typeof row];
    const value = v === undefined ? c.fallback : v;
    if (value === null || value === undefined) continue;
    fields += `,${JSON.stringify(c.name)}:${JSON.stringify(value)}`;
  }
  const body = (v: unknown): string | null => (v === null || v === undefined ? null : typeof v === 'string' ? v : (JSON.stringify(v) ?? null));
  return { fields: fields.slice(1), requestBody: body(row.requestBody), responseBody: body(row.responseBody), sanitized: row.sanitized ?? null };
};

/** The entry as one JSON object with SQL column names. */
export const entryJson = (e: RecordEntry): string =>
  `{${e.fields},"sanitized":${e.sanitized === null ? 'null' : JSON.stringify(e.sanitized)},"request_body":${e.requestBody ?? 'null'},"response_body":${e.responseBody ?? 'null'}}`;

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
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(`{${e.fields}}`) as Record<string, unknown>;
  } catch {
    parsed = {};
  }
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(parsed)) {
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
  const json = JSON.stringify(out);
  let sanitized = e.sanitized;
  if (text) sanitized = addFlag(sanitized, 'text');
  if (numbers) sanitized = addFlag(sanitized, 'numbers');
  return { fields: json.slice(1, -1), requestBody, responseBody, sanitized };
};

export const withoutBodies = (e: RecordEntry, marker: string): RecordEntry => ({
  fields: e.fields,
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
export const COPY_SQL = `copy request_records (${COPY_COLUMNS.join(',')}) from '/dev/blob' with (format csv, quote e'\\x01')`;

/**
 * Text a column cannot hold (a lone surrogate, NUL). On the JSON path the database refuses it;
 * COPY would be handed U+FFFD silently, so such a row is refused here with the database's code
 * for it and takes the same way (cleaned and flagged by the writer).
 */
export class UnstorableText extends Error {
  readonly code = '22P05';
}

const csvValue = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') {
    if (!v.isWellFormed() || v.includes('\0')) throw new UnstorableText('untranslatable character in a record field');
    return quoted(v);
  }
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return quoted(JSON.stringify(v));
};

/**
 * The entry as one CSV line of COPY_SQL (an unquoted empty value is NULL, as a missing key is to
 * jsonb_populate_recordset). Values are passed as the text the JSON path would
 * hand to the same column type, so the database accepts and refuses exactly the same rows.
 */
export const entryCsv = (e: RecordEntry): string => {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(`{${e.fields}}`) as Record<string, unknown>;
  } catch {
    // Not JSON: the database must refuse the row (the writer then cleans it, or drops and counts it).
    return `${quoted('malformed record')}\n`;
  }
  let line = '';
  for (let i = 0; i < COLUMNS.length; i++) {
    const c = COLUMNS[i] as (typeof COLUMNS)[number];
    let v: unknown;
    if (c.name === 'request_body') v = e.requestBody === null ? '' : quoted(e.requestBody);
    else if (c.name === 'response_body') v = e.responseBody === null ? '' : quoted(e.responseBody);
    else if (c.name === 'sanitized') v = csvValue(e.sanitized);
    else v = csvValue(parsed[c.name]);
    line += i === 0 ? (v as string) : `,${v as string}`;
  }
  return `${line}\n`;
};
