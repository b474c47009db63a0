import { sql } from 'drizzle-orm';
import type { Db } from '../store/db.ts';

/**
 * request_records' partitions (migration 0019): one per UTC day of received_at, a partition that
 * took the table as it was at the upgrade (everything received before the next midnight), and a
 * default one for a record whose day has none (a late record of a day already dropped, a clock far
 * ahead). The retention sweep (retention.ts) creates the coming days' partitions ahead and drops a
 * whole partition once every project with records in it has a `record-retention` `days` that expired
 * its last instant: a purge costs a catalog change per day, not a delete per row. The rollups lose
 * the days of a dropped partition in the same transaction (request_records_drop_partition).
 */

const DAY_MS = 86_400_000;

export interface Partition {
  name: string;
  /** Its range [lo, hi): lo undefined from MINVALUE, both undefined for the default partition. */
  lo: Date | undefined;
  hi: Date | undefined;
}

/** PGlite answers `{rows}`, postgres.js an array of rows. */
const rowsOf = (r: unknown): Record<string, unknown>[] =>
  Array.isArray(r) ? r : typeof r === 'object' && r !== null && 'rows' in r && Array.isArray(r.rows) ? r.rows : [];

const dateOf = (v: unknown): Date | undefined => (v === null || v === undefined ? undefined : new Date(String(v)));

/** Every partition with its bounds (the catalog's own text of them, cast back to timestamps in SQL). */
export const listPartitions = async (db: Db): Promise<Partition[]> => {
  const rows = rowsOf(
    await db.execute(sql`
      select c.relname as name,
        to_char((regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM [(]''([^'']+)''[)]'))[1]::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as lo,
        to_char((regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO [(]''([^'']+)''[)]'))[1]::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as hi
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'request_records'::regclass
      order by 3 nulls last`),
  );
  return rows.map((r) => ({ name: String(r.name), lo: dateOf(r.lo), hi: dateOf(r.hi) }));
};

/** Creates the partitions of the UTC days from `now`'s through `ahead` days after it; resolves to how many were created. */
export const ensurePartitions = async (db: Db, now: number, ahead = 3): Promise<number> => {
  let created = 0;
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  for (let d = 0; d <= ahead; d++) {
    const day = new Date(today + d * DAY_MS).toISOString().slice(0, 10);
    const [row] = rowsOf(await db.execute(sql`select request_records_add_partition(${day}::date) as created`));
    if (row?.created === true) created++;
  }
  return created;
};

/** `days` of a project's record-retention, keyed `customerId\u0000projectId`; absent: kept forever. */
export type RetentionDays = ReadonlyMap<string, number>;
export const retentionKey = (customerId: string, projectId: string): string => `${customerId}\u0000${projectId}`;

export interface Dropped {
  partitions: number;
  /** The records they held (from the daily rollup). */
  rows: number;
  /** Body segment files (body-files.ts) their rows pointed into. */
  segments: Set<string>;
}

/**
 * Drops every partition (not the default one) whose last instant is past the retention of each
 * project with records in it (the daily rollup says which projects those are; a project without
 * `days` keeps it). Records of a project with a shorter retention in a partition kept for others are
 * left to retention.ts's bounded delete. `bodiesBeside`: the store keeps bodies in segment files
 * (body-files.ts), whose names the dropped rows point into are collected.
 */
export const dropExpiredPartitions = async (db: Db, now: number, days: RetentionDays, bodiesBeside = false): Promise<Dropped> => {
  const out: Dropped = { partitions: 0, rows: 0, segments: new Set() };
  for (const p of await listPartitions(db)) {
    if (!p.hi || p.hi.getTime() > now) continue;
    const hi = p.hi.toISOString();
    const lo = p.lo?.toISOString() ?? null;
    const owners = rowsOf(
      await db.execute(sql`
        select customer_id, project_id, sum(requests)::bigint as n from request_usage_daily
        where day < (${hi}::timestamptz at time zone 'UTC')::date and (${lo}::timestamptz is null or day >= (${lo}::timestamptz at time zone 'UTC')::date)
        group by 1, 2`),
    );
    const expired = owners.every((o) => {
      const keep = days.get(retentionKey(String(o.customer_id), String(o.project_id)));
      return keep !== undefined && (p.hi as Date).getTime() <= now - keep * DAY_MS;
    });
    if (!expired) continue;
    // Only a store keeping bodies beside the rows reads the partition (to know the segments it frees): a drop is otherwise O(1) in its rows.
    const segs = bodiesBeside
      ? rowsOf(
          await db.execute(
            sql`select distinct split_part(bodies_at, ':', 1) as seg from ${sql.identifier(p.name)} where bodies_at is not null`,
          ),
        )
      : [];
    const [done] = rowsOf(
      await db.execute(sql`select request_records_drop_partition(${p.name}, ${lo}::timestamptz, ${hi}::timestamptz) as dropped`),
    );
    if (done?.dropped !== true) continue; // another replica's sweep dropped it first
    out.partitions++;
    out.rows += owners.reduce((n, o) => n + Number(o.n), 0);
    for (const s of segs) out.segments.add(String(s.seg));
  }
  return out;
};
