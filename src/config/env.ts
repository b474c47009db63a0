import { existsSync } from 'node:fs';
import type { TlsFiles } from '../core/tls.ts';
import { type OidcConfig, oidcConfig, publicOrigin } from './oidc.ts';
import type { TelemetryConfig } from './telemetry.ts';
import { ConfigError, type LOG_LEVELS, parseSettings, type Settings } from './settings.ts';

export { ConfigError } from './settings.ts';

export type Role = 'all' | 'control' | 'data';

export interface GatewayConfig {
  role: Role;
  host: string;
  port: number;
  /** GATEWAY_ADMIN_HOST, else GATEWAY_HOST: where the management listener binds. */
  adminHost: string;
  adminPort: number;
  /** TLS of each listener (unset: plain HTTP). */
  tls: { inference?: TlsFiles; admin?: TlsFiles; metrics?: TlsFiles };
  /** GATEWAY_ADMIN_MAX_BODY: largest management request body (bytes). */
  adminMaxBodyBytes: number;
  /** GATEWAY_DB_POOL_MAX: connections of the main PostgreSQL pool. */
  dbPoolMax: number;
  dataDir: string;
  /** GATEWAY_MIGRATE (default on): apply pending migrations at start; `0`: only check none is pending. */
  migrate: boolean;
  /** PGlite's shared_buffers in kB (GATEWAY_PGLITE_SHARED_BUFFERS). */
  pgliteSharedBuffersKb: number;
  databaseUrl: string | undefined;
  /** DATABASE_READ_URL: a replica for record searches and usage. */
  databaseReadUrl: string | undefined;
  adminToken: string | undefined;
  kek: string | undefined;
  /** GATEWAY_KEK_PREVIOUS: older KEKs (comma-separated) still accepted for unwrapping during a rotation. */
  kekPrevious: string[];
  demo: boolean;
  pollIntervalMs: number;
  driftSweepIntervalMs: number;
  fullSyncEveryNDriftTicks: number;
  /** WORKER_LISTEN (default on): committed changes wake propagation by LISTEN/NOTIFY (management plane) and held pulls (data plane); `0`: polling only. */
  workerListen: boolean;
  serviceAccountFile: string | undefined;
  /** Batching of request records. */
  recordFlushMs: number;
  /** GATEWAY_RECORD_QUEUE_MAX: records held in memory before they wait on disk. */
  recordQueueMax: number;
  /** GATEWAY_RECORD_WRITERS: record batches written at once (2 on PostgreSQL, 1 on PGlite unless set). */
  recordWriters: number;
  /** Keep request and response bodies in records (data retention). */
  recordBodies: boolean;
  /** GATEWAY_UPSTREAM_ALLOW_PRIVATE=1: connections may point at private addresses whoever saves them. */
  upstreamAllowPrivate: boolean;
  /** GATEWAY_PUBLIC_URL: the management listener's public origin (unset: each request's own URL). */
  publicUrl: string | undefined;
  /** GATEWAY_OIDC_*: sign-in with an identity provider (unset: none). */
  oidc: OidcConfig | undefined;
  /** Downstream silence after which a stream gets a keep-alive comment. */
  keepAliveMs: number;
  /** Listener limits and shutdown (docs/deployment.md, "Listener limits", "Shutdown and drain"). */
  limits: ListenerLimits;
  /** How long SIGTERM/SIGINT waits for requests and streams in flight before ending them. */
  shutdownGraceMs: number;
  telemetry: TelemetryConfig;
  /** GATEWAY_AUDIT_CHECKPOINT_INTERVAL: audit checkpoints seal windows of this length (docs/audit.md). */
  auditCheckpointIntervalMs: number;
  logLevel: (typeof LOG_LEVELS)[number];
  /** REDIS_URL: rate-limit and budget counters shared by every data plane; unset: per process. */
  redisUrl: string | undefined;
  /** GATEWAY_LIMITS_ON_REDIS_ERROR (`closed` default, or `open`): what limits do while Redis fails. */
  limitsOnRedisError: 'open' | 'closed';
  /** GATEWAY_GUARDRAIL_SCAN_TIMEOUT: the bound of one guardrail check on the scan thread. */
  guardrailScanTimeoutMs: number;
  /** GATEWAY_LIMITS_LEASES: with Redis, admit from local leases of counters far from their limit (governance/leased-counters.ts). */
  limitsLeases: boolean;
  /** GATEWAY_RESPONSE_CACHE_MAX: bytes of the in-process response cache. */
  responseCacheMaxBytes: number;
  /** GATEWAY_FILE_MAX: largest `/v1/files` upload. */
  fileMaxBytes: number;
  /** GATEWAY_BATCH_CONCURRENCY: lines of one batch in flight at once. */
  batchConcurrency: number;
  /** GATEWAY_BATCH_MAX_LINES: requests in one batch input file. */
  batchMaxLines: number;
  /** GATEWAY_RESPONSE_RETENTION: how long stored Responses and Messages threads are kept (default 30d). */
  responseRetentionMs: number;
  /** GATEWAY_BACKGROUND_LEASE: a background response's lease (data-plane/background.ts). */
  backgroundLeaseMs: number;
}

export interface ListenerLimits {
  /** Largest request body accepted (bytes): GATEWAY_MAX_BODY. */
  maxBodyBytes: number;
  /** Time allowed to receive a request body once its headers arrived: GATEWAY_BODY_TIMEOUT. */
  bodyTimeoutMs: number;
  /** Idle keep-alive connections are closed after this many seconds: GATEWAY_IDLE_TIMEOUT. */
  idleTimeoutSeconds: number;
  /** A stream whose client reads nothing for this long is ended: GATEWAY_STREAM_STALL_TIMEOUT. */
  streamStallMs: number;
  /** Largest upstream answer read into memory (bytes): GATEWAY_MAX_UPSTREAM_RESPONSE. */
  maxUpstreamResponseBytes: number;
  /** Largest single event of an upstream stream (bytes): GATEWAY_MAX_STREAM_EVENT. */
  maxStreamEventBytes: number;
  /** Largest message from an upstream MCP server (bytes): GATEWAY_MCP_MAX_MESSAGE_BYTES. */
  maxMcpMessageBytes: number;
  /** Most items of one MCP server's list: GATEWAY_MCP_MAX_LIST_ITEMS. */
  mcpMaxListItems: number;
  /** An idle MCP session is refused after this long (ms): GATEWAY_MCP_SESSION_IDLE. */
  mcpSessionIdleMs: number;
  /** An A2A agent's call (or its stream's start) is cancelled after this long (ms): GATEWAY_A2A_TIMEOUT. */
  a2aTimeoutMs: number;
  /** A served A2A agent's card is checked against its pin this often (ms): GATEWAY_A2A_CARD_CHECK. */
  a2aCardCheckMs: number;
  /** Largest answer (or stream event) of an A2A agent (bytes): GATEWAY_A2A_MAX_MESSAGE. */
  a2aMaxMessageBytes: number;
}

/** Reads argv (`serve --role data --service-account FILE`) and the environment. */
/** Record batches written at once with PostgreSQL unless GATEWAY_RECORD_WRITERS says (docs/records.md, "Several writers"). */
const PG_RECORD_WRITERS = 2;

export const loadConfig = (argv: readonly string[], env: Record<string, string | undefined>): GatewayConfig => {
  let role: Role = 'all';
  let serviceAccountFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--role') {
      const v = argv[++i];
      if (v !== 'all' && v !== 'control' && v !== 'data')
        throw new ConfigError('--role', `'${v ?? ''}' is not a role (all, control, data)`);
      role = v;
    } else if (arg === '--service-account') {
      serviceAccountFile = argv[++i];
    }
  }
  if (role === 'data' && !serviceAccountFile) throw new ConfigError('--service-account', 'required with --role data');
  const s = parseSettings(env);
  if (s.GATEWAY_KEK_PREVIOUS.length > 0 && !s.GATEWAY_KEK)
    throw new ConfigError('GATEWAY_KEK_PREVIOUS', 'needs GATEWAY_KEK (the new key) to be set');
  if (s.DATABASE_URL && !s.GATEWAY_KEK && role !== 'data') throw new ConfigError('GATEWAY_KEK', 'required when DATABASE_URL is set');
  if (s.DATABASE_READ_URL && !s.DATABASE_URL) throw new ConfigError('DATABASE_READ_URL', 'needs DATABASE_URL (the primary it replicates)');
  const tls: GatewayConfig['tls'] = {};
  const inferenceTls = tlsPair(s.GATEWAY_TLS_CERT_FILE, s.GATEWAY_TLS_KEY_FILE, 'GATEWAY_TLS');
  const adminTls = tlsPair(s.GATEWAY_ADMIN_TLS_CERT_FILE, s.GATEWAY_ADMIN_TLS_KEY_FILE, 'GATEWAY_ADMIN_TLS');
  const metricsTls = tlsPair(s.GATEWAY_METRICS_TLS_CERT_FILE, s.GATEWAY_METRICS_TLS_KEY_FILE, 'GATEWAY_METRICS_TLS');
  if (inferenceTls) tls.inference = inferenceTls;
  if (adminTls) tls.admin = adminTls;
  if (metricsTls) tls.metrics = metricsTls;
  return {
    role,
    host: s.GATEWAY_HOST,
    port: s.GATEWAY_PORT,
    adminHost: s.GATEWAY_ADMIN_HOST ?? s.GATEWAY_HOST,
    adminPort: s.GATEWAY_ADMIN_PORT,
    tls,
    adminMaxBodyBytes: s.GATEWAY_ADMIN_MAX_BODY,
    dbPoolMax: s.GATEWAY_DB_POOL_MAX,
    dataDir: s.GATEWAY_DATA_DIR,
    migrate: s.GATEWAY_MIGRATE,
    pgliteSharedBuffersKb: Math.floor(s.GATEWAY_PGLITE_SHARED_BUFFERS / 1024),
    databaseUrl: s.DATABASE_URL,
    databaseReadUrl: s.DATABASE_READ_URL,
    adminToken: s.GATEWAY_ADMIN_TOKEN,
    kek: s.GATEWAY_KEK,
    kekPrevious: s.GATEWAY_KEK_PREVIOUS,
    demo: s.GATEWAY_DEMO,
    pollIntervalMs: s.WORKER_POLL_INTERVAL,
    driftSweepIntervalMs: s.WORKER_DRIFT_SWEEP_INTERVAL,
    fullSyncEveryNDriftTicks: s.WORKER_FULL_SYNC_EVERY_N_DRIFT_TICKS,
    workerListen: s.WORKER_LISTEN,
    serviceAccountFile,
    recordFlushMs: s.GATEWAY_RECORD_FLUSH_INTERVAL,
    recordQueueMax: s.GATEWAY_RECORD_QUEUE_MAX,
    recordWriters: s.GATEWAY_RECORD_WRITERS ?? (s.DATABASE_URL ? PG_RECORD_WRITERS : 1),
    recordBodies: s.GATEWAY_RECORD_BODIES,
    redisUrl: s.REDIS_URL,
    limitsOnRedisError: s.GATEWAY_LIMITS_ON_REDIS_ERROR,
    guardrailScanTimeoutMs: s.GATEWAY_GUARDRAIL_SCAN_TIMEOUT,
    limitsLeases: s.GATEWAY_LIMITS_LEASES,
    upstreamAllowPrivate: s.GATEWAY_UPSTREAM_ALLOW_PRIVATE,
    publicUrl: publicOrigin(s),
    oidc: oidcConfig(s),
    keepAliveMs: s.GATEWAY_KEEPALIVE_INTERVAL,
    limits: {
      maxBodyBytes: s.GATEWAY_MAX_BODY,
      bodyTimeoutMs: s.GATEWAY_BODY_TIMEOUT,
      idleTimeoutSeconds: Math.ceil(s.GATEWAY_IDLE_TIMEOUT / 1000),
      streamStallMs: s.GATEWAY_STREAM_STALL_TIMEOUT,
      maxUpstreamResponseBytes: s.GATEWAY_MAX_UPSTREAM_RESPONSE,
      maxStreamEventBytes: s.GATEWAY_MAX_STREAM_EVENT,
      maxMcpMessageBytes: s.GATEWAY_MCP_MAX_MESSAGE_BYTES,
      mcpMaxListItems: s.GATEWAY_MCP_MAX_LIST_ITEMS,
      mcpSessionIdleMs: s.GATEWAY_MCP_SESSION_IDLE,
      a2aTimeoutMs: s.GATEWAY_A2A_TIMEOUT,
      a2aCardCheckMs: s.GATEWAY_A2A_CARD_CHECK,
      a2aMaxMessageBytes: s.GATEWAY_A2A_MAX_MESSAGE,
    },
    shutdownGraceMs: s.GATEWAY_SHUTDOWN_GRACE,
    telemetry: telemetryConfig(s, metricsTls, env),
    auditCheckpointIntervalMs: s.GATEWAY_AUDIT_CHECKPOINT_INTERVAL,
    logLevel: s.GATEWAY_LOG_LEVEL,
    responseRetentionMs: s.GATEWAY_RESPONSE_RETENTION,
    backgroundLeaseMs: s.GATEWAY_BACKGROUND_LEASE,
    responseCacheMaxBytes: s.GATEWAY_RESPONSE_CACHE_MAX,
    fileMaxBytes: s.GATEWAY_FILE_MAX,
    batchConcurrency: s.GATEWAY_BATCH_CONCURRENCY,
    batchMaxLines: s.GATEWAY_BATCH_MAX_LINES,
  };
};

/** A listener's TLS files: both or neither, each an existing file (a start-up error names the setting). */
const tlsPair = (cert: string | undefined, key: string | undefined, prefix: string): TlsFiles | undefined => {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined) throw new ConfigError(`${prefix}_CERT_FILE`, `required with ${prefix}_KEY_FILE`);
  if (key === undefined) throw new ConfigError(`${prefix}_KEY_FILE`, `required with ${prefix}_CERT_FILE`);
  for (const [name, file] of [
    [`${prefix}_CERT_FILE`, cert],
    [`${prefix}_KEY_FILE`, key],
  ] as const)
    if (!existsSync(file)) throw new ConfigError(name, `'${file}' does not exist`);
  return { certFile: cert, keyFile: key };
};

/** Traces and OTLP metrics are exported when an OTLP endpoint is set (the standard OTEL_* variables); gRPC takes the base as is. */
const telemetryConfig = (s: Settings, tls: TlsFiles | undefined, env: Record<string, string | undefined>): TelemetryConfig => {
  const set = (name: string): boolean => (env[name] ?? '').trim() !== '';
  const base = s.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const grpc = s.OTEL_EXPORTER_OTLP_PROTOCOL === 'grpc';
  const signal = (path: string): string | undefined => (base ? (grpc ? base : `${base}/${path}`) : undefined);
  return {
    protocol: s.OTEL_EXPORTER_OTLP_PROTOCOL,
    tracesUrl: s.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? signal('v1/traces'),
    headers: { ...s.OTEL_EXPORTER_OTLP_HEADERS, ...s.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    serviceName: s.OTEL_SERVICE_NAME,
    fromEnv: {
      endpoint: ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'].some(set),
      serviceName: set('OTEL_SERVICE_NAME'),
    },
    spanHeaders: s.GATEWAY_SPAN_HEADERS,
    metrics: {
      port: s.GATEWAY_METRICS_PORT,
      host: s.GATEWAY_METRICS_HOST,
      tenantLabels: s.GATEWAY_METRICS_TENANT_LABELS === 'on',
      ...(tls ? { tls } : {}),
      url: s.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? signal('v1/metrics'),
      intervalMs: s.OTEL_METRIC_EXPORT_INTERVAL,
    },
  };
};
