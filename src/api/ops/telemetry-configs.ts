import { Type as t } from '@sinclair/typebox';
import { connectError } from '../../core/errors.ts';
import { checkHeaderValue } from '../header-values.ts';
import { Enum, Int32, OptTimestamp, Page, PageSize, PageToken, Str, Success, Timestamp } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource, reqText } from '../resource.ts';

/**
 * Telemetry forwarding configs (the seed's TelemetryForwardingConfig) and the audit forwarder's
 * two operations. authValue is wrapped with the KEK at rest and returned only by Get and Create.
 * Every config is forwarded (src/audit/forwarder.ts): `audit_logs` the audit entries, `traces`,
 * `metrics` and `logs` the request records of every project (src/records/forward.ts).
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Telemetry forwarding';

export const TELEMETRY_TYPES = ['traces', 'metrics', 'logs', 'audit_logs'] as const;
export const TELEMETRY_PROTOCOLS = ['grpc', 'http/json', 'http/protobuf'] as const;
export const TELEMETRY_AUTH_TYPES = ['none', 'bearer', 'basic', 'api_key'] as const;
export const TELEMETRY_STATUSES = ['connected', 'disconnected', 'error', 'testing'] as const;

const SinkUrl = () =>
  Str(1, 2048, {
    pattern: '^https?://',
    description:
      'http(s) URL of the sink (1-2048): the OTLP/HTTP base (/v1/logs, /v1/traces or /v1/metrics is appended when absent), or the OTLP/gRPC host:port as http(s)://host:port',
  });
const AuthValue = () =>
  Str(0, 4096, { description: 'plaintext secret (0-4096): the bearer token, `user:password` for basic, or the API key; stored encrypted' });
/** An HTTP header name (RFC 9110 token), at most 256. */
const ApiKeyHeader = () =>
  Str(0, 256, {
    pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]*$",
    description: 'header carrying the API key for api_key auth (0-256, an HTTP header name; empty = x-api-key)',
  });
const Interval = () =>
  Int32({
    minimum: 0,
    maximum: 86_400,
    description:
      'int32 0..86400 (default 300): seconds between forwards of audit_logs; 0 = every second (traces, metrics and logs forward continuously)',
  });
const ConfigId = () => Str(1, 64, { description: 'config id (1-64)' });
const Owner = () => Str(0, 255, { description: 'logging hint (0-255)' });

export const TelemetryConfigOut = t.Object(
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

const OneConfig = t.Object({ config: TelemetryConfigOut });

/**
 * Rules across fields of a config (pure: the Terraform provider can run them at plan time): a
 * secret for every auth type but none; audit forwarding speaks http/json only.
 */
export const checkTelemetryConfig = (c: { telemetryType: string; protocol: string; authType: string; authValue: string | null }): void => {
  if (c.authType !== 'none' && !c.authValue)
    throw connectError('invalid_argument', `invalid field 'authValue': required with authType '${c.authType}'`, 'authValue');
  // A bearer token or an API key is sent as a header value as it is (basic's user:password goes base64-encoded).
  if ((c.authType === 'bearer' || c.authType === 'api_key') && c.authValue) checkHeaderValue('authValue', c.authValue);
  if (c.telemetryType === 'audit_logs' && c.protocol !== 'http/json')
    throw connectError('invalid_argument', "invalid field 'protocol': audit_logs forwarding supports only 'http/json'", 'protocol');
};

export const TelemetryConfigOps = {
  CreateTelemetryConfig: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateTelemetryConfig',
    summary: 'Create a telemetry forwarding config (returns authValue decrypted)',
    notes:
      "enabled defaults to true, forwardIntervalSeconds to 300, status starts 'disconnected'. authType other than 'none' needs authValue. audit_logs configs need protocol 'http/json' and forward the audit entries written from their creation on, every forwardIntervalSeconds (docs/audit.md). traces, metrics and logs configs forward the request records of every project stored from their creation on, continuously, as OTLP spans, delta metrics or log records over http/json, http/protobuf or grpc (docs/observability.md, Forwarding). A sinkUrl must not be, or resolve to, a loopback, private, link-local, shared or metadata address unless GATEWAY_UPSTREAM_ALLOW_PRIVATE=1 (permission_denied naming sinkUrl).",
    permission: 'platform_admin',
    mutates: { action: 'CREATE', resource: 'telemetry_config' },
    input: t.Object(
      {
        userId: Str(1, 255, { description: 'owner (1-255)' }),
        telemetryType: Enum(TELEMETRY_TYPES),
        sinkUrl: SinkUrl(),
        protocol: Enum(TELEMETRY_PROTOCOLS),
        authType: Enum(TELEMETRY_AUTH_TYPES),
        authValue: t.Optional(AuthValue()),
        apiKeyHeader: t.Optional(ApiKeyHeader()),
        enabled: t.Optional(t.Boolean({ description: 'default true' })),
        forwardIntervalSeconds: t.Optional(Interval()),
      },
      { additionalProperties: false },
    ),
    output: OneConfig,
  }),
  GetTelemetryConfig: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetTelemetryConfig',
    summary: 'Get a telemetry forwarding config (returns authValue decrypted)',
    permission: 'platform_admin',
    input: t.Object({ id: ConfigId() }, { additionalProperties: false }),
    output: OneConfig,
  }),
  ListTelemetryConfigs: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListTelemetryConfigs',
    summary: 'List the telemetry forwarding configs (oldest first; never authValue)',
    notes: 'telemetryType narrows to one type. authValue is not listed: GetTelemetryConfig returns it.',
    permission: 'platform_admin',
    input: t.Object(
      { telemetryType: t.Optional(Enum(TELEMETRY_TYPES)), pageSize: PageSize(), pageToken: PageToken() },
      { additionalProperties: false },
    ),
    output: Page('configs', TelemetryConfigOut),
  }),
  UpdateTelemetryConfig: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'UpdateTelemetryConfig',
    summary: 'Update a telemetry forwarding config (unset fields stay unchanged)',
    notes:
      'status overrides the stored status (the forwarder sets it again at its next attempt). authValue is not returned; GetTelemetryConfig returns it. A new sinkUrl follows the same address rule as on create.',
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'telemetry_config' },
    input: t.Object(
      {
        id: ConfigId(),
        apiKeyHeader: t.Optional(ApiKeyHeader()),
        authType: t.Optional(Enum(TELEMETRY_AUTH_TYPES)),
        authValue: t.Optional(AuthValue()),
        enabled: t.Optional(t.Boolean()),
        forwardIntervalSeconds: t.Optional(Interval()),
        protocol: t.Optional(Enum(TELEMETRY_PROTOCOLS)),
        sinkUrl: t.Optional(SinkUrl()),
        status: t.Optional(Enum(TELEMETRY_STATUSES)),
      },
      { additionalProperties: false },
    ),
    output: OneConfig,
  }),
  DeleteTelemetryConfig: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'DeleteTelemetryConfig',
    summary: 'Delete a telemetry forwarding config',
    permission: 'platform_admin',
    mutates: { action: 'DELETE', resource: 'telemetry_config' },
    input: t.Object({ id: ConfigId() }, { additionalProperties: false }),
    output: Success(),
  }),
  TestAuditForward: defineOp({
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
        protocol: Enum(TELEMETRY_PROTOCOLS),
        authType: Enum(TELEMETRY_AUTH_TYPES),
        authValue: t.Optional(AuthValue()),
        apiKeyHeader: t.Optional(ApiKeyHeader()),
        owner: t.Optional(Owner()),
      },
      { additionalProperties: false },
    ),
    output: t.Object({ ok: t.Boolean(), message: t.String({ description: 'diagnostic when ok is false; empty otherwise' }) }),
  }),
  TriggerAuditForward: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'TriggerAuditForward',
    summary: 'Forward audit entries to every enabled audit_logs config now',
    notes:
      'Drains every enabled audit_logs config at once, whatever its interval or backoff, and answers when done (a config another replica is forwarding for is left to it). owner is a logging hint.',
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'audit_forwarding' },
    input: t.Object({ owner: t.Optional(Owner()) }, { additionalProperties: false }),
    output: t.Object({}),
  }),
};

const T = TelemetryConfigOps;
export const TelemetryConfigResources = {
  /** Not configuration the data planes serve: no change kind. */
  telemetryConfig: defineResource({
    owner: 'global',
    audit: 'telemetry_config',
    terraform: {
      type: 'gateway_telemetry_config',
      description:
        'A telemetry forwarding config (OTLP sink); types traces, metrics and logs forward the request records, type audit_logs the audit log.',
      create: T.CreateTelemetryConfig,
      get: T.GetTelemetryConfig,
      update: T.UpdateTelemetryConfig,
      delete: T.DeleteTelemetryConfig,
      envelope: 'config',
      idField: 'id',
      args: [
        { api: 'userId' },
        { api: 'telemetryType' },
        { api: 'sinkUrl', update: true },
        { api: 'protocol', update: true },
        { api: 'authType', update: true },
        {
          api: 'authValue',
          update: true,
          optionalComputed: false,
          sensitive: true,
          keep: true,
          writeOnlyForm: true,
          description:
            'the sink secret (bearer token, user:password for basic, or the API key); kept in state as given and read back by Get (so an import reads it)',
        },
        { api: 'apiKeyHeader', update: true },
        { api: 'enabled', update: true },
        { api: 'forwardIntervalSeconds', update: true },
        { computed: 'status', api: 'status', description: 'connected, disconnected, error or testing (set by the forwarder)' },
      ],
      check: (r) =>
        checkTelemetryConfig({
          telemetryType: reqText(r.telemetryType) ?? '',
          protocol: reqText(r.protocol) ?? '',
          authType: reqText(r.authType) ?? 'none',
          authValue: reqText(r.authValue),
        }),
    },
  }),
  /** A forward of the audit log run now (TriggerAuditForward). */
  auditForwarding: defineResource({ owner: 'global', audit: 'audit_forwarding' }),
};
