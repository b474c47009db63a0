import { isRecord } from '../core/json.ts';
import type { RecordEntry, RecordValue } from '../core/records.ts';
import { COLUMNS, recordValue } from '../records/entry.ts';

/**
 * A record a data plane pushed (`PushRecords`, dataplane-protocol.ts): its RecordEntry as one JSON
 * object keyed by request_records column names. It is taken only when the store can hold it as it
 * is, every column checked against the column: a record the database would refuse (a missing
 * `http_status`, a `request_id` that is no UUID, a time PostgreSQL does not read) is refused here,
 * with the reason naming the field, so that the data plane keeps it — it was once accepted and then
 * dropped by the record writer. What the writer may still do to a taken record keeps it: text
 * cleaned of NUL and lone surrogates, numbers clamped to their columns, bodies too deep left out,
 * each flagged in `sanitized` (docs/records.md).
 *
 * Keys that are no column are ignored (a newer data plane's column reaching an older management
 * plane loses that column, not the record); a null or absent column with a default takes it.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** ISO 8601 as `Date.toISOString` writes it (and its offset forms). */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** A time PostgreSQL reads as written: every field in its range (JavaScript rolls 30 February over to March; PostgreSQL refuses it). */
const isTime = (v: string): boolean => {
  const m = ISO_TIME.exec(v);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offH, offM] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)));
  if (year === undefined || month === undefined || day === undefined || month < 1 || month > 12 || year < 1) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day >= 1 && day <= days && (hour ?? 0) < 24 && (minute ?? 0) < 60 && (second ?? 0) < 60 && (offH ?? 0) < 16 && (offM ?? 0) < 60;
};

const WANTS = {
  uuid: 'a UUID',
  time: 'an ISO 8601 time (YYYY-MM-DDTHH:MM:SS[.ffffff]Z or ±HH:MM)',
  boolean: 'a boolean',
  number: 'a number',
  json: 'JSON',
  text: 'a string',
} as const;

const fits = (holds: keyof typeof WANTS, v: unknown): boolean => {
  switch (holds) {
    case 'uuid':
      return typeof v === 'string' && UUID.test(v);
    case 'time':
      return typeof v === 'string' && isTime(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'number':
      return typeof v === 'number';
    case 'json':
      return true;
    case 'text':
      // A number or boolean is stored as its text: nothing of it is lost.
      return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  }
};

/** The columns a record must carry: NOT NULL without a default. */
const REQUIRED = new Set(COLUMNS.filter((c) => c.notNull && c.fallback === null).map((c) => c.name));
const BODIES = new Set(['request_body', 'response_body', 'sanitized']);

/**
 * The record as an entry of the account's customer, or why it is refused (`field: what it must
 * be`). A record naming another customer than the account's is refused; one naming none is the
 * account's.
 */
export const pushedEntry = (v: unknown, customerId: string): RecordEntry | string => {
  if (!isRecord(v)) return 'not a JSON object';
  const o = v;
  for (const c of COLUMNS) {
    const value = o[c.name];
    if (value === undefined || value === null) {
      if (REQUIRED.has(c.name)) return `${c.name}: required, ${WANTS[c.holds]}`;
      continue;
    }
    if (!fits(c.holds, value)) return `${c.name}: must be ${WANTS[c.holds]}`;
  }
  if (o.customer_id !== undefined && o.customer_id !== null && o.customer_id !== '' && o.customer_id !== customerId)
    return `customer_id: records of another customer than the service account's ('${customerId}') are refused`;
  const row: Record<string, RecordValue> = {};
  for (const c of COLUMNS) {
    if (BODIES.has(c.name)) continue;
    const value = o[c.name];
    if (value !== undefined && value !== null) row[c.name] = recordValue(value);
    else if (c.notNull && c.fallback !== null) row[c.name] = c.fallback as RecordValue;
  }
  row.customer_id = customerId;
  const body = (x: unknown): string | null => (x === undefined || x === null ? null : JSON.stringify(x));
  return {
    row,
    requestBody: body(o.request_body),
    responseBody: body(o.response_body),
    sanitized: typeof o.sanitized === 'string' && o.sanitized !== '' ? o.sanitized : null,
  };
};
