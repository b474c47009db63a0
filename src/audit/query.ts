import { and, asc, count, desc, eq, gt, gte, lt, or, type SQL } from 'drizzle-orm';
import type { Db } from '../store/db.ts';
import { type AuditLogRow, auditLogs } from '../store/schema/audit.ts';

/**
 * QueryAuditLogs: the seed's filters, keyset paging on (timestamp, id) in either direction, and the
 * total count of matching entries across pages. Every filter is an equality or a time range on an
 * indexed column (see store/schema/audit.ts), so a page is an index range scan whatever the table
 * size; `totalCount` counts the filtered range (see docs/management-api.md for measured figures).
 */

export interface AuditFilter {
  /** Inclusive. */
  startTime?: Date;
  /** Exclusive. */
  endTime?: Date;
  actionType?: string;
  actorType?: string;
  correlationId?: string;
  resourceId?: string;
  resourceType?: string;
  userId?: string;
  /** Unset matches both. */
  success?: boolean;
}

export type OrderDirection = 'asc' | 'desc';

export const AUDIT_DEFAULT_PAGE_SIZE = 50;
export const AUDIT_MAX_PAGE_SIZE = 1000;

/** The page size asked for, bounded: unset or 0 = 50, above 1000 = 1000. */
export const auditPageSize = (n: number | undefined): number =>
  n === undefined || n <= 0 ? AUDIT_DEFAULT_PAGE_SIZE : Math.min(Math.floor(n), AUDIT_MAX_PAGE_SIZE);

/** A position in the (timestamp, id) order and the direction it was taken in. */
export interface AuditCursor {
  at: Date;
  id: string;
  direction: OrderDirection;
}

/**
 * The page token: the same cursor text as every other list of the API (`c` time, `i` id) plus the
 * direction `d` it continues in.
 */
export const encodeAuditToken = (row: Pick<AuditLogRow, 'timestamp' | 'id'>, d: OrderDirection): string =>
  Buffer.from(JSON.stringify({ c: row.timestamp.toISOString(), i: row.id, d })).toString('base64url');

/** The direction a token was issued for (undefined when it names none). */
export const auditTokenDirection = (token: string): OrderDirection | undefined => {
  try {
    const d = (JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { d?: unknown }).d;
    return d === 'asc' || d === 'desc' ? d : undefined;
  } catch {
    return undefined;
  }
};

export const auditWhere = (f: AuditFilter): SQL | undefined =>
  and(
    f.startTime ? gte(auditLogs.timestamp, f.startTime) : undefined,
    f.endTime ? lt(auditLogs.timestamp, f.endTime) : undefined,
    f.actionType ? eq(auditLogs.actionType, f.actionType) : undefined,
    f.actorType ? eq(auditLogs.actorType, f.actorType) : undefined,
    f.correlationId ? eq(auditLogs.correlationId, f.correlationId) : undefined,
    f.resourceId ? eq(auditLogs.resourceId, f.resourceId) : undefined,
    f.resourceType ? eq(auditLogs.resourceType, f.resourceType) : undefined,
    f.userId ? eq(auditLogs.userId, f.userId) : undefined,
    f.success === undefined ? undefined : eq(auditLogs.success, f.success),
  );

/** Entries strictly after the cursor in its direction. */
const after = (c: AuditCursor): SQL | undefined => {
  const beyond = c.direction === 'desc' ? lt : gt;
  return or(beyond(auditLogs.timestamp, c.at), and(eq(auditLogs.timestamp, c.at), beyond(auditLogs.id, c.id)));
};

export interface AuditPage {
  rows: AuditLogRow[];
  nextPageToken: string;
  totalCount: number;
}

/**
 * One page. Stable while entries are appended: a page continues strictly after the last entry
 * returned, so no entry is returned twice and none is skipped among those that existed when paging
 * began (new entries appear at the end of an ascending walk and never within a descending one).
 */
export const queryAuditLogs = async (
  db: Db,
  filter: AuditFilter,
  direction: OrderDirection,
  size: number,
  cursor: Omit<AuditCursor, 'direction'> | undefined,
): Promise<AuditPage> => {
  const where = auditWhere(filter);
  const order = direction === 'desc' ? [desc(auditLogs.timestamp), desc(auditLogs.id)] : [asc(auditLogs.timestamp), asc(auditLogs.id)];
  const [rows, total] = await Promise.all([
    db
      .select()
      .from(auditLogs)
      .where(and(where, cursor ? after({ ...cursor, direction }) : undefined))
      .orderBy(...order)
      .limit(size + 1),
    db.select({ n: count() }).from(auditLogs).where(where),
  ]);
  const more = rows.length > size;
  const items = more ? rows.slice(0, size) : rows;
  const last = items[items.length - 1];
  return { rows: items, nextPageToken: more && last ? encodeAuditToken(last, direction) : '', totalCount: Number(total[0]?.n ?? 0) };
};

export const getAuditLog = async (db: Db, id: string): Promise<AuditLogRow | undefined> => {
  const [row] = await db.select().from(auditLogs).where(eq(auditLogs.id, id)).limit(1);
  return row;
};
