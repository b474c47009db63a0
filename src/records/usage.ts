import { and, eq, gte, lt, or, type SQL, sql } from 'drizzle-orm';
import { unionAll } from 'drizzle-orm/pg-core';
import type { Db } from '../store/db.ts';
import { requestRecords, requestUsageDaily } from '../store/schema/index.ts';

/**
 * GetUsage's sums. Whole UTC days come from request_usage_daily (kept by triggers on
 * request_records, migration 0014); only the partial days at the ends of the range — before the
 * first midnight after `start`, from the last midnight before `end` — are summed from the records
 * themselves (over the received_at index). A month answers from ~30 rollup rows per key and model
 * rather than from every record of the month (bench/records-scale.ts).
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
const floorDay = (d: Date): Date => new Date(Math.floor(d.getTime() / DAY_MS) * DAY_MS);
const ceilDay = (d: Date): Date => new Date(Math.ceil(d.getTime() / DAY_MS) * DAY_MS);
const isoDay = (d: Date): string => d.toISOString().slice(0, 10);

/**
 * How [start, end) splits: `days` [from, to) of whole UTC days answered by the rollup (either end
 * open), and the time ranges read from the records. A range inside one day is all records.
 */
export const splitRange = (
  start: Date | undefined,
  end: Date | undefined,
): {
  days?: { from?: string; to?: string };
  raw: [Date | undefined, Date | undefined][];
} => {
  const from = start ? ceilDay(start) : undefined;
  const to = end ? floorDay(end) : undefined;
  if (from && to && from.getTime() >= to.getTime()) return { raw: [[start, end]] };
  const raw: [Date | undefined, Date | undefined][] = [];
  if (start && from && start.getTime() < from.getTime()) raw.push([start, from]);
  if (end && to && to.getTime() < end.getTime()) raw.push([to, end]);
  return {
    days: {
      ...(from ? { from: isoDay(from) } : {}),
      ...(to ? { to: isoDay(to) } : {}),
    },
    raw,
  };
};

/** The query of usageSums (tests read its plan). */
export const usageQuery = (db: Db, q: UsageQuery) => {
  const { days, raw } = splitRange(q.start, q.end);
  const u = requestUsageDaily;
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
