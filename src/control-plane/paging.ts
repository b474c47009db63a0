import { and, asc, eq, gt, or, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { connectError } from '../core/errors.ts';
import { PATTERNS, timestampOf } from './schemas.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

export interface Cursor {
  /** created_at of the last row, ISO (millisecond precision, as stored: see store/schema/columns.ts). */
  c: string;
  /** id (UUID) of the last row. */
  i: string;
}

const UUID = new RegExp(PATTERNS.UUID);

export const pageSizeOf = (n: number | undefined): number => (n === undefined || n === 0 ? DEFAULT_PAGE_SIZE : Math.min(n, MAX_PAGE_SIZE));

export const encodeToken = (row: { createdAt: Date; id: string }): string =>
  Buffer.from(JSON.stringify({ c: row.createdAt.toISOString(), i: row.id } satisfies Cursor)).toString('base64url');

const badToken = () => connectError('invalid_argument', "invalid field 'pageToken': not a token returned by this API", 'pageToken');

/** Decodes a token of this API into its cursor, or `invalid_argument` naming pageToken. */
export const decodeToken = (token: string): Cursor => {
  let v: Partial<Cursor>;
  try {
    v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<Cursor>;
  } catch {
    throw badToken();
  }
  // The time must be one the database can compare with (years 0001..9999), like any timestamp input.
  const at = v && typeof v.c === 'string' && typeof v.i === 'string' && UUID.test(v.i) ? timestampOf(v.c) : undefined;
  if (at && typeof v.i === 'string') return { c: at.toISOString(), i: v.i };
  throw badToken();
};

/**
 * Keyset paging in (created_at, id) order: stable, and rows inserted while a client pages land
 * after its cursor (or, if their transaction started earlier, before it — never twice), so no row
 * is returned twice and none that existed when paging began is skipped.
 */
export const keyset = (createdAt: PgColumn, id: PgColumn, token: string | undefined): { where: SQL | undefined; order: SQL[] } => {
  const order = [asc(createdAt), asc(id)];
  if (!token) return { where: undefined, order };
  const cur = decodeToken(token);
  const at = new Date(cur.c);
  return { where: or(gt(createdAt, at), and(eq(createdAt, at), gt(id, cur.i))), order };
};

/** Splits a `limit + 1` fetch into the page and its next token. */
export const page = <T extends { createdAt: Date; id: string }>(rows: T[], size: number): { items: T[]; nextPageToken: string } => {
  if (rows.length <= size) return { items: rows, nextPageToken: '' };
  const items = rows.slice(0, size);
  const last = items[items.length - 1] as T;
  return { items, nextPageToken: encodeToken(last) };
};
