import { parseTimestamp, projectOrDefault } from '../../api/kit.ts';
import { ObservabilityOps } from '../../api/ops/observability.ts';
import { formatUsd } from '../../core/money.ts';
import { recordView } from '../../records/view.ts';
import { searchRecords } from '../../records/search.ts';
import { usageSums } from '../../records/usage.ts';
import { bodyScope, namedScope, op, type OpDef } from '../connect.ts';
import type { ControlDeps, ManagementHooks } from '../deps.ts';
import { decodeToken, encodeToken } from '../paging.ts';

const { SearchRequestRecords, GetUsage } = ObservabilityOps;

const parseTime = (v: string | undefined, field: string): Date | undefined => (v === undefined ? undefined : parseTimestamp(v, field));

export const observabilityOps = (deps: ControlDeps, hooks: ManagementHooks): OpDef[] => [
  op(SearchRequestRecords, {
    scope: namedScope,
    handler: async (input, ctx) => {
      await hooks.flushRecords();
      // A user (scoped to one project) sees that project only; a platform admin may omit projectId for all.
      const project =
        input.customerId && (input.projectId !== undefined || ctx.principal.kind === 'user')
          ? projectOrDefault(input.projectId)
          : undefined;
      const size = input.pageSize ? Math.min(input.pageSize, 1000) : 50;
      const start = parseTime(input.startTime, 'startTime');
      const end = parseTime(input.endTime, 'endTime');
      const cur = input.pageToken ? decodeToken(input.pageToken) : undefined;
      const rows = await searchRecords(deps.readDb ?? deps.db, {
        requestId: input.requestId || undefined,
        clientRequestId: input.clientRequestId || undefined,
        correlationId: input.correlationId || undefined,
        customerId: input.customerId,
        projectId: project,
        apiKeyId: input.apiKeyId,
        start,
        end,
        after: cur ? { receivedAt: new Date(cur.c), requestId: cur.i } : undefined,
        limit: size + 1,
      });
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
      const rows = await usageSums(deps.readDb ?? deps.db, {
        customerId: input.customerId,
        projectId: project,
        apiKeyId: input.apiKeyId,
        start,
        end,
        groupBy: input.groupBy ?? 'api_key',
      });
      const groups = rows.map((r) => ({
        key: r.key,
        requests: r.requests,
        inputTokens: r.inputTokens,
        outputTokens: r.outputTokens,
        cachedInputTokens: r.cachedInputTokens,
        cacheWriteTokens: r.cacheWriteTokens,
        cost: formatUsd(r.costNano),
      }));
      const total = rows.reduce(
        (acc, r) => ({
          requests: acc.requests + r.requests,
          inputTokens: acc.inputTokens + r.inputTokens,
          outputTokens: acc.outputTokens + r.outputTokens,
          cachedInputTokens: acc.cachedInputTokens + r.cachedInputTokens,
          cacheWriteTokens: acc.cacheWriteTokens + r.cacheWriteTokens,
          nano: acc.nano + r.costNano,
        }),
        { requests: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, nano: 0n },
      );
      const { nano, ...totals } = total;
      return { groups, total: { key: '', ...totals, cost: formatUsd(nano) } };
    },
  }),
];
