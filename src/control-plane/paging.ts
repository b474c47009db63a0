import { and, asc, gt, or, eq, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { connectError } from '../core/errors.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

interface Cursor {
  /** created_at of the last row, ISO. */
  c: string;
  /** id of the last row. */
  i: string;
}

export const pageSizeOf = (n: number | undefined): number => (n === undefined || n === 0 ? DEFAULT_PAGE_SIZE : Math.min(n, MAX_PAGE_SIZE));

export const encodeToken = (row: { createdAt: Date; id: string }): string =>
  Buffer.from(JSON.stringify({ c: row.createdAt.toISOString(), i: row.id } satisfies Cursor)).toString('base64url');

const decodeToken = (token: string): Cursor => {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (typeof v.c === 'string' && typeof v.i === 'string' && !Number.isNaN(Date.parse(v.c))) return { c: v.c, i: v.i };
  } catch {
    // fall through
  }
  throw connectError('invalid_argument', "invalid field 'pageToken': not a token returned by this API", 'pageToken');
};

/**
 * Keyset paging in (created_at, id) order: stable, and rows inserted while a client pages land
 * after its cursor, so no row is returned twice and none that existed is skipped.
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
