import { eq } from 'drizzle-orm';
import { t } from 'elysia';
import pkg from '../../../package.json' with { type: 'json' };
import type { AuditForwarder } from '../../audit/forwarder.ts';
import { logsUrl, otlpLogs, sendOtlp } from '../../audit/otlp.ts';
import { connectError } from '../../core/errors.ts';
import { uuid } from '../../core/ids.ts';
import { type TelemetryConfigRow, telemetryConfigs } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader } from '../deps.ts';
import { mutation } from '../mutation.ts';
import { checkSinkUrl } from '../upstream-addresses.ts';
import { Enum, Int32, OptTimestamp, Str, Success, Timestamp, optTs, ts } from '../schemas.ts';

/**
 * Telemetry forwarding configs (the seed's TelemetryForwardingConfig) and the audit forwarder's
 * two operations. authValue is wrapped with the KEK at rest and returned only by Get and Create.
 * Configs of type `audit_logs` are forwarded by src/audit/forwarder.ts; the other types are
 * stored for the operator's tooling. Writes here affect no data plane (no change records).
 */

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Telemetry forwarding';

const TYPES = ['traces', 'metrics', 'logs', 'audit_logs'] as const;
const PROTOCOLS = ['grpc', 'http/json', 'http/protobuf'] as const;
const AUTH_TYPES = ['none', 'bearer', 'basic', 'api_key'] as const;
const STATUSES = ['connected', 'disconnected', 'error', 'testing'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const SinkUrl = () => Str(1, 2048, { pattern: '^https?://', description: 'http(s) URL of the sink (1-2048); for audit_logs the OTLP/HTTP base, /v1/logs is appended when absent' });
const AuthValue = () => Str(0, 4096, { description: 'plaintext secret (0-4096): the bearer token, `user:password` for basic, or the API key; stored encrypted' });
/** An HTTP header name (RFC 9110 token), at most 256. */
const ApiKeyHeader = () => Str(0, 256, { pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]*$", description: 'header carrying the API key for api_key auth (0-256, an HTTP header name; empty = x-api-key)' });
const Interval = () => Int32({ minimum: 0, maximum: 86_400, description: 'int32 0..86400 (default 300): seconds between forwards of audit_logs; 0 = every second' });

const ConfigOut = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    userId: t.String({ description: 'owner' }),
    telemetryType: t.String(),
    sinkUrl: t.String(),
    protocol: t.String(),
    authType: t.String(),
    authValue: t.Optional(t.String({ description: 'decrypted; returned only by Get and Create (empty when none)' })),
    apiKeyHeader: t.String({ description: 'empty when unset' }),
    enabled: t.Boolean(),
    forwardIntervalSeconds: t.Integer(),
    status: t.String({ description: 'connected, disconnected, error or testing' }),
    lastCheckedAt: OptTimestamp('last forwarding attempt; absent before the first'),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'TelemetryForwardingConfig' },
);

const OneConfig = t.Object({ config: ConfigOut });

export const telemetryConfigOps = (deps: ControlDeps, forwarder: () => AuditForwarder): OpDef[] => {
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
  /** An audit_logs sink (the gateway connects there) and TestAuditForward's: the upstream address rule (checkSinkUrl). */
  const checkSink = (url: string | undefined, telemetryType: string): Promise<void> | undefined =>
    url !== undefined && telemetryType === 'audit_logs' ? checkSinkUrl(url, deps.upstreamAllowPrivate === true) : undefined;
  /** Rules across fields: a secret for every auth type but none; audit forwarding speaks http/json only. */
  const check = (c: { telemetryType: string; protocol: string; authType: string; authValue: string | null }) => {
    if (c.authType !== 'none' && !c.authValue) throw connectError('invalid_argument', `invalid field 'authValue': required with authType '${c.authType}'`, 'authValue');
    if (c.telemetryType === 'audit_logs' && c.protocol !== 'http/json')
      throw connectError('invalid_argument', "invalid field 'protocol': audit_logs forwarding supports only 'http/json'", 'protocol');
  };

  return [
    mutation(deps, {
      action: 'CREATE',
      resource: 'telemetry_config',
      resourceId: (_i, o) => o?.config.id,
      service: ADMIN,
      group: GROUP,
      name: 'CreateTelemetryConfig',
      summary: 'Create a telemetry forwarding config (returns authValue decrypted)',
      notes:
        "enabled defaults to true, forwardIntervalSeconds to 300, status starts 'disconnected'. authType other than 'none' needs authValue. audit_logs configs need protocol 'http/json' and forward the audit entries written from their creation on (docs/audit.md); their sinkUrl must not be, or resolve to, a loopback, private, link-local, shared or metadata address unless GATEWAY_UPSTREAM_ALLOW_PRIVATE=1 (permission_denied naming sinkUrl).",
      permission: 'platform_admin',
      input: t.Object(
        {
          userId: Str(1, 255, { description: 'owner (1-255)' }),
          telemetryType: Enum(TYPES),
          sinkUrl: SinkUrl(),
          protocol: Enum(PROTOCOLS),
          authType: Enum(AUTH_TYPES),
          authValue: t.Optional(AuthValue()),
          apiKeyHeader: t.Optional(ApiKeyHeader()),
          enabled: t.Optional(t.Boolean({ description: 'default true' })),
          forwardIntervalSeconds: t.Optional(Interval()),
        },
        { additionalProperties: false },
      ),
      output: OneConfig,
      handler: async (input, { tx }) => {
        const authValue = input.authValue ?? null;
        checkUrl(input.sinkUrl);
        check({ ...input, authValue });
        await checkSink(input.sinkUrl, input.telemetryType);
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
            // Forwarding starts with the entries written from now on.
            cursorTs: now,
          })
          .returning();
        return { config: view(row as TelemetryConfigRow, true) };
      },
    }),
    op({
      service: ADMIN,
      group: GROUP,
      name: 'GetTelemetryConfig',
      summary: 'Get a telemetry forwarding config (returns authValue decrypted)',
      permission: 'platform_admin',
      input: t.Object({ id: Str(1, 64, { description: 'config id (1-64)' }) }, { additionalProperties: false }),
      output: OneConfig,
      handler: async (input) => ({ config: view(await find(input.id), true) }),
    }),
    mutation(deps, {
      action: 'UPDATE',
      resource: 'telemetry_config',
      resourceId: (i) => i.id,
      service: ADMIN,
      group: GROUP,
      name: 'UpdateTelemetryConfig',
      summary: 'Update a telemetry forwarding config (unset fields stay unchanged)',
      notes: "status overrides the stored status (the audit forwarder sets it again at its next attempt). authValue is not returned; GetTelemetryConfig returns it.",
      permission: 'platform_admin',
      input: t.Object(
        {
          id: Str(1, 64, { description: 'config id (1-64)' }),
          apiKeyHeader: t.Optional(ApiKeyHeader()),
          authType: t.Optional(Enum(AUTH_TYPES)),
          authValue: t.Optional(AuthValue()),
          enabled: t.Optional(t.Boolean()),
          forwardIntervalSeconds: t.Optional(Interval()),
          protocol: t.Optional(Enum(PROTOCOLS)),
          sinkUrl: t.Optional(SinkUrl()),
          status: t.Optional(Enum(STATUSES)),
        },
        { additionalProperties: false },
      ),
      output: OneConfig,
      handler: async (input, { tx }) => {
        checkUrl(input.sinkUrl);
        const current = await find(input.id, tx, true);
        const authValue = input.authValue !== undefined ? input.authValue || null : current.authValueWrapped ? deps.secrets.unwrap(current.authValueWrapped) : null;
        check({ telemetryType: current.telemetryType, protocol: input.protocol ?? current.protocol, authType: input.authType ?? current.authType, authValue });
        await checkSink(input.sinkUrl, current.telemetryType);
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
    mutation(deps, {
      action: 'DELETE',
      resource: 'telemetry_config',
      resourceId: (i) => i.id,
      service: ADMIN,
      group: GROUP,
      name: 'DeleteTelemetryConfig',
      summary: 'Delete a telemetry forwarding config',
      permission: 'platform_admin',
      input: t.Object({ id: Str(1, 64, { description: 'config id (1-64)' }) }, { additionalProperties: false }),
      output: Success(),
      handler: async (input, { tx }) => {
        const current = await find(input.id, tx, true);
        const gone = await tx.delete(telemetryConfigs).where(eq(telemetryConfigs.id, current.id)).returning({ id: telemetryConfigs.id });
        if (gone.length === 0) throw connectError('not_found', `telemetry config '${input.id}' not found`, 'id');
        return { success: true };
      },
    }),
    op({
      service: ADMIN,
      group: GROUP,
      name: 'TestAuditForward',
      summary: 'Send one synthetic audit record to a sink (OTLP logs over HTTP/JSON)',
      notes:
        "The sink URL gets /v1/logs appended when absent. Only protocol 'http/json' is supported (others answer ok false). authValue is plaintext. ok is true when the sink answered 2xx (within 10 s); otherwise message says why (status code or network error, never the sink's body). Nothing is stored. A sinkUrl that is, or resolves to, a loopback, private, link-local, shared or metadata address is permission_denied naming sinkUrl unless GATEWAY_UPSTREAM_ALLOW_PRIVATE=1 (the test is not a port scanner).",
      permission: 'platform_admin',
      input: t.Object(
        {
          sinkUrl: SinkUrl(),
          protocol: Enum(PROTOCOLS),
          authType: Enum(AUTH_TYPES),
          authValue: t.Optional(AuthValue()),
          apiKeyHeader: t.Optional(ApiKeyHeader()),
          owner: t.Optional(Str(0, 255, { description: 'logging hint (0-255)' })),
        },
        { additionalProperties: false },
      ),
      output: t.Object({ ok: t.Boolean(), message: t.String({ description: 'diagnostic when ok is false; empty otherwise' }) }),
      handler: async (input) => {
        checkUrl(input.sinkUrl);
        await checkSink(input.sinkUrl, 'audit_logs');
        if (input.protocol !== 'http/json') return { ok: false, message: "only protocol 'http/json' is supported for audit-log forwarding" };
        const now = new Date().toISOString();
        const synthetic = {
          id: uuid(),
          timestamp: now,
          createdAt: now,
          userId: '',
          userEmail: '',
          actorType: 'system',
          actionType: 'TEST',
          resourceType: 'telemetry_config',
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
        return sendOtlp(logsUrl(input.sinkUrl), { authType: input.authType, authValue: input.authValue ?? null, apiKeyHeader: input.apiKeyHeader ?? null }, otlpLogs([synthetic], pkg.version));
      },
    }),
    mutation(deps, {
      action: 'UPDATE',
      resource: 'audit_forwarding',
      resourceId: () => 'audit_logs',
      service: ADMIN,
      group: GROUP,
      name: 'TriggerAuditForward',
      summary: 'Forward audit entries to every enabled audit_logs config now',
      notes: 'Drains every enabled audit_logs config at once, whatever its interval or backoff, and answers when done (a config another replica is forwarding for is left to it). owner is a logging hint.',
      permission: 'platform_admin',
      input: t.Object({ owner: t.Optional(Str(0, 255, { description: 'logging hint (0-255)' })) }, { additionalProperties: false }),
      output: t.Object({}),
      // The forwarder moves cursors in transactions of its own, so it runs before the mutation's.
      before: async () => {
        await forwarder().drainAll();
      },
      handler: async () => ({}),
    }),
  ];
};
