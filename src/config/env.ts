import { type TelemetryConfig, telemetryConfigFromEnv } from '../telemetry/tracing.ts';
import { parseDuration } from './duration.ts';

export type Role = 'all' | 'control' | 'data';

export interface GatewayConfig {
  role: Role;
  host: string;
  port: number;
  adminPort: number;
  dataDir: string;
  databaseUrl: string | undefined;
  adminToken: string | undefined;
  kek: string | undefined;
  demo: boolean;
  pollIntervalMs: number;
  driftSweepIntervalMs: number;
  fullSyncEveryNDriftTicks: number;
  serviceAccountFile: string | undefined;
  /** Batching of request records. */
  recordFlushMs: number;
  /** Keep request and response bodies in records (data retention). */
  recordBodies: boolean;
  /** GATEWAY_UPSTREAM_ALLOW_PRIVATE=1: connections may point at private addresses whoever saves them. */
  upstreamAllowPrivate: boolean;
  /** Downstream silence after which a stream gets a keep-alive comment. */
  keepAliveMs: number;
  telemetry: TelemetryConfig;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
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
    databaseUrl,
    adminToken: env.GATEWAY_ADMIN_TOKEN || undefined,
    kek,
    demo: env.GATEWAY_DEMO !== '0',
    pollIntervalMs: duration(env, 'WORKER_POLL_INTERVAL', '10s'),
    driftSweepIntervalMs: duration(env, 'WORKER_DRIFT_SWEEP_INTERVAL', '5m'),
    fullSyncEveryNDriftTicks: positiveInt(env, 'WORKER_FULL_SYNC_EVERY_N_DRIFT_TICKS', 6),
    serviceAccountFile,
    recordFlushMs: duration(env, 'GATEWAY_RECORD_FLUSH_INTERVAL', '250ms'),
    recordBodies: env.GATEWAY_RECORD_BODIES !== '0',
    upstreamAllowPrivate: env.GATEWAY_UPSTREAM_ALLOW_PRIVATE === '1' || env.GATEWAY_UPSTREAM_ALLOW_PRIVATE === 'true',
    keepAliveMs: duration(env, 'GATEWAY_KEEPALIVE_INTERVAL', '15s'),
    telemetry: telemetryConfigFromEnv(env),
    logLevel,
  };
};
