import { and, eq, gte, lt, or, type SQL, sql } from 'drizzle-orm';
import { unionAll } from 'drizzle-orm/pg-core';
import type { Db } from '../store/db.ts';
import { requestRecords, requestUsageDaily, requestUsageHourly } from '../store/schema/index.ts';

/**
 * GetUsage's sums. Whole UTC days come from request_usage_daily, the whole hours of the partial
 * days at the ends of the range from request_usage_hourly (both kept by triggers on
 * request_records, migrations 0015 and 0019); only the partial hours at the very ends — before the
 * first full hour after `start`, from the last full hour before `end` — are summed from the records
 * themselves (over the received_at index: at most two hours of records). A month answers from ~30
 * rollup rows per key and model plus at most 46 hourly ones, whatever the number of records
 * (bench/records-scale.ts).
 */

export type UsageGroupBy = 'api_key' | 'model' | 'provider' | 'day';

export interface UsageQuery {
  customerId: string;
  projectId?: string | undefined;
  apiKeyId?: string | undefined;
  start?: Date | undefined;
  end?: Date | undefined;
  groupBy: UsageGroupBy;
}

export interface UsageSum {
  key: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  /** Nano-dollars, exact. */
  costNano: bigint;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const floorTo = (d: Date, unit: number): Date => new Date(Math.floor(d.getTime() / unit) * unit);
const ceilTo = (d: Date, unit: number): Date => new Date(Math.ceil(d.getTime() / unit) * unit);
const isoDay = (d: Date): string => d.toISOString().slice(0, 10);

type Range = [Date | undefined, Date | undefined];

/** [s, e) as whole UTC hours [from, to) and the partial hours at its ends (all raw when inside one hour). */
const splitHours = (s: Date, e: Date, hours: [Date, Date][], raw: Range[]): void => {
  const from = ceilTo(s, HOUR_MS);
  const to = floorTo(e, HOUR_MS);
  if (from.getTime() >= to.getTime()) {
    raw.push([s, e]);
    return;
  }
  hours.push([from, to]);
  if (s.getTime() < from.getTime()) raw.push([s, from]);
  if (to.getTime() < e.getTime()) raw.push([to, e]);
};

/**
 * How [start, end) splits: `days` [from, to) of whole UTC days answered by the daily rollup (either
 * end open), `hours` of the partial days answered by the hourly one, and the time ranges read from
 * the records (the partial hours). A range inside one day is hours and records.
 */
export const splitRange = (
  start: Date | undefined,
  end: Date | undefined,
): {
  days?: { from?: string; to?: string };
  hours: [Date, Date][];
  raw: Range[];
} => {
  const from = start ? ceilTo(start, DAY_MS) : undefined;
  const to = end ? floorTo(end, DAY_MS) : undefined;
  const hours: [Date, Date][] = [];
  const raw: Range[] = [];
  if (start && end && from && to && from.getTime() >= to.getTime()) {
    if (start.getTime() < end.getTime()) splitHours(start, end, hours, raw);
    return { hours, raw };
  }
  if (start && from && start.getTime() < from.getTime()) splitHours(start, from, hours, raw);
  if (end && to && to.getTime() < end.getTime()) splitHours(to, end, hours, raw);
  return {
    days: {
      ...(from ? { from: isoDay(from) } : {}),
      ...(to ? { to: isoDay(to) } : {}),
    },
    hours,
    raw,
  };
};

/** The query of usageSums (tests read its plan). */
export const usageQuery = (db: Db, q: UsageQuery) => {
  const { days, hours, raw } = splitRange(q.start, q.end);
  const u = requestUsageDaily;
  const h = requestUsageHourly;
  const r = requestRecords;
  const rollupKey =
    q.groupBy === 'api_key'
      ? sql<string>`${u.apiKeyId}`
      : q.groupBy === 'model'
        ? sql<string>`${u.model}`
        : q.groupBy === 'provider'
          ? sql<string>`${u.provider}`
          : sql<string>`to_char(${u.day}, 'YYYY-MM-DD')`;
  const recordKey =
    q.groupBy === 'api_key'
      ? sql<string>`coalesce(${r.apiKeyId}, '')`
      : q.groupBy === 'model'
        ? sql<string>`coalesce(${r.model}, '')`
        : q.groupBy === 'provider'
          ? sql<string>`coalesce(${r.provider}, '')`
          : sql<string>`to_char(${r.receivedAt} at time zone 'UTC', 'YYYY-MM-DD')`;
  // Each part under the same alias: the union's two sides then have one type. No whole day: the
  // rollup part is `false` (planned as nothing).
  const rollup = db
    .select({
      k: rollupKey.as('k'),
      requests: sql<string>`sum(${u.requests})`.as('requests'),
      inputTokens: sql<string>`sum(${u.inputTokens})`.as('input_tokens'),
      outputTokens: sql<string>`sum(${u.outputTokens})`.as('output_tokens'),
      cachedInputTokens: sql<string>`sum(${u.cachedInputTokens})`.as('cached_input_tokens'),
      cacheWriteTokens: sql<string>`sum(${u.cacheWriteTokens})`.as('cache_write_tokens'),
      costNano: sql<string>`sum(${u.costNanoUsd})`.as('cost_nano'),
    })
    .from(u)
    .where(
      and(
        eq(u.customerId, q.customerId),
        q.projectId ? eq(u.projectId, q.projectId) : undefined,
        q.apiKeyId ? eq(u.apiKeyId, q.apiKeyId) : undefined,
        days ? and(days.from ? gte(u.day, days.from) : undefined, days.to ? lt(u.day, days.to) : undefined) : sql`false`,
      ),
    )
    .groupBy(sql`1`)
    .as('part');
  let parts = db.select().from(rollup).$dynamic();
  if (hours.length > 0) {
    const hourKey =
      q.groupBy === 'api_key'
        ? sql<string>`${h.apiKeyId}`
        : q.groupBy === 'model'
          ? sql<string>`${h.model}`
          : q.groupBy === 'provider'
            ? sql<string>`${h.provider}`
            : sql<string>`to_char(${h.hour} at time zone 'UTC', 'YYYY-MM-DD')`;
    const ranges: SQL[] = hours.map(([s, e]) => and(gte(h.hour, s), lt(h.hour, e)) ?? sql`true`);
    const hourly = db
      .select({
        k: hourKey.as('k'),
        requests: sql<string>`sum(${h.requests})`.as('requests'),
        inputTokens: sql<string>`sum(${h.inputTokens})`.as('input_tokens'),
        outputTokens: sql<string>`sum(${h.outputTokens})`.as('output_tokens'),
        cachedInputTokens: sql<string>`sum(${h.cachedInputTokens})`.as('cached_input_tokens'),
        cacheWriteTokens: sql<string>`sum(${h.cacheWriteTokens})`.as('cache_write_tokens'),
        costNano: sql<string>`sum(${h.costNanoUsd})`.as('cost_nano'),
      })
      .from(h)
      .where(
        and(
          eq(h.customerId, q.customerId),
          q.projectId ? eq(h.projectId, q.projectId) : undefined,
          q.apiKeyId ? eq(h.apiKeyId, q.apiKeyId) : undefined,
          ranges.length === 1 ? ranges[0] : or(...ranges),
        ),
      )
      .groupBy(sql`1`)
      .as('part');
    parts = unionAll(parts, db.select().from(hourly)).$dynamic();
  }
  if (raw.length > 0) {
    const ranges: SQL[] = raw.map(([s, e]) => and(s ? gte(r.receivedAt, s) : undefined, e ? lt(r.receivedAt, e) : undefined) ?? sql`true`);
    const records = db
      .select({
        k: recordKey.as('k'),
        requests: sql<string>`count(*)`.as('requests'),
        inputTokens: sql<string>`sum(${r.inputTokens})`.as('input_tokens'),
        outputTokens: sql<string>`sum(${r.outputTokens})`.as('output_tokens'),
        cachedInputTokens: sql<string>`sum(${r.cachedInputTokens})`.as('cached_input_tokens'),
        cacheWriteTokens: sql<string>`sum(${r.cacheWriteTokens})`.as('cache_write_tokens'),
        costNano: sql<string>`sum(${r.costNanoUsd})`.as('cost_nano'),
      })
      .from(r)
      .where(
        and(
          eq(r.customerId, q.customerId),
          q.projectId ? eq(r.projectId, q.projectId) : undefined,
          q.apiKeyId ? eq(r.apiKeyId, q.apiKeyId) : undefined,
          ranges.length === 1 ? ranges[0] : or(...ranges),
        ),
      )
      .groupBy(sql`1`)
      .as('part');
    parts = unionAll(parts, db.select().from(records)).$dynamic();
  }
  const all = parts.as('parts');
  return db
    .select({
      key: all.k,
      requests: sql`sum(${all.requests})`.mapWith(Number),
      inputTokens: sql`coalesce(sum(${all.inputTokens}), 0)`.mapWith(Number),
      outputTokens: sql`coalesce(sum(${all.outputTokens}), 0)`.mapWith(Number),
      cachedInputTokens: sql`coalesce(sum(${all.cachedInputTokens}), 0)`.mapWith(Number),
      cacheWriteTokens: sql`coalesce(sum(${all.cacheWriteTokens}), 0)`.mapWith(Number),
      costNano: sql`coalesce(sum(${all.costNano}), 0)::text`.mapWith(String),
    })
    .from(all)
    .groupBy(all.k)
    .having(sql`sum(${all.requests}) > 0`)
    .orderBy(all.k);
};

export const usageSums = async (db: Db, q: UsageQuery): Promise<UsageSum[]> => {
  const rows = await usageQuery(db, q);
  return rows.map((row) => ({ ...row, costNano: BigInt(row.costNano) }));
};
