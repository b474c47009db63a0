import {
  type Env,
  flag,
  headers,
  integer,
  optionalInteger,
  isKey32,
  key,
  list,
  oneOf,
  optionalText,
  port,
  type Setting,
  type SettingSpec,
  size,
  duration,
  text,
  url,
  type ValueOf,
} from './setting-kinds.ts';
import { OTLP_PROTOCOLS } from './setting-kinds.ts';
import { AGENT_AND_TOOL_SETTINGS } from './settings-upstream.ts';

/**
 * Every environment variable the gateway reads, declared once: type, default, unit, bounds and
 * meaning. `parseSettings` checks them all at start (a bad value stops start-up with one line
 * naming it); `bun run docs:settings` writes the table in docs/reference/settings.md from here. Importing
 * this module reads nothing and starts nothing (the Helm chart's values will come from it too).
 */

export { ConfigError } from './setting-kinds.ts';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

export const SETTINGS = {
  // listeners
  GATEWAY_HOST: text({
    default: '127.0.0.1',
    description: 'address the inference listener binds to (and the management listener unless `GATEWAY_ADMIN_HOST` is set)',
  }),
  GATEWAY_METRICS_HOST: text({
    default: '127.0.0.1',
    description:
      'address the metrics listener binds to: loopback by default, so `/metrics` is not on the network unless asked (`0.0.0.0` for a Prometheus on another host)',
  }),
  GATEWAY_ADMIN_HOST: optionalText({
    unset: '`GATEWAY_HOST`',
    description: 'address the management listener binds to: e.g. `127.0.0.1` or an internal interface while inference listens on `0.0.0.0`',
  }),
  GATEWAY_PORT: port({ default: '8080', description: 'inference API listener (`0`: any free port)' }),
  GATEWAY_ADMIN_PORT: port({ default: '8081', description: 'management API listener (`0`: any free port)' }),
  GATEWAY_METRICS_PORT: port({
    default: '9464',
    description: 'metrics listener: Prometheus text on `GET /metrics` (`0`: off); never on the inference port',
  }),
  GATEWAY_PUBLIC_URL: url({
    schemes: ['https', 'http'],
    parseable: true,
    unset: "each request's own URL (`X-Forwarded-*` headers are not trusted)",
    description:
      "the origin browsers and identity providers reach the management listener (the console) at, e.g. `https://gateway.example.com` behind an ingress that terminates TLS: the console's SSO redirect URI (`<origin>/console/sso/callback`, the one to register at the identity provider), the SSO cookie's `Secure` flag and SCIM's `meta.location` are built from it; an origin only (no path, query or credentials)",
  }),
  GATEWAY_TLS_CERT_FILE: optionalText({
    unset: 'plain HTTP',
    description: 'PEM certificate (chain) file: the inference listener serves HTTPS (with `GATEWAY_TLS_KEY_FILE`)',
  }),
  GATEWAY_TLS_KEY_FILE: optionalText({ unset: 'plain HTTP', description: 'PEM private key file of `GATEWAY_TLS_CERT_FILE`' }),
  GATEWAY_ADMIN_TLS_CERT_FILE: optionalText({
    unset: 'plain HTTP',
    description: 'PEM certificate (chain) file: the management listener serves HTTPS (with `GATEWAY_ADMIN_TLS_KEY_FILE`)',
  }),
  GATEWAY_ADMIN_TLS_KEY_FILE: optionalText({ unset: 'plain HTTP', description: 'PEM private key file of `GATEWAY_ADMIN_TLS_CERT_FILE`' }),
  GATEWAY_METRICS_TLS_CERT_FILE: optionalText({
    unset: 'plain HTTP',
    description: 'PEM certificate (chain) file: the metrics listener serves HTTPS (with `GATEWAY_METRICS_TLS_KEY_FILE`)',
  }),
  GATEWAY_METRICS_TLS_KEY_FILE: optionalText({
    unset: 'plain HTTP',
    description: 'PEM private key file of `GATEWAY_METRICS_TLS_CERT_FILE`',
  }),
  GATEWAY_METRICS_TENANT_LABELS: oneOf({
    values: ['on', 'off'],
    default: 'on',
    description:
      'the `project` label (`customer/project`) of the metrics (`/metrics`, OTLP export, forwarded `metrics` configs); `off`: every series says `project="all"`, so no series names a customer or project and counts add up across tenants (traces, logs and records keep the ids)',
  }),
  // store
  GATEWAY_DATA_DIR: text({
    default: './data',
    description:
      'embedded PGlite directory (`memory://` for a throw-away in-memory store); a separate data plane spools request records here',
  }),
  GATEWAY_MIGRATE: flag({
    default: '1',
    description:
      "`0`: start-up applies no database migration and refuses to start while one is pending (run `gateway migrate` once per upgrade first: the Helm chart's migrations Job does, so replicas never race on the schema)",
  }),
  GATEWAY_PGLITE_SHARED_BUFFERS: size({
    default: '32MiB',
    min: '1MiB',
    max: '4GiB',
    description:
      "embedded PGlite's `shared_buffers`; PostgreSQL's own 128 MB costs ~96 MB more RSS for ~10% cheaper record inserts at large tables",
  }),
  GATEWAY_DB_POOL_MAX: integer({
    default: '10',
    min: 1,
    max: 1000,
    unit: 'connections',
    description:
      "PostgreSQL connections of a process's main pool (the propagation listener holds 1–2 more, the record writer `GATEWAY_RECORD_WRITERS`); PostgreSQL's `max_connections` must cover every replica's",
  }),
  DATABASE_URL: url({
    schemes: ['postgres', 'postgresql'],
    secret: true,
    unset: 'embedded PGlite',
    description: 'PostgreSQL instead of PGlite (requires `GATEWAY_KEK`; no demo)',
  }),
  DATABASE_READ_URL: url({
    schemes: ['postgres', 'postgresql'],
    secret: true,
    unset: 'every read on `DATABASE_URL`',
    description:
      "a PostgreSQL read replica of `DATABASE_URL`: request-record searches and usage (the management API's and the console's) read from it; configuration reads, writes and the telemetry forwarder stay on the primary (needs `DATABASE_URL`)",
  }),
  // secrets
  GATEWAY_KEK: key({
    unset: 'generated into the data dir (embedded only)',
    description: 'the current key-encryption key; wraps provider keys, BYOK keys and signing keys (required with `DATABASE_URL`)',
  }),
  GATEWAY_KEK_PREVIOUS: list({
    secret: true,
    check: (k) => (isKey32(k) ? undefined : 'each key must be the base64 of exactly 32 bytes (comma-separated)'),
    description:
      'older KEKs (comma-separated base64 keys) still read during a rotation; `bun run kek:rotate` re-wraps the store; needs `GATEWAY_KEK`',
  }),
  GATEWAY_ADMIN_TOKEN: optionalText({
    secret: true,
    unset: 'generated on first start (printed once)',
    description: 'platform-admin bearer token',
  }),
  GATEWAY_DEMO: flag({ default: '1', description: '`0` disables the demo seed' }),
  // sign-in with an identity provider (contract §16, docs/sso.md)
  GATEWAY_OIDC_ISSUER: url({
    schemes: ['https', 'http'],
    parseable: true,
    unset: 'no single sign-on',
    description:
      'OpenID Provider issuer URL (discovery at `<issuer>/.well-known/openid-configuration`): the console offers "Sign in with SSO", `ExchangeOidcToken` accepts its ID tokens, and the protected-resource metadata of MCP profiles names it in `authorization_servers`; `http://` only on a loopback address',
  }),
  GATEWAY_OIDC_CLIENT_ID: optionalText({
    unset: 'required with `GATEWAY_OIDC_ISSUER`',
    description: "the gateway's client id at the issuer: the audience every ID token must name",
  }),
  GATEWAY_OIDC_CLIENT_SECRET: optionalText({
    secret: true,
    unset: 'a public client (PKCE only)',
    description: "the client's secret (a confidential client: the code is redeemed with `client_secret_basic`)",
  }),
  GATEWAY_OIDC_USER_CLAIM: text({
    default: 'email',
    description: "the ID token claim whose value is the member's `userId` (and SCIM `userName`)",
  }),
  GATEWAY_OIDC_ADMIN_GROUP: optionalText({
    unset: 'no platform admin by sign-in',
    description: 'a value of the `groups` claim whose members sign in as platform admins',
  }),
  // propagation
  WORKER_POLL_INTERVAL: duration({
    default: '10s',
    description: 'how often the propagation worker checks the revision when no notification woke it',
  }),
  WORKER_DRIFT_SWEEP_INTERVAL: duration({
    default: '5m',
    description: 'how often the worker compares data planes with the store (drift sweep)',
  }),
  WORKER_FULL_SYNC_EVERY_N_DRIFT_TICKS: integer({
    default: '6',
    min: 1,
    unit: 'drift sweeps',
    description: 'every Nth drift sweep loads the whole configuration',
  }),
  WORKER_LISTEN: flag({ default: '1', description: '`0`: no LISTEN/NOTIFY wake-ups nor held pulls, polling only' }),
  // records
  GATEWAY_RECORD_FLUSH_INTERVAL: duration({ default: '250ms', description: 'how often queued request records are written' }),
  GATEWAY_RECORD_QUEUE_MAX: integer({
    default: '50000',
    min: 1000,
    unit: 'records',
    description:
      'request records held in memory at most; past it, and while the store is down, they wait in `GATEWAY_DATA_DIR/record-spool` (dropped only with `memory://` or a disk that refuses them)',
  }),
  GATEWAY_RECORD_WRITERS: optionalInteger({
    unset: '2 with `DATABASE_URL`, 1 on embedded PGlite',
    min: 1,
    max: 16,
    unit: 'batches',
    description:
      'request-record batches written at once by this process (with PostgreSQL each on a connection of its own, beside `GATEWAY_DB_POOL_MAX`); the embedded PGlite runs one statement at a time, so more gain nothing there',
  }),
  GATEWAY_RECORD_BODIES: flag({ default: '1', description: '`0` keeps request/response bodies out of records (data retention)' }),
  GATEWAY_RESPONSE_RETENTION: duration({
    default: '30d',
    description: 'how long stored Responses, Messages threads and conversations are kept',
  }),
  GATEWAY_BACKGROUND_LEASE: duration({
    default: '30s',
    description:
      'a Responses `background` run renews its lease this often (a third of it); one found unfinished past its lease (its data plane stopped or was lost) reads `failed`',
  }),
  GATEWAY_AUDIT_CHECKPOINT_INTERVAL: duration({
    default: '5m',
    description: 'closed windows of audit entries are sealed into signed, chained checkpoints this often (docs/audit.md)',
  }),
  GATEWAY_LOG_LEVEL: oneOf({ values: LOG_LEVELS, default: 'info', description: 'JSON lines on stderr; secrets are never logged' }),
  // listener limits and shutdown
  GATEWAY_SHUTDOWN_GRACE: duration({
    default: '30s',
    description:
      'on SIGTERM/SIGINT, how long requests and streams in flight may finish before streams are ended with a `gateway_shutdown` error event',
  }),
  GATEWAY_MAX_BODY: size({ default: '32MiB', description: 'largest inference request body; larger → 413 `request_too_large`' }),
  GATEWAY_ADMIN_MAX_BODY: size({
    default: '4MiB',
    min: '64KiB',
    max: '1GiB',
    description: 'largest management API request body (operations and the data plane protocol); larger → 413',
  }),
  GATEWAY_BODY_TIMEOUT: duration({
    default: '30s',
    description: 'time to receive a request body once its headers arrived; slower → 408 `request_timeout`',
  }),
  GATEWAY_IDLE_TIMEOUT: duration({
    default: '10s',
    max: '255s',
    description: 'kept-alive connections idle this long are closed (rounded up to whole seconds)',
  }),
  GATEWAY_STREAM_STALL_TIMEOUT: duration({
    default: '60s',
    description: 'a stream whose client reads nothing this long is ended and its upstream call cancelled (`client_stalled`)',
  }),
  GATEWAY_MAX_UPSTREAM_RESPONSE: size({
    default: '32MiB',
    min: '64KiB',
    description:
      'largest upstream answer read into memory: a non-streaming JSON answer of any provider (chat, responses, messages, extra endpoints, token counts, token exchanges) or an error body; larger → the read is cancelled, 502 `upstream_response_too_large` (the next target of the route is tried)',
  }),
  GATEWAY_MAX_STREAM_EVENT: size({
    default: '16MiB',
    min: '64KiB',
    description:
      "largest single event of an upstream stream held while it arrives (one SSE event, one NDJSON line, one AWS event-stream frame); larger → the stream is cancelled, 502 `upstream_response_too_large` (before the first event: the next target is tried; after: the format's error event)",
  }),
  ...AGENT_AND_TOOL_SETTINGS,
  GATEWAY_KEEPALIVE_INTERVAL: duration({
    default: '15s',
    description: 'downstream silence after which a stream gets a `: keep-alive` comment',
  }),
  // governance and upstreams
  REDIS_URL: url({
    schemes: ['redis', 'rediss', 'redis+tls', 'redis+unix', 'redis+tls+unix'],
    secret: true,
    unset: 'counters per process',
    description: "rate-limit and budget counters shared by every data plane (atomic Lua scripts on Bun's Redis client; docs/governance.md)",
  }),
  GATEWAY_RESPONSE_CACHE_MAX: size({
    default: '64MiB',
    min: '1KiB',
    description:
      'bytes of cached answers (project setting `response-cache`) the in-process cache holds, least recently used evicted first; an answer over 1/16 of it is not cached (with REDIS_URL answers go to Redis instead: bound it with its `maxmemory`)',
  }),
  GATEWAY_FILE_MAX: size({
    default: '200MB',
    min: '1KiB',
    description: 'largest file uploaded to `/v1/files` (batch input); larger → 413 `request_too_large`',
  }),
  GATEWAY_BATCH_MAX_LINES: integer({
    default: '50000',
    min: 1,
    max: 10_000_000,
    unit: 'lines',
    description:
      "requests in one batch input file (OpenAI's own limit by default); more → the batch fails validation with `too_many_lines`; a line longer than `GATEWAY_MAX_BODY` is refused with `line_too_large`",
  }),
  GATEWAY_BATCH_CONCURRENCY: integer({
    default: '8',
    min: 1,
    max: 256,
    description: "lines of one batch run at the same time through the project's routes (`/v1/batches`)",
  }),
  GATEWAY_GUARDRAIL_SCAN_TIMEOUT: duration({
    default: '5s',
    description:
      'guardrail checks too large for the event loop run on a scan thread, one at a time; one that takes longer is stopped and its request (or answer) refused with `guardrail_blocked` (fail closed; docs/governance.md)',
  }),
  GATEWAY_LIMITS_ON_REDIS_ERROR: oneOf({
    values: ['closed', 'open'],
    default: 'closed',
    description:
      'while Redis fails, requests of projects with rate limits or budgets get 503 `limits_unavailable` (`closed`) or are served unlimited (`open`); logged once per 10 s',
  }),
  GATEWAY_LIMITS_LEASES: flag({
    default: '1',
    description:
      "with `REDIS_URL`, a data plane takes blocks of a counter far from its limit (32 admissions' worth, given back within 1 s) and admits from them without a Redis round trip; limits stay exact across planes, `spentUsd` counts held blocks as reserved. `0`: one Redis check per admission",
  }),
  GATEWAY_UPSTREAM_ALLOW_PRIVATE: flag({
    default: '0',
    description:
      '`1` lets anyone save connections whose URLs reach loopback, private, link-local, CGNAT or metadata addresses (otherwise only the platform admin may), and allows audit sinks at such addresses (otherwise refused for everyone)',
  }),
  // telemetry (the standard OpenTelemetry variables)
  OTEL_EXPORTER_OTLP_ENDPOINT: url({
    schemes: ['http', 'https'],
    parseable: true,
    unset: 'no traces, no OTLP metrics',
    description: 'OTLP base URL; over HTTP traces go to `<base>/v1/traces` and metrics to `<base>/v1/metrics`, over gRPC both to the base',
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: oneOf({
    values: OTLP_PROTOCOLS,
    default: 'http/json',
    description: 'OTLP transport of traces and metrics: `grpc`, `http/protobuf` or `http/json`',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url({
    schemes: ['http', 'https'],
    parseable: true,
    description: 'full OTLP traces URL (wins over `OTEL_EXPORTER_OTLP_ENDPOINT`)',
  }),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: url({
    schemes: ['http', 'https'],
    parseable: true,
    description: 'full OTLP metrics URL (wins over `OTEL_EXPORTER_OTLP_ENDPOINT`)',
  }),
  OTEL_METRIC_EXPORT_INTERVAL: integer({ default: '60000', min: 100, unit: 'ms', description: 'how often metrics are exported over OTLP' }),
  OTEL_EXPORTER_OTLP_HEADERS: headers({ description: 'headers sent with every export, `name=value,…` (URL-encoded)' }),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: headers({ description: 'headers sent with trace exports (win over `OTEL_EXPORTER_OTLP_HEADERS`)' }),
  OTEL_SERVICE_NAME: text({ default: 'ai-gateway', description: "spans' `service.name`" }),
  GATEWAY_SPAN_HEADERS: list({
    default: 'x-session-id,x-user-id,x-workflow-run-id,x-trace-tag',
    lower: true,
    check: (h) => (/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(h) ? undefined : `'${h}' is not a header name`),
    description: 'request headers copied onto spans as `gateway.header.<name>` (comma-separated; empty: none)',
  }),
  // read by Bun itself (`bun run start` sets the first two; the chart all three)
  BUN_CONFIG_MAX_HTTP_REQUESTS: integer({
    default: '256',
    min: 1,
    max: 65535,
    unit: 'requests',
    readBy: 'bun',
    description: "Bun's cap on concurrent `fetch` requests (upstream calls); `bun run start` sets 2048",
  }),
  MIMALLOC_PURGE_DELAY: integer({
    default: '1000',
    min: -1,
    unit: 'ms',
    readBy: 'bun',
    description:
      "how long Bun's allocator keeps freed memory before returning it to the OS; `bun run start` and the chart set 1000 (the CPU of never returning it, with a bounded RSS); unset, Bun's allocator uses 10 (~4 µs more CPU per request)",
  }),
  BUN_JSC_forceRAMSize: optionalInteger({
    min: 67108864,
    unit: 'bytes',
    readBy: 'bun',
    unset: "the machine's memory",
    description:
      "the memory JavaScriptCore sizes the growth of its heap for; the chart sets each pod's to its container's memory limit. Sized for a large machine's memory, a small heap is let grow freely: a data plane's RSS under load measured 170 MB unset and 137 MB at 512 MiB for the same CPU; the embedded gateway's 370 and 325 MB at 1 GiB for ~2 % more CPU. A sizing hint, not a limit",
  }),
} as const satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;
export type Settings = { readonly [K in SettingName]: ValueOf<(typeof SETTINGS)[K]> };

/** An empty value counts as unset, except for lists, where it is the empty list. */
const rawOf = (spec: SettingSpec, env: Env, name: string): string | undefined => {
  const v = env[name];
  return v === '' && spec.type !== 'list' ? undefined : v;
};

/** Parses and checks every setting; the first bad one throws a ConfigError naming it. */
export const parseSettings = (env: Env): Settings => {
  const out: Partial<Record<SettingName, unknown>> = {};
  for (const name of Object.keys(SETTINGS) as SettingName[]) out[name] = SETTINGS[name].parse(rawOf(SETTINGS[name], env, name), name);
  // Each value above is the parse result of its own declaration, which is what Settings states.
  return out as Settings;
};

/** One setting, for a tool that needs only it (a bad value throws, like at start; the others take their defaults). */
export const readSetting = <K extends SettingName>(name: K, env: Env): Settings[K] => parseSettings({ [name]: env[name] })[name];

/** Every setting as plain data, in declaration order (docs table, Helm values). */
export const settingSpecs = (): (SettingSpec & { name: SettingName })[] =>
  (Object.keys(SETTINGS) as SettingName[]).map((name) => {
    const { parse: _parse, ...spec } = SETTINGS[name];
    return { name, ...spec };
  });

export const isSetting = (name: string): name is SettingName => Object.hasOwn(SETTINGS, name);
