import { and, desc, eq, gte, lt, or, type SQL, sql } from 'drizzle-orm';
import { parseTimestamp, projectOrDefault, ts } from '../../api/kit.ts';
import { ObservabilityOps } from '../../api/ops/observability.ts';
import { formatUsd } from '../../core/money.ts';
import { type RequestRecordRow, requestRecords } from '../../store/schema/index.ts';
import { bodyScope, namedScope, op, type OpDef } from '../connect.ts';
import type { ControlDeps, ManagementHooks } from '../deps.ts';
import { decodeToken, encodeToken } from '../paging.ts';

const { SearchRequestRecords, GetUsage } = ObservabilityOps;

const parseTime = (v: string | undefined, field: string): Date | undefined => (v === undefined ? undefined : parseTimestamp(v, field));

export const recordView = (r: RequestRecordRow) => ({
  requestId: r.requestId,
  ...(r.clientRequestId ? { clientRequestId: r.clientRequestId } : {}),
  timestamp: ts(r.receivedAt),
  customerId: r.customerId ?? '',
  projectId: r.projectId ?? '',
  apiKeyId: r.apiKeyId ?? '',
  endpoint: r.endpoint,
  model: r.model ?? '',
  provider: r.provider ?? '',
  connection: r.connection ?? '',
  upstreamModel: r.upstreamModel ?? '',
  httpStatus: r.httpStatus,
  latencyMs: r.latencyMs,
  ...(r.ttfbMs !== null ? { ttfbMs: r.ttfbMs } : {}),
  stream: r.stream,
  usage: {
    promptTokens: r.inputTokens,
    completionTokens: r.outputTokens,
    totalTokens: r.totalTokens,
    cachedInputTokens: r.cachedInputTokens,
    cacheWriteTokens: r.cacheWriteTokens,
  },
  cost: formatUsd(r.costNanoUsd),
  attempts: r.attempts,
  ...(r.errorCode ? { errorCode: r.errorCode } : {}),
  requestBody: r.requestBody ?? null,
  responseBody: r.responseBody ?? null,
  ...(r.sanitized ? { sanitized: r.sanitized.split(',') } : {}),
});

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Offset-free paging for records: newest first, cursor = (receivedAt, requestId), same token format as other lists. */
const recordCursor = (token: string | undefined): SQL | undefined => {
  if (!token) return undefined;
  const cur = decodeToken(token);
  const d = new Date(cur.c);
  return or(lt(requestRecords.receivedAt, d), and(eq(requestRecords.receivedAt, d), lt(requestRecords.requestId, cur.i)));
};

export const observabilityOps = (deps: ControlDeps, hooks: ManagementHooks): OpDef[] => [
  op(SearchRequestRecords, {
    scope: namedScope,
    handler: async (input, ctx) => {
      await hooks.flushRecords();
      // A user (scoped to one project) sees that project only; a platform admin may omit projectId for all.
      const project = input.customerId && (input.projectId !== undefined || ctx.principal.kind === 'user') ? projectOrDefault(input.projectId) : undefined;
      const size = input.pageSize ? Math.min(input.pageSize, 1000) : 50;
      const start = parseTime(input.startTime, 'startTime');
      const end = parseTime(input.endTime, 'endTime');
      const rows = await deps.db
        .select()
        .from(requestRecords)
        .where(
          and(
            // A UUID is compared as one (the primary key serves it); anything else matches nothing.
            input.requestId ? (UUID_RE.test(input.requestId) ? eq(requestRecords.requestId, input.requestId.toLowerCase()) : sql`false`) : undefined,
            input.clientRequestId ? eq(requestRecords.clientRequestId, input.clientRequestId) : undefined,
            input.customerId ? eq(requestRecords.customerId, input.customerId) : undefined,
            project ? eq(requestRecords.projectId, project) : undefined,
            input.apiKeyId ? eq(requestRecords.apiKeyId, input.apiKeyId) : undefined,
            start ? gte(requestRecords.receivedAt, start) : undefined,
            end ? lt(requestRecords.receivedAt, end) : undefined,
            recordCursor(input.pageToken),
          ),
        )
        .orderBy(desc(requestRecords.receivedAt), desc(requestRecords.requestId))
        .limit(size + 1);
      const items = rows.slice(0, size);
      const last = items.at(-1);
      const nextPageToken = rows.length > size && last ? encodeToken({ createdAt: last.receivedAt, id: last.requestId }) : '';
      // Bodies kept beside the row (the embedded store in a directory) are read from their files.
      const read = deps.recordBodies;
      const views = await Promise.all(items.map(async (r) => recordView(r.bodiesAt && read ? { ...r, ...(await read(r.bodiesAt)) } : r)));
      return { records: views, nextPageToken };
    },
  }),
  op(GetUsage, {
    scope: bodyScope,
    handler: async (input, ctx) => {
      await hooks.flushRecords();
      const project = input.projectId !== undefined || ctx.principal.kind === 'user' ? projectOrDefault(input.projectId) : undefined;
      const start = parseTime(input.startTime, 'startTime');
      const end = parseTime(input.endTime, 'endTime');
      const by = input.groupBy ?? 'api_key';
      const keyExpr =
        by === 'api_key'
          ? sql<string>`coalesce(${requestRecords.apiKeyId}, '')`
          : by === 'model'
            ? sql<string>`coalesce(${requestRecords.model}, '')`
            : by === 'provider'
              ? sql<string>`coalesce(${requestRecords.provider}, '')`
              : sql<string>`to_char(${requestRecords.receivedAt} at time zone 'UTC', 'YYYY-MM-DD')`;
      const rows = await deps.db
        .select({
          key: keyExpr.as('k'),
          requests: sql`count(*)`.mapWith(Number),
          inputTokens: sql`coalesce(sum(${requestRecords.inputTokens}), 0)`.mapWith(Number),
          outputTokens: sql`coalesce(sum(${requestRecords.outputTokens}), 0)`.mapWith(Number),
          cachedInputTokens: sql`coalesce(sum(${requestRecords.cachedInputTokens}), 0)`.mapWith(Number),
          cacheWriteTokens: sql`coalesce(sum(${requestRecords.cacheWriteTokens}), 0)`.mapWith(Number),
          costNano: sql`coalesce(sum(${requestRecords.costNanoUsd}), 0)::text`.mapWith(String),
        })
        .from(requestRecords)
        .where(
          and(
            eq(requestRecords.customerId, input.customerId),
            project ? eq(requestRecords.projectId, project) : undefined,
            input.apiKeyId ? eq(requestRecords.apiKeyId, input.apiKeyId) : undefined,
            start ? gte(requestRecords.receivedAt, start) : undefined,
            end ? lt(requestRecords.receivedAt, end) : undefined,
          ),
        )
        .groupBy(sql`1`)
        .orderBy(sql`1`);
      const groups = rows.map((r) => ({
        key: r.key,
        requests: r.requests,
        inputTokens: r.inputTokens,
        outputTokens: r.outputTokens,
        cachedInputTokens: r.cachedInputTokens,
        cacheWriteTokens: r.cacheWriteTokens,
        cost: formatUsd(BigInt(r.costNano)),
      }));
      const total = rows.reduce(
        (acc, r) => ({
          requests: acc.requests + r.requests,
          inputTokens: acc.inputTokens + r.inputTokens,
          outputTokens: acc.outputTokens + r.outputTokens,
          cachedInputTokens: acc.cachedInputTokens + r.cachedInputTokens,
          cacheWriteTokens: acc.cacheWriteTokens + r.cacheWriteTokens,
          nano: acc.nano + BigInt(r.costNano),
        }),
        { requests: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, nano: 0n },
      );
      const { nano, ...totals } = total;
      return { groups, total: { key: '', ...totals, cost: formatUsd(nano) } };
    },
  }),
];
