import { and, eq } from 'drizzle-orm';
import pkg from '../../../package.json' with { type: 'json' };
import { logsUrl, otlpLogs, sendOtlp } from '../../audit/otlp.ts';
import { optTs, ts } from '../../api/kit.ts';
import { checkTelemetryConfig, TelemetryConfigOps, TelemetryConfigResources } from '../../api/ops/telemetry-configs.ts';
import { connectError } from '../../core/errors.ts';
import { uuid } from '../../core/ids.ts';
import { type TelemetryConfigRow, telemetryConfigs } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, ManagementHooks, Reader } from '../deps.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { checkSinkUrl } from '../upstream-addresses.ts';

/**
 * Telemetry forwarding configs (the seed's TelemetryForwardingConfig) and the audit forwarder's
 * two operations. authValue is wrapped with the KEK at rest and returned only by Get and Create.
 * Every config is forwarded by src/audit/forwarder.ts: `audit_logs` the audit entries, `traces`,
 * `metrics` and `logs` the request records (src/records/forward.ts). Writes here affect no data
 * plane (no change records).
 */

const {
  CreateTelemetryConfig,
  GetTelemetryConfig,
  ListTelemetryConfigs,
  UpdateTelemetryConfig,
  DeleteTelemetryConfig,
  TestAuditForward,
  TriggerAuditForward,
} = TelemetryConfigOps;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const telemetryConfigOps = (deps: ControlDeps, hooks: ManagementHooks): OpDef[] => {
  const forwarder = () => {
    if (!hooks.auditForwarder) throw connectError('unavailable', 'audit forwarding does not run in this process');
    return hooks.auditForwarder;
  };
  const view = (r: TelemetryConfigRow, withSecret: boolean) => ({
    id: r.id,
    userId: r.userId,
    telemetryType: r.telemetryType,
    sinkUrl: r.sinkUrl,
    protocol: r.protocol,
    authType: r.authType,
    ...(withSecret ? { authValue: r.authValueWrapped ? deps.secrets.unwrap(r.authValueWrapped) : '' } : {}),
    apiKeyHeader: r.apiKeyHeader ?? '',
    enabled: r.enabled,
    forwardIntervalSeconds: r.forwardIntervalSeconds,
    status: r.status,
    lastCheckedAt: optTs(r.lastCheckedAt),
    createdAt: ts(r.createdAt),
    updatedAt: ts(r.updatedAt),
  });
  const find = async (id: string, db: Reader = deps.db, lock = false): Promise<TelemetryConfigRow> => {
    const q = db.select().from(telemetryConfigs).where(eq(telemetryConfigs.id, id.toLowerCase()));
    const [row] = UUID.test(id) ? await (lock ? q.for('update') : q) : [];
    if (!row) throw connectError('not_found', `telemetry config '${id}' not found`, 'id');
    return row;
  };
  /** A sink URL must parse (the pattern only checks the scheme). */
  const checkUrl = (url: string | undefined): void => {
    if (url === undefined) return;
    try {
      logsUrl(url);
    } catch {
      throw connectError('invalid_argument', "invalid field 'sinkUrl': not a valid URL", 'sinkUrl');
    }
  };
  /** A sink (the gateway connects there, whatever the type) and TestAuditForward's: the upstream address rule (checkSinkUrl). */
  const checkSink = (url: string | undefined): Promise<void> | undefined =>
    url !== undefined ? checkSinkUrl(url, deps.upstreamAllowPrivate === true) : undefined;
  return [
    mutation(deps, CreateTelemetryConfig, {
      resourceId: (_i, o) => o?.config.id,
      handler: async (input, { tx }) => {
        const authValue = input.authValue ?? null;
        checkUrl(input.sinkUrl);
        checkTelemetryConfig({ ...input, authValue });
        await checkSink(input.sinkUrl);
        const now = new Date();
        const [row] = await tx
          .insert(telemetryConfigs)
          .values({
            id: uuid(),
            userId: input.userId,
            telemetryType: input.telemetryType,
            sinkUrl: input.sinkUrl,
            protocol: input.protocol,
            authType: input.authType,
            authValueWrapped: authValue ? deps.secrets.wrap(authValue) : null,
            apiKeyHeader: input.apiKeyHeader || null,
            enabled: input.enabled ?? true,
            forwardIntervalSeconds: input.forwardIntervalSeconds ?? 300,
            createdAt: now,
            updatedAt: now,
            // Forwarding starts with the entries (audit_logs) or records stored from now on.
            cursorTs: now,
          })
          .returning();
        return { config: view(row as TelemetryConfigRow, true) };
      },
    }),
    op(GetTelemetryConfig, {
      handler: async (input) => ({ config: view(await find(input.id), true) }),
    }),
    op(ListTelemetryConfigs, {
      handler: async (input) => {
        const size = pageSizeOf(input.pageSize);
        const k = keyset(telemetryConfigs.createdAt, telemetryConfigs.id, input.pageToken);
        const rows = await deps.db
          .select()
          .from(telemetryConfigs)
          .where(and(input.telemetryType !== undefined ? eq(telemetryConfigs.telemetryType, input.telemetryType) : undefined, k.where))
          .orderBy(...k.order)
          .limit(size + 1);
        const p = page(rows, size);
        return { configs: p.items.map((r) => view(r, false)), nextPageToken: p.nextPageToken };
      },
    }),
    mutation(deps, UpdateTelemetryConfig, {
      resourceId: (i) => rid(i.id),
      handler: async (input, { tx }) => {
        checkUrl(input.sinkUrl);
        const current = await find(input.id, tx, true);
        const authValue =
          input.authValue !== undefined
            ? input.authValue || null
            : current.authValueWrapped
              ? deps.secrets.unwrap(current.authValueWrapped)
              : null;
        checkTelemetryConfig({
          telemetryType: current.telemetryType,
          protocol: input.protocol ?? current.protocol,
          authType: input.authType ?? current.authType,
          authValue,
        });
        await checkSink(input.sinkUrl);
        const patch: Partial<typeof telemetryConfigs.$inferInsert> = { updatedAt: new Date() };
        if (input.apiKeyHeader !== undefined) patch.apiKeyHeader = input.apiKeyHeader || null;
        if (input.authType !== undefined) patch.authType = input.authType;
        if (input.authValue !== undefined) patch.authValueWrapped = input.authValue ? deps.secrets.wrap(input.authValue) : null;
        if (input.enabled !== undefined) patch.enabled = input.enabled;
        if (input.forwardIntervalSeconds !== undefined) patch.forwardIntervalSeconds = input.forwardIntervalSeconds;
        if (input.protocol !== undefined) patch.protocol = input.protocol;
        if (input.sinkUrl !== undefined) patch.sinkUrl = input.sinkUrl;
        if (input.status !== undefined) patch.status = input.status;
        const [row] = await tx.update(telemetryConfigs).set(patch).where(eq(telemetryConfigs.id, current.id)).returning();
        if (!row) throw connectError('not_found', `telemetry config '${input.id}' not found`, 'id');
        return { config: view(row, false) };
      },
    }),
    mutation(deps, DeleteTelemetryConfig, {
      resourceId: (i) => rid(i.id),
      handler: async (input, { tx }) => {
        const current = await find(input.id, tx, true);
        const gone = await tx.delete(telemetryConfigs).where(eq(telemetryConfigs.id, current.id)).returning({ id: telemetryConfigs.id });
        if (gone.length === 0) throw connectError('not_found', `telemetry config '${input.id}' not found`, 'id');
        return { success: true };
      },
    }),
    op(TestAuditForward, {
      handler: async (input) => {
        checkUrl(input.sinkUrl);
        await checkSink(input.sinkUrl);
        if (input.protocol !== 'http/json')
          return { ok: false, message: "only protocol 'http/json' is supported for audit-log forwarding" };
        const now = new Date().toISOString();
        const synthetic = {
          id: uuid(),
          timestamp: now,
          createdAt: now,
          userId: '',
          userEmail: '',
          actorType: 'system',
          actionType: 'TEST',
          resourceType: TelemetryConfigResources.telemetryConfig.audit,
          resourceId: '',
          endpoint: '/admin.v1.AdminService/TestAuditForward',
          httpMethod: 'POST',
          statusCode: 200,
          success: true,
          errorMessage: '',
          correlationId: '',
          sourceIp: '',
          userAgent: '',
          metadata: { synthetic: true, ...(input.owner ? { owner: input.owner } : {}) },
          requestBody: {},
          requestParams: {},
          responseData: {},
        };
        return sendOtlp(
          logsUrl(input.sinkUrl),
          { authType: input.authType, authValue: input.authValue ?? null, apiKeyHeader: input.apiKeyHeader ?? null },
          otlpLogs([synthetic], pkg.version),
        );
      },
    }),
    mutation(deps, TriggerAuditForward, {
      resourceId: () => 'audit_logs',
      // The forwarder moves cursors in transactions of its own, so it runs before the mutation's.
      before: async () => {
        await forwarder().drainAll(['audit_logs']);
      },
      handler: async () => ({}),
    }),
  ];
};
