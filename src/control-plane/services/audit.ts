import { parseTimestamp } from '../../api/kit.ts';
import { AuditOps } from '../../api/ops/audit.ts';
import { type AuditFilter, auditPageSize, auditTokenDirection, getAuditLog, queryAuditLogs } from '../../audit/query.ts';
import { auditEntryView } from '../../audit/entry.ts';
import { connectError } from '../../core/errors.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { decodeToken } from '../paging.ts';

const { QueryAuditLogs, GetAuditLog } = AuditOps;

export const auditOps = (deps: ControlDeps): OpDef[] => [
  op(QueryAuditLogs, {
    handler: async (input) => {
      const direction = input.orderDirection ?? 'desc';
      const cur = input.pageToken ? decodeToken(input.pageToken) : undefined;
      const issuedFor = input.pageToken ? auditTokenDirection(input.pageToken) : undefined;
      if (issuedFor && issuedFor !== direction)
        throw connectError('invalid_argument', `invalid field 'pageToken': issued for orderDirection '${issuedFor}'`, 'pageToken');
      const cursor = cur ? { at: new Date(cur.c), id: cur.i } : undefined;
      const filter: AuditFilter = {
        ...(input.startTime !== undefined ? { startTime: parseTimestamp(input.startTime, 'startTime') } : {}),
        ...(input.endTime !== undefined ? { endTime: parseTimestamp(input.endTime, 'endTime') } : {}),
        ...(input.actionType ? { actionType: input.actionType } : {}),
        ...(input.actorType ? { actorType: input.actorType } : {}),
        ...(input.correlationId ? { correlationId: input.correlationId } : {}),
        ...(input.resourceId ? { resourceId: input.resourceId } : {}),
        ...(input.resourceType ? { resourceType: input.resourceType } : {}),
        ...(input.userId ? { userId: input.userId } : {}),
        ...(input.success !== undefined ? { success: input.success } : {}),
      };
      const page = await queryAuditLogs(deps.db, filter, direction, auditPageSize(input.pageSize), cursor);
      return { logs: page.rows.map(auditEntryView), nextPageToken: page.nextPageToken, totalCount: String(page.totalCount) };
    },
  }),
  op(GetAuditLog, {
    handler: async (input) => {
      const row = await getAuditLog(deps.db, input.id);
      if (!row) throw connectError('not_found', `audit log entry '${input.id}' not found`, 'id');
      return { log: auditEntryView(row) };
    },
  }),
];
