import { and, desc, eq, gte, lt, or, type SQL, sql } from 'drizzle-orm';
import { t } from 'elysia';
import { formatUsd } from '../../core/money.ts';
import { type RequestRecordRow, requestRecords } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { decodeToken, encodeToken } from '../paging.ts';
import { CustomerRef, PageSize, PageToken, ProjectRef, parseTimestamp, Timestamp, TimestampIn, projectOrDefault, ts } from '../schemas.ts';

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Observability';

const Time = (description: string) => t.Optional(TimestampIn(description));
const parseTime = (v: string | undefined, field: string): Date | undefined => (v === undefined ? undefined : parseTimestamp(v, field));

const Usage = t.Object({ promptTokens: t.Number(), completionTokens: t.Number(), totalTokens: t.Number(), cachedInputTokens: t.Number(), cacheWriteTokens: t.Number() });
export const RecordOut = t.Object(
  {
    requestId: t.String({ description: 'X-Request-ID' }),
    clientRequestId: t.Optional(t.String({ description: 'X-Client-Request-ID, when the client sent one' })),
    timestamp: Timestamp(),
    customerId: t.String(),
    projectId: t.String(),
    apiKeyId: t.String(),
    endpoint: t.String(),
    model: t.String(),
    provider: t.String(),
    connection: t.String(),
    upstreamModel: t.String(),
    httpStatus: t.Number(),
    latencyMs: t.Number(),
    ttfbMs: t.Optional(t.Number()),
    stream: t.Boolean(),
    usage: Usage,
    cost: t.String({ description: 'USD, decimal string' }),
    attempts: t.Number(),
    errorCode: t.Optional(t.String()),
    requestBody: t.Unknown(),
    responseBody: t.Unknown(),
    sanitized: t.Optional(
      t.Array(t.String(), {
        description: 'Present when the record had to be changed to be stored: usage (token counts clamped or rounded), text (ill-formed text or NUL cleaned), numbers, bodies (bodies left out)',
      }),
    ),
  },
  { description: 'Request record' },
);
const UsageGroup = t.Object({
  key: t.String(),
  requests: t.Number(),
  inputTokens: t.Number(),
  outputTokens: t.Number(),
  cachedInputTokens: t.Number(),
  cacheWriteTokens: t.Number(),
  cost: t.String({ description: 'USD, decimal string' }),
});

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

const GROUP_BY = ['api_key', 'model', 'provider', 'day'] as const;

export const observabilityOps = (deps: ControlDeps, flushRecords: () => Promise<void>): OpDef[] => [
  op({
    service: ADMIN,
    group: GROUP,
    name: 'SearchRequestRecords',
    summary: 'Search per-request records by X-Request-ID, X-Client-Request-ID, tenant, key and time',
    permission: 'project_member',
    scope: (i) => (i.customerId ? { customerId: i.customerId, projectId: projectOrDefault(i.projectId) } : undefined),
    input: t.Object(
      {
        requestId: t.Optional(t.String({ maxLength: 64 })),
        clientRequestId: t.Optional(t.String({ maxLength: 256 })),
        customerId: t.Optional(CustomerRef()),
        projectId: t.Optional(ProjectRef()),
        apiKeyId: t.Optional(t.String({ maxLength: 64 })),
        startTime: Time('inclusive'),
        endTime: Time('exclusive'),
        pageSize: PageSize(),
        pageToken: PageToken(),
      },
      { additionalProperties: false },
    ),
    output: t.Object({ records: t.Array(RecordOut), nextPageToken: t.String() }),
    handler: async (input, ctx) => {
      await flushRecords();
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
  op({
    service: ADMIN,
    group: GROUP,
    name: 'GetUsage',
    summary: 'Requests, tokens and cost per API key, model, provider or day',
    permission: 'project_member',
    scope: (i) => ({ customerId: i.customerId, projectId: projectOrDefault(i.projectId) }),
    input: t.Object(
      {
        customerId: CustomerRef(),
        projectId: t.Optional(ProjectRef()),
        apiKeyId: t.Optional(t.String({ maxLength: 64 })),
        startTime: Time('inclusive'),
        endTime: Time('exclusive'),
        groupBy: t.Optional(t.Union(GROUP_BY.map((g) => t.Literal(g)))),
      },
      { additionalProperties: false },
    ),
    output: t.Object({ groups: t.Array(UsageGroup), total: UsageGroup }),
    handler: async (input, ctx) => {
      await flushRecords();
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
