/**
 * The formats of project setting values (contract §3.2), written once and free of any framework so
 * that the control plane (which validates them on `UpsertProjectSetting`) and the data plane (which
 * enforces them) read the same parsed shapes. Values are stored as the JSON text the caller sent.
 *
 * - `rate-limit`: `{"requestsPerMinute"?: int, "tokensPerMinute"?: int, "per"?: "project" | "api_key"}`
 *   — at least one limit, each a positive integer; `per` defaults to `api_key`; no other keys.
 * - `global-fallback`: `{"targets": [{"connection": "<name>", "model": "<upstream model id>"}, …]}`
 *   — 1 to 32 targets, tried in order; `connection` is a connection name (ID pattern), `model` a
 *   model id (see `MODEL_ID_PATTERN`); no other keys.
 * - `trace-content` (contract §8): `true` or `false` — whether prompt and completion text go on
 *   the project's spans (default false).
 * - `record-retention` (contract §8): `{"bodies": "full" | "truncated" | "none", "maxBodyBytes"?: int,
 *   "days"?: int}` — `none` stores no body, `truncated` cuts each body at `maxBodyBytes` (default
 *   4096), `days` purges records (and their bodies) older than that many days; no other keys.
 * - `response-cache` (contract §11): `{"mode": "exact", "ttlSeconds": int (1..604800), "scope"?:
 *   "project" | "api_key"}` — `scope` defaults to `project`; no other keys. Absent: no cache.
 * - `circuit-breaker` (contract §14): `{"failures"?: int (0..1000, default 5), "windowSeconds"?: int
 *   (1..3600, default 30), "openSeconds"?: int (1..3600, default 30)}` — `failures: 0` turns the
 *   breakers of the project off; no other keys. Absent: on with the defaults.
 * - `mid-stream-fallback` (contract §14): `true` or `false` — whether a stream that breaks after part
 *   of the answer reached the client is continued by the route's next target (default false).
 */

/** A provider connection name (the ID pattern of the management API), 1-253 characters. */
export const CONNECTION_NAME_PATTERN = '^[a-zA-Z0-9-_.]+$';

/**
 * A model id (catalog `model`, route `model`, route target `model`): printable ASCII letters and
 * digits and `- _ . : / @ +`, 1-253 characters. This covers every real provider id (`gpt-4o`,
 * `claude-3-5-sonnet@20240620`, `meta-llama/Llama-3-70b`, `accounts/fireworks/models/x`,
 * `anthropic.claude-3-haiku-20240307-v1:0`, `@cf/meta/llama-3-8b-instruct`) and leaves out
 * whitespace, control and invisible characters (zero-width, bidi controls) and every non-Latin
 * letter — so no name can look like another while differing (mixed-script confusables).
 */
export const MODEL_ID_PATTERN = '^[A-Za-z0-9._:/@+-]+$';
export const MODEL_ID_MAX = 253;

export type RateLimitScope = 'project' | 'api_key';

export interface RateLimitSetting {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  /** Whose requests share the limit (default `api_key`). */
  per: RateLimitScope;
}

export interface FallbackTarget {
  connection: string;
  model: string;
}

export interface GlobalFallbackSetting {
  /** Tried in order, after every target of a route has failed retryably. */
  targets: FallbackTarget[];
}

export type RetentionBodies = 'full' | 'truncated' | 'none';

export interface RecordRetentionSetting {
  bodies: RetentionBodies;
  /** `truncated`: bytes of each body kept at most (UTF-8). */
  maxBodyBytes: number;
  /** Records older than this many days are purged; undefined: kept. */
  days?: number;
}

/** The default: full bodies, kept forever. */
export const FULL_RETENTION: RecordRetentionSetting = Object.freeze({ bodies: 'full', maxBodyBytes: 4096 });

export type ResponseCacheScope = 'project' | 'api_key';

export interface ResponseCacheSetting {
  mode: 'exact';
  ttlSeconds: number;
  /** Whose requests share answers (default `project`); `api_key`: each key its own. */
  scope: ResponseCacheScope;
}

export const MAX_CACHE_TTL_SECONDS = 604_800;

export interface CircuitBreakerSetting {
  /** Retryable failures of one target within the window that open it; 0: breakers off. */
  failures: number;
  windowSeconds: number;
  /** How long an open target gets no request before one probe is let through. */
  openSeconds: number;
}

/** The default (contract §14): on, 5 failures in 30 s open a target for 30 s. */
export const DEFAULT_CIRCUIT_BREAKER: CircuitBreakerSetting = Object.freeze({ failures: 5, windowSeconds: 30, openSeconds: 30 });

export type SettingName =
  | 'rate-limit'
  | 'global-fallback'
  | 'trace-content'
  | 'record-retention'
  | 'response-cache'
  | 'circuit-breaker'
  | 'mid-stream-fallback';

export interface SettingValues {
  'rate-limit': RateLimitSetting;
  'global-fallback': GlobalFallbackSetting;
  'trace-content': boolean;
  'record-retention': RecordRetentionSetting;
  'response-cache': ResponseCacheSetting;
  'circuit-breaker': CircuitBreakerSetting;
  'mid-stream-fallback': boolean;
}

/** A parsed value, or why the text is not one (a sentence fit for an error message). */
export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const MAX_FALLBACK_TARGETS = 32;
const CONNECTION_NAME = new RegExp(CONNECTION_NAME_PATTERN);
const MODEL_ID = new RegExp(MODEL_ID_PATTERN);

const fail = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

const parseJsonObject = (text: string): Parsed<Record<string, unknown>> => {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return fail('not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return fail('must be a JSON object');
  return { ok: true, value: v as Record<string, unknown> };
};

const unknownKey = (o: Record<string, unknown>, allowed: readonly string[]): string | undefined =>
  Object.keys(o).find((k) => !allowed.includes(k));

const positiveInt = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;

export const isModelId = (v: unknown): v is string =>
  typeof v === 'string' && v.length >= 1 && v.length <= MODEL_ID_MAX && MODEL_ID.test(v);
export const isConnectionName = (v: unknown): v is string =>
  typeof v === 'string' && v.length >= 1 && v.length <= 253 && CONNECTION_NAME.test(v);

export const parseRateLimit = (text: string): Parsed<RateLimitSetting> => {
  const j = parseJsonObject(text);
  if (!j.ok) return j;
  const o = j.value;
  const extra = unknownKey(o, ['requestsPerMinute', 'tokensPerMinute', 'per']);
  if (extra !== undefined) return fail(`unknown key '${extra.slice(0, 40)}' (allowed: requestsPerMinute, tokensPerMinute, per)`);
  for (const k of ['requestsPerMinute', 'tokensPerMinute'] as const)
    if (o[k] !== undefined && !positiveInt(o[k])) return fail(`'${k}' must be a positive integer`);
  if (o.requestsPerMinute === undefined && o.tokensPerMinute === undefined)
    return fail("give 'requestsPerMinute', 'tokensPerMinute' or both");
  if (o.per !== undefined && o.per !== 'project' && o.per !== 'api_key') return fail("'per' must be 'project' or 'api_key'");
  return {
    ok: true,
    value: {
      ...(o.requestsPerMinute !== undefined ? { requestsPerMinute: o.requestsPerMinute as number } : {}),
      ...(o.tokensPerMinute !== undefined ? { tokensPerMinute: o.tokensPerMinute as number } : {}),
      per: (o.per as RateLimitScope | undefined) ?? 'api_key',
    },
  };
};

export const parseGlobalFallback = (text: string): Parsed<GlobalFallbackSetting> => {
  const j = parseJsonObject(text);
  if (!j.ok) return j;
  const o = j.value;
  const extra = unknownKey(o, ['targets']);
  if (extra !== undefined) return fail(`unknown key '${extra.slice(0, 40)}' (allowed: targets)`);
  const list = o.targets;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_FALLBACK_TARGETS)
    return fail(`'targets' must be a list of 1-${MAX_FALLBACK_TARGETS} targets`);
  const targets: FallbackTarget[] = [];
  for (const [i, t] of list.entries()) {
    if (t === null || typeof t !== 'object' || Array.isArray(t)) return fail(`'targets[${i}]' must be an object {connection, model}`);
    const target = t as Record<string, unknown>;
    const bad = unknownKey(target, ['connection', 'model']);
    if (bad !== undefined) return fail(`'targets[${i}]': unknown key '${bad.slice(0, 40)}' (allowed: connection, model)`);
    if (!isConnectionName(target.connection))
      return fail(`'targets[${i}].connection' must be a connection name (letters, digits, '-', '_', '.'; 1-253)`);
    if (!isModelId(target.model))
      return fail(`'targets[${i}].model' must be a model id (letters, digits and - _ . : / @ +; 1-${MODEL_ID_MAX})`);
    targets.push({ connection: target.connection, model: target.model });
  }
  return { ok: true, value: { targets } };
};

const parseBoolean = (text: string): Parsed<boolean> => {
  const t = text.trim();
  return t === 'true' ? { ok: true, value: true } : t === 'false' ? { ok: true, value: false } : fail("must be 'true' or 'false'");
};

export const parseTraceContent = parseBoolean;

export const parseMidStreamFallback = parseBoolean;

const MAX_RETENTION_DAYS = 36_500;
const MAX_BODY_BYTES = 256 * 1024;

export const parseRecordRetention = (text: string): Parsed<RecordRetentionSetting> => {
  const j = parseJsonObject(text);
  if (!j.ok) return j;
  const o = j.value;
  const extra = unknownKey(o, ['bodies', 'maxBodyBytes', 'days']);
  if (extra !== undefined) return fail(`unknown key '${extra.slice(0, 40)}' (allowed: bodies, maxBodyBytes, days)`);
  if (o.bodies !== 'full' && o.bodies !== 'truncated' && o.bodies !== 'none') return fail("'bodies' must be 'full', 'truncated' or 'none'");
  if (o.maxBodyBytes !== undefined && (!positiveInt(o.maxBodyBytes) || (o.maxBodyBytes as number) > MAX_BODY_BYTES))
    return fail(`'maxBodyBytes' must be an integer from 1 to ${MAX_BODY_BYTES}`);
  if (o.days !== undefined && (!positiveInt(o.days) || (o.days as number) > MAX_RETENTION_DAYS))
    return fail(`'days' must be an integer from 1 to ${MAX_RETENTION_DAYS}`);
  return {
    ok: true,
    value: {
      bodies: o.bodies,
      maxBodyBytes: (o.maxBodyBytes as number | undefined) ?? FULL_RETENTION.maxBodyBytes,
      ...(o.days !== undefined ? { days: o.days as number } : {}),
    },
  };
};

export const parseResponseCache = (text: string): Parsed<ResponseCacheSetting> => {
  const j = parseJsonObject(text);
  if (!j.ok) return j;
  const o = j.value;
  const extra = unknownKey(o, ['mode', 'ttlSeconds', 'scope']);
  if (extra !== undefined) return fail(`unknown key '${extra.slice(0, 40)}' (allowed: mode, ttlSeconds, scope)`);
  if (o.mode !== 'exact') return fail("'mode' must be 'exact'");
  if (!positiveInt(o.ttlSeconds) || (o.ttlSeconds as number) > MAX_CACHE_TTL_SECONDS)
    return fail(`'ttlSeconds' must be an integer from 1 to ${MAX_CACHE_TTL_SECONDS}`);
  if (o.scope !== undefined && o.scope !== 'project' && o.scope !== 'api_key') return fail("'scope' must be 'project' or 'api_key'");
  return {
    ok: true,
    value: { mode: 'exact', ttlSeconds: o.ttlSeconds as number, scope: (o.scope as ResponseCacheScope | undefined) ?? 'project' },
  };
};

const MAX_BREAKER_FAILURES = 1000;
const MAX_BREAKER_SECONDS = 3600;

export const parseCircuitBreaker = (text: string): Parsed<CircuitBreakerSetting> => {
  const j = parseJsonObject(text);
  if (!j.ok) return j;
  const o = j.value;
  const extra = unknownKey(o, ['failures', 'windowSeconds', 'openSeconds']);
  if (extra !== undefined) return fail(`unknown key '${extra.slice(0, 40)}' (allowed: failures, windowSeconds, openSeconds)`);
  const f = o.failures;
  if (f !== undefined && !(typeof f === 'number' && Number.isSafeInteger(f) && f >= 0 && f <= MAX_BREAKER_FAILURES))
    return fail(`'failures' must be an integer from 0 (off) to ${MAX_BREAKER_FAILURES}`);
  for (const k of ['windowSeconds', 'openSeconds'] as const)
    if (o[k] !== undefined && (!positiveInt(o[k]) || (o[k] as number) > MAX_BREAKER_SECONDS))
      return fail(`'${k}' must be an integer from 1 to ${MAX_BREAKER_SECONDS}`);
  const d = DEFAULT_CIRCUIT_BREAKER;
  return {
    ok: true,
    value: {
      failures: (f as number | undefined) ?? d.failures,
      windowSeconds: (o.windowSeconds as number | undefined) ?? d.windowSeconds,
      openSeconds: (o.openSeconds as number | undefined) ?? d.openSeconds,
    },
  };
};

/** Parses a setting value by its setting name. */
export const parseSettingValue = <N extends SettingName>(name: N, text: string): Parsed<SettingValues[N]> => {
  const parsers: { [K in SettingName]: (t: string) => Parsed<SettingValues[K]> } = {
    'rate-limit': parseRateLimit,
    'global-fallback': parseGlobalFallback,
    'trace-content': parseTraceContent,
    'record-retention': parseRecordRetention,
    'response-cache': parseResponseCache,
    'circuit-breaker': parseCircuitBreaker,
    'mid-stream-fallback': parseMidStreamFallback,
  };
  return parsers[name](text);
};
