import { and, desc, eq, gte, lt, or, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../store/db.ts';
import { requestRecords } from '../store/schema/index.ts';

/**
 * SearchRequestRecords' query: newest first, one page. By request id it is a primary key lookup
 * (request_id, received_at) in each day partition (migration 0019); by client request id the
 * partial index request_records_client_id of each partition serves it; by key and time the
 * (api_key_id, received_at) index; by time alone received_at's, in the partitions of the range only
 * (test/records-rollup.test.ts checks the plans on a table of thousands of rows).
 */
export interface RecordFilter {
  requestId?: string | undefined;
  clientRequestId?: string | undefined;
  correlationId?: string | undefined;
  customerId?: string | undefined;
  projectId?: string | undefined;
  apiKeyId?: string | undefined;
  start?: Date | undefined;
  end?: Date | undefined;
  /** Strictly older than this (receivedAt, requestId): the page after the one that ended there. */
  after?: { receivedAt: Date; requestId: string } | undefined;
  limit: number;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const olderThan = (after: RecordFilter['after']): SQL | undefined =>
  after
    ? or(
        lt(requestRecords.receivedAt, after.receivedAt),
        and(eq(requestRecords.receivedAt, after.receivedAt), lt(requestRecords.requestId, after.requestId)),
      )
    : undefined;

const DAY_MS = 86_400_000;

/**
 * A request id the gateway made (a UUIDv7, src/core/ids.ts) carries the millisecond it was made,
 * within moments of the record's received_at: the lookup looks a day either side of it first, in
 * those partitions only, rather than in every day's.
 */
export const idWindow = (requestId: string | undefined): [Date, Date] | undefined => {
  if (requestId === undefined || !UUID_RE.test(requestId) || requestId[14] !== '7') return undefined;
  const ms = Number.parseInt(requestId.slice(0, 8) + requestId.slice(9, 13), 16);
  return [new Date(ms - DAY_MS), new Date(ms + DAY_MS)];
};

export const searchRecordsQuery = (db: Db, f: RecordFilter, window?: [Date, Date]) => {
  const r = requestRecords;
  return db
    .select()
    .from(r)
    .where(
      and(
        // A UUID is compared as one (the primary key serves it); anything else matches nothing.
        f.requestId !== undefined ? (UUID_RE.test(f.requestId) ? eq(r.requestId, f.requestId.toLowerCase()) : sql`false`) : undefined,
        f.clientRequestId !== undefined ? eq(r.clientRequestId, f.clientRequestId) : undefined,
        f.correlationId !== undefined ? eq(r.correlationId, f.correlationId) : undefined,
        f.customerId ? eq(r.customerId, f.customerId) : undefined,
        f.projectId ? eq(r.projectId, f.projectId) : undefined,
        f.apiKeyId ? eq(r.apiKeyId, f.apiKeyId) : undefined,
        f.start ? gte(r.receivedAt, f.start) : undefined,
        f.end ? lt(r.receivedAt, f.end) : undefined,
        olderThan(f.after),
        window ? and(gte(r.receivedAt, window[0]), lt(r.receivedAt, window[1])) : undefined,
      ),
    )
    .orderBy(desc(r.receivedAt), desc(r.requestId))
    .limit(f.limit);
};

/**
 * The search: by a UUIDv7 request id, first in the days around the id's own time (idWindow); found
 * nowhere there (a record whose id was made elsewhere, or none), in every partition.
 */
export const searchRecords = async (db: Db, f: RecordFilter) => {
  const window = idWindow(f.requestId);
  if (window) {
    const near = await searchRecordsQuery(db, f, window);
    if (near.length > 0) return near;
  }
  return searchRecordsQuery(db, f);
};
