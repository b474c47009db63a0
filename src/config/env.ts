import { type TelemetryConfig, telemetryConfigFromEnv } from '../telemetry/tracing.ts';
import { parseDuration } from './duration.ts';

export type Role = 'all' | 'control' | 'data';

export interface GatewayConfig {
  role: Role;
  host: string;
  port: number;
  adminPort: number;
  dataDir: string;
  /** PGlite's shared_buffers in kB (GATEWAY_PGLITE_SHARED_BUFFERS). */
  pgliteSharedBuffersKb: number;
  databaseUrl: string | undefined;
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
  /** Keep request and response bodies in records (data retention). */
  recordBodies: boolean;
  /** GATEWAY_RECORD_QUEUE_MAX: request records held in memory at most (past it they go to the spool, or are dropped without one). */
  recordQueueMax: number;
  /** GATEWAY_UPSTREAM_ALLOW_PRIVATE=1: connections may point at private addresses whoever saves them. */
  upstreamAllowPrivate: boolean;
  /** Downstream silence after which a stream gets a keep-alive comment. */
  keepAliveMs: number;
  /** Listener limits and shutdown (docs/operating.md, "Listener limits and shutdown"). */
  limits: ListenerLimits;
  /** How long SIGTERM/SIGINT waits for requests and streams in flight before ending them. */
  shutdownGraceMs: number;
  telemetry: TelemetryConfig;
  /** GATEWAY_AUDIT_CHECKPOINT_INTERVAL: audit checkpoints seal windows of this length (docs/audit.md). */
  auditCheckpointIntervalMs: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** REDIS_URL: rate-limit and budget counters shared by every data plane; unset: per process. */
  redisUrl: string | undefined;
  /** GATEWAY_LIMITS_ON_REDIS_ERROR (`closed` default, or `open`): what limits do while Redis fails. */
  limitsOnRedisError: 'open' | 'closed';
  /** GATEWAY_RESPONSE_RETENTION: how long stored Responses and Messages threads are kept (default 30d). */
  responseRetentionMs: number;
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
  /** Largest upstream JSON answer relayed (bytes): GATEWAY_MAX_UPSTREAM_RESPONSE. */
  maxUpstreamResponseBytes: number;
}

/** A bad setting: start-up stops with one line naming it. */
export class ConfigError extends Error {
  constructor(readonly setting: string, message: string) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

const port = (env: Record<string, string | undefined>, name: string, fallback: number): number => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(name, `'${raw}' is not a port number (0-65535)`);
  return n;
};

const duration = (env: Record<string, string | undefined>, name: string, fallback: string): number => {
  const raw = env[name] ?? fallback;
  const ms = parseDuration(raw);
  if (ms === null || ms <= 0) throw new ConfigError(name, `'${raw}' is not a duration (examples: 250ms, 10s, 5m)`);
  return ms;
};

const positiveInt = (env: Record<string, string | undefined>, name: string, fallback: number): number => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new ConfigError(name, `'${raw}' is not a positive integer`);
  return n;
};

/** At least two insert batches (500 rows each): the one being written and room behind it. */
const recordQueueMax = (env: Record<string, string | undefined>): number => {
  const n = positiveInt(env, 'GATEWAY_RECORD_QUEUE_MAX', 50_000);
  if (n < 1_000) throw new ConfigError('GATEWAY_RECORD_QUEUE_MAX', `'${n}' is below the minimum of 1000`);
  return n;
};

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** Byte sizes: `1048576`, `512KiB`, `32MiB`, `1GB`. */
const size = (env: Record<string, string | undefined>, name: string, fallback: string): number => {
  const raw = env[name] || fallback;
  const m = /^(\d+)\s*([kmg]i?b|b)?$/i.exec(raw.trim());
  const bytes = m ? Number(m[1]) * (SIZE_UNITS[(m[2] ?? '').toLowerCase()] ?? Number.NaN) : Number.NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw new ConfigError(name, `'${raw}' is not a size (examples: 65536, 512KiB, 32MiB)`);
  return bytes;
};

/** PGlite's shared_buffers: at least 1 MiB (PostgreSQL's floor is 128 kB), at most 4 GiB. */
const sharedBuffersKb = (env: Record<string, string | undefined>): number => {
  const kb = Math.floor(size(env, 'GATEWAY_PGLITE_SHARED_BUFFERS', '32MiB') / 1024);
  if (kb < 1024 || kb > 4 * 1024 * 1024) throw new ConfigError('GATEWAY_PGLITE_SHARED_BUFFERS', `'${env.GATEWAY_PGLITE_SHARED_BUFFERS}' is outside 1MiB-4GiB`);
  return kb;
};

/** Bun's idle timeout takes whole seconds, 1-255. */
const idleSeconds = (env: Record<string, string | undefined>, name: string, fallback: string): number => {
  const s = Math.ceil(duration(env, name, fallback) / 1000);
  if (s > 255) throw new ConfigError(name, `'${env[name] ?? fallback}' is longer than 255s`);
  return s;
};

const onRedisError = (v: string | undefined): 'open' | 'closed' => {
  if (v === undefined || v === '' || v === 'closed') return 'closed';
  if (v === 'open') return 'open';
  throw new ConfigError('GATEWAY_LIMITS_ON_REDIS_ERROR', `'${v}' is not 'open' or 'closed'`);
};

/** Reads argv (`serve --role data --service-account FILE`) and the environment. */
export const loadConfig = (argv: readonly string[], env: Record<string, string | undefined>): GatewayConfig => {
  let role: Role = 'all';
  let serviceAccountFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--role') {
      const v = argv[++i];
      if (v !== 'all' && v !== 'control' && v !== 'data') throw new ConfigError('--role', `'${v ?? ''}' is not a role (all, control, data)`);
      role = v;
    } else if (arg === '--service-account') {
      serviceAccountFile = argv[++i];
    }
  }
  if (role === 'data' && !serviceAccountFile) throw new ConfigError('--service-account', 'required with --role data');
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new ConfigError('DATABASE_URL', 'must start with postgres://');
  const kek = env.GATEWAY_KEK || undefined;
  if (kek !== undefined) {
    const bytes = Buffer.from(kek, 'base64');
    if (bytes.length !== 32) throw new ConfigError('GATEWAY_KEK', 'must be the base64 of exactly 32 bytes');
  }
  const kekPrevious = (env.GATEWAY_KEK_PREVIOUS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  for (const k of kekPrevious) {
    if (Buffer.from(k, 'base64').length !== 32) throw new ConfigError('GATEWAY_KEK_PREVIOUS', 'each key must be the base64 of exactly 32 bytes (comma-separated)');
  }
  if (kekPrevious.length > 0 && !kek) throw new ConfigError('GATEWAY_KEK_PREVIOUS', 'needs GATEWAY_KEK (the new key) to be set');
  if (databaseUrl && !kek && role !== 'data') throw new ConfigError('GATEWAY_KEK', 'required when DATABASE_URL is set');
  const logLevel = env.GATEWAY_LOG_LEVEL ?? 'info';
  if (logLevel !== 'debug' && logLevel !== 'info' && logLevel !== 'warn' && logLevel !== 'error') {
    throw new ConfigError('GATEWAY_LOG_LEVEL', `'${logLevel}' is not one of debug, info, warn, error`);
  }
  return {
    role,
    host: env.GATEWAY_HOST || '127.0.0.1',
    port: port(env, 'GATEWAY_PORT', 8080),
    adminPort: port(env, 'GATEWAY_ADMIN_PORT', 8081),
    dataDir: env.GATEWAY_DATA_DIR || './data',
    pgliteSharedBuffersKb: sharedBuffersKb(env),
    databaseUrl,
    adminToken: env.GATEWAY_ADMIN_TOKEN || undefined,
    kek,
    kekPrevious,
    demo: env.GATEWAY_DEMO !== '0',
    pollIntervalMs: duration(env, 'WORKER_POLL_INTERVAL', '10s'),
    driftSweepIntervalMs: duration(env, 'WORKER_DRIFT_SWEEP_INTERVAL', '5m'),
    fullSyncEveryNDriftTicks: positiveInt(env, 'WORKER_FULL_SYNC_EVERY_N_DRIFT_TICKS', 6),
    workerListen: env.WORKER_LISTEN !== '0',
    serviceAccountFile,
    recordFlushMs: duration(env, 'GATEWAY_RECORD_FLUSH_INTERVAL', '250ms'),
    recordBodies: env.GATEWAY_RECORD_BODIES !== '0',
    recordQueueMax: recordQueueMax(env),
    redisUrl: env.REDIS_URL || undefined,
    limitsOnRedisError: onRedisError(env.GATEWAY_LIMITS_ON_REDIS_ERROR),
    upstreamAllowPrivate: env.GATEWAY_UPSTREAM_ALLOW_PRIVATE === '1' || env.GATEWAY_UPSTREAM_ALLOW_PRIVATE === 'true',
    keepAliveMs: duration(env, 'GATEWAY_KEEPALIVE_INTERVAL', '15s'),
    limits: {
      maxBodyBytes: size(env, 'GATEWAY_MAX_BODY', '32MiB'),
      bodyTimeoutMs: duration(env, 'GATEWAY_BODY_TIMEOUT', '30s'),
      idleTimeoutSeconds: idleSeconds(env, 'GATEWAY_IDLE_TIMEOUT', '10s'),
      streamStallMs: duration(env, 'GATEWAY_STREAM_STALL_TIMEOUT', '60s'),
      maxUpstreamResponseBytes: size(env, 'GATEWAY_MAX_UPSTREAM_RESPONSE', '16MiB'),
    },
    shutdownGraceMs: duration(env, 'GATEWAY_SHUTDOWN_GRACE', '30s'),
    telemetry: telemetryConfigFromEnv(env),
    auditCheckpointIntervalMs: duration(env, 'GATEWAY_AUDIT_CHECKPOINT_INTERVAL', '5m'),
    logLevel,
    responseRetentionMs: duration(env, 'GATEWAY_RESPONSE_RETENTION', '30d'),
  };
};
