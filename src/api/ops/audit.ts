import { Type as t } from '@sinclair/typebox';
import { Enum, Int32, Str, TimestampIn, Uuid } from '../kit.ts';
import { defineOp } from '../op.ts';

/** The audit log (contract §3.3): every management call, queried by the platform admin. */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Audit';

const Struct = (description: string) => t.Record(t.String(), t.Unknown(), { description });
const Filter = (description: string) => t.Optional(Str(0, 255, { description }));

/** The seed's AuditLogEntry, exactly as src/audit/entry.ts builds it (the leaf of contract §3.3 is computed over it). */
export const AuditLogEntryOut = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    timestamp: t.String({ description: 'RFC 3339 UTC, millisecond precision' }),
    createdAt: t.String(),
    userId: t.String({
      description:
        "the caller: a user token's subject, 'platform-admin' for the platform-admin token, 'system' for the gateway itself, '' when not authenticated",
    }),
    userEmail: t.String({ description: 'when known (user tokens carry none yet)' }),
    actorType: t.String({ description: 'user, system or service_account' }),
    actionType: t.String({ description: 'CREATE, UPDATE, DELETE, REVOKE, ISSUE' }),
    resourceType: t.String(),
    resourceId: t.String(),
    endpoint: t.String({ description: 'POST path of the operation' }),
    httpMethod: t.String(),
    statusCode: t.Integer({ description: 'int32: the HTTP status answered' }),
    success: t.Boolean(),
    errorMessage: t.String({ description: 'the error message answered, for a refused call' }),
    correlationId: t.String({ description: "the request's id, as answered in X-Request-ID" }),
    sourceIp: t.String({ description: 'the TCP peer of the management listener' }),
    userAgent: t.String(),
    metadata: Struct('principal kind, clientRequestId (the X-Request-ID the client sent), cause (system entries)'),
    requestBody: Struct('the request with every secret replaced by [REDACTED]'),
    requestParams: Struct('query parameters (none: operations take a JSON body)'),
    responseData: Struct('the response with every secret replaced by [REDACTED]; {} for a refused call'),
  },
  { description: 'AuditLogEntry' },
);

export const AuditOps = {
  QueryAuditLogs: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'QueryAuditLogs',
    summary: 'Query audit log entries (filters, either order, keyset paging, total count)',
    notes: [
      'Every filter is optional and exact (time range: startTime inclusive, endTime exclusive; success unset matches both). orderDirection `desc` (default: newest first) or `asc`, by (timestamp, id).',
      'pageSize: unset or 0 = 50; values above 1000 are served as 1000. nextPageToken is empty when exhausted; a token is bound to the direction it was issued for.',
      'Paging is stable while entries are appended: a page continues strictly after the last entry returned (no duplicates, no gaps). totalCount counts every matching entry across pages (int64 as a string).',
    ].join('\n\n'),
    permission: 'platform_admin',
    input: t.Object(
      {
        startTime: t.Optional(TimestampIn('inclusive')),
        endTime: t.Optional(TimestampIn('exclusive')),
        actionType: Filter('e.g. CREATE, UPDATE, DELETE, REVOKE, ISSUE'),
        actorType: Filter('user, system or service_account'),
        correlationId: Filter("a request's X-Request-ID"),
        resourceId: Filter('the resource id as recorded'),
        resourceType: Filter('e.g. customer, project, route, api_key, dataplane'),
        userId: Filter('the caller'),
        success: t.Optional(t.Boolean({ description: 'unset matches both' })),
        orderDirection: t.Optional(Enum(['asc', 'desc'] as const, "'asc' or 'desc' (default)")),
        pageSize: t.Optional(Int32({ minimum: 0, description: 'int32; 0 or unset = 50; hard cap 1000' })),
        pageToken: t.Optional(Str(0, 512, { description: 'opaque token from nextPageToken' })),
      },
      { additionalProperties: false },
    ),
    output: t.Object({
      logs: t.Array(AuditLogEntryOut),
      nextPageToken: t.String({ description: 'empty when exhausted' }),
      totalCount: t.String({ description: 'int64: all matching entries across pages' }),
    }),
  }),
  GetAuditLog: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetAuditLog',
    summary: 'Get one audit log entry by id',
    notes:
      'The entry exactly as QueryAuditLogs returns it; its RFC 8785 canonical JSON is the leaf hashed into the audit checkpoints (docs/audit.md). Unknown id: not_found.',
    permission: 'platform_admin',
    input: t.Object({ id: Uuid('audit entry UUID') }, { additionalProperties: false }),
    output: t.Object({ log: AuditLogEntryOut }),
  }),
};
