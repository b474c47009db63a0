import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config/env.ts';
import { DOC_PATH, renderSettings, withSettings } from '../src/config/settings-doc.ts';
import { isSetting, parseSettings, readSetting, SETTINGS, settingSpecs } from '../src/config/settings.ts';

/** Settings declared once (issue 23 item 5): one schema parses, checks and documents every variable. */

const ROOT = join(import.meta.dir, '..');
const KEK = Buffer.alloc(32, 7).toString('base64');

const configError = (env: Record<string, string>, argv: string[] = []): ConfigError => {
  try {
    loadConfig(argv, env);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw new Error(`not a ConfigError: ${String(e)}`);
  }
  throw new Error(`accepted: ${JSON.stringify(env)}`);
};

describe('settings schema', () => {
  test('the settings table in docs/reference/settings.md is the one the schema generates', () => {
    const doc = readFileSync(DOC_PATH, 'utf8');
    expect(doc).toContain(renderSettings());
    expect(withSettings(doc)).toBe(doc);
    for (const s of settingSpecs()) expect(doc).toContain(`| \`${s.name}\` |`);
  });

  test('every environment variable read anywhere in src/ is declared in the schema', () => {
    const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
    );
    const read = /\b(?:process\.env|Bun\.env|env)(?:\.([A-Z][A-Z0-9_]*)|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g;
    // Tooling, not the gateway: regenerates golden files when set; `install` finds gcloud and helm on PATH.
    const tooling = new Set(['UPDATE_GOLDEN', 'PATH']);
    const undeclared: string[] = [];
    let names = 0;
    for (const f of files) {
      for (const m of readFileSync(join(ROOT, 'src', f), 'utf8').matchAll(read)) {
        const name = m[1] ?? m[2] ?? '';
        names++;
        if (!isSetting(name) && !tooling.has(name)) undeclared.push(`${f}: ${name}`);
      }
    }
    expect(names).toBeGreaterThan(0);
    expect(undeclared).toEqual([]);
  });

  test('defaults are the documented ones', () => {
    const c = loadConfig([], {});
    expect(c).toMatchObject({
      role: 'all',
      host: '127.0.0.1',
      port: 8080,
      adminPort: 8081,
      dataDir: './data',
      pgliteSharedBuffersKb: 32768,
      demo: true,
      pollIntervalMs: 10_000,
      driftSweepIntervalMs: 300_000,
      fullSyncEveryNDriftTicks: 6,
      workerListen: true,
      recordFlushMs: 250,
      recordBodies: true,
      upstreamAllowPrivate: false,
      keepAliveMs: 15_000,
      limits: {
        maxBodyBytes: 32 * 1024 ** 2,
        bodyTimeoutMs: 30_000,
        idleTimeoutSeconds: 10,
        streamStallMs: 60_000,
        maxUpstreamResponseBytes: 32 * 1024 ** 2,
        maxStreamEventBytes: 16 * 1024 ** 2,
        maxMcpMessageBytes: 8 * 1024 ** 2, // contract §7.1: GATEWAY_MCP_MAX_MESSAGE_BYTES defaults to 8 MiB
      },
      shutdownGraceMs: 30_000,
      telemetry: {
        protocol: 'http/json',
        tracesUrl: undefined,
        headers: {},
        serviceName: 'ai-gateway',
        spanHeaders: ['x-session-id', 'x-user-id', 'x-workflow-run-id', 'x-trace-tag'],
        metrics: { port: 9464, host: '127.0.0.1', tenantLabels: true, url: undefined, intervalMs: 60_000 },
      },
      auditCheckpointIntervalMs: 300_000,
      logLevel: 'info',
      limitsOnRedisError: 'closed',
      responseRetentionMs: 30 * 86_400_000,
      backgroundLeaseMs: 30_000,
    });
    expect([c.databaseUrl, c.adminToken, c.kek, c.redisUrl]).toEqual([undefined, undefined, undefined, undefined]);
    // Every declared default passes its own checks.
    for (const s of settingSpecs()) if (s.default !== undefined) expect(() => readSetting(s.name, { [s.name]: s.default })).not.toThrow();
  });

  test('values are parsed into what the gateway uses', () => {
    const c = loadConfig([], {
      GATEWAY_DEMO: 'false',
      GATEWAY_UPSTREAM_ALLOW_PRIVATE: 'true',
      WORKER_LISTEN: '0',
      GATEWAY_IDLE_TIMEOUT: '255s',
      GATEWAY_MAX_BODY: '512KiB',
      GATEWAY_SPAN_HEADERS: ' X-One , x-two ',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-a=1',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-a=2',
      GATEWAY_LIMITS_ON_REDIS_ERROR: 'open',
      REDIS_URL: 'redis://127.0.0.1:6379',
      // Empty counts as unset.
      GATEWAY_BODY_TIMEOUT: '',
      GATEWAY_LOG_LEVEL: '',
    });
    expect(c.demo).toBe(false);
    expect(c.upstreamAllowPrivate).toBe(true);
    expect(c.workerListen).toBe(false);
    expect(c.limits.idleTimeoutSeconds).toBe(255);
    expect(c.limits.maxBodyBytes).toBe(512 * 1024);
    expect(c.limits.bodyTimeoutMs).toBe(30_000);
    expect(c.logLevel).toBe('info');
    expect(c.telemetry).toEqual({
      protocol: 'http/json',
      tracesUrl: 'http://collector:4318/v1/traces',
      headers: { authorization: 'Bearer abc', 'x-a': '2' },
      serviceName: 'ai-gateway',
      // What the environment set itself (it wins over a separate data plane's dataExports.telemetry).
      fromEnv: { endpoint: true, serviceName: false },
      spanHeaders: ['x-one', 'x-two'],
      metrics: { port: 9464, host: '127.0.0.1', tenantLabels: true, url: 'http://collector:4318/v1/metrics', intervalMs: 60_000 },
    });
    expect(c.limitsOnRedisError).toBe('open');
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    // An empty list stays empty (no span headers), unlike other empty values.
    expect(loadConfig([], { GATEWAY_SPAN_HEADERS: '' }).telemetry.spanHeaders).toEqual([]);
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ GATEWAY_PORT: '99999' }, /^GATEWAY_PORT: '99999' is not a port number/],
    [{ WORKER_POLL_INTERVAL: 'soon' }, /^WORKER_POLL_INTERVAL: 'soon' is not a duration/],
    [{ GATEWAY_IDLE_TIMEOUT: '256s' }, /^GATEWAY_IDLE_TIMEOUT: '256s' is longer than 255s/],
    [{ GATEWAY_PGLITE_SHARED_BUFFERS: '512KiB' }, /^GATEWAY_PGLITE_SHARED_BUFFERS: '512KiB' is outside 1MiB-4GiB/],
    [{ GATEWAY_MAX_BODY: 'big' }, /^GATEWAY_MAX_BODY: 'big' is not a size/],
    [{ WORKER_FULL_SYNC_EVERY_N_DRIFT_TICKS: '0' }, /^WORKER_FULL_SYNC_EVERY_N_DRIFT_TICKS: '0' is not a positive integer/],
    [{ GATEWAY_LOG_LEVEL: 'loud' }, /^GATEWAY_LOG_LEVEL: 'loud' is not one of debug, info, warn, error/],
    [{ GATEWAY_LIMITS_ON_REDIS_ERROR: 'maybe' }, /^GATEWAY_LIMITS_ON_REDIS_ERROR: 'maybe' is not one of closed, open/],
    [{ GATEWAY_DEMO: 'no' }, /^GATEWAY_DEMO: 'no' is not 0, 1, true or false/],
    [{ GATEWAY_RECORD_BODIES: 'off' }, /^GATEWAY_RECORD_BODIES: /],
    [{ REDIS_URL: 'http://127.0.0.1:6379' }, /^REDIS_URL: must start with redis:\/\//],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /^OTEL_EXPORTER_OTLP_ENDPOINT: must start with http:\/\/ or https:\/\//],
    [{ OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%ZZ' }, /^OTEL_EXPORTER_OTLP_HEADERS: has a malformed %-escape/],
    [{ GATEWAY_SPAN_HEADERS: 'x-ok,not a header' }, /^GATEWAY_SPAN_HEADERS: 'not a header' is not a header name/],
    [{ BUN_CONFIG_MAX_HTTP_REQUESTS: 'lots' }, /^BUN_CONFIG_MAX_HTTP_REQUESTS: 'lots' is not an integer from 1 to 65535/],
    [{ MIMALLOC_PURGE_DELAY: '-2' }, /^MIMALLOC_PURGE_DELAY: '-2' is not an integer of at least -1/],
    [{ BUN_JSC_forceRAMSize: '512Mi' }, /^BUN_JSC_forceRAMSize: '512Mi' is not an integer of at least 67108864/],
    [{ DATABASE_URL: 'mysql://u:p@h/db', GATEWAY_KEK: KEK }, /^DATABASE_URL: must start with postgres:\/\//],
    [{ DATABASE_URL: 'postgres://u:p@h/db' }, /^GATEWAY_KEK: required when DATABASE_URL is set/],
    [{ GATEWAY_KEK: 'c2hvcnQ=' }, /^GATEWAY_KEK: must be the base64 of exactly 32 bytes/],
    [{ GATEWAY_KEK_PREVIOUS: KEK }, /^GATEWAY_KEK_PREVIOUS: needs GATEWAY_KEK/],
  ];
  for (const [env, message] of bad) {
    const setting = message.source.slice(1).split(':')[0] ?? '';
    test(`${Object.keys(env).join(' + ')} = ${Object.values(env).join(', ')} is refused naming ${setting}`, () => {
      const e = configError(env);
      expect(e.setting).toBe(setting);
      expect(e.message).toMatch(message);
      expect(e.message.split('\n')).toHaveLength(1);
    });
  }

  test('a secret setting is never repeated in its error', () => {
    const secret = 'hunter2-do-not-print';
    const cases: Record<string, string>[] = [
      { DATABASE_URL: `mysql://admin:${secret}@db/x`, GATEWAY_KEK: KEK },
      { REDIS_URL: `http://:${secret}@cache:6379` },
      { OTEL_EXPORTER_OTLP_HEADERS: `authorization=${secret}%ZZ` },
      { OTEL_EXPORTER_OTLP_TRACES_HEADERS: `${secret}` },
      { GATEWAY_KEK: secret },
      { GATEWAY_KEK: KEK, GATEWAY_KEK_PREVIOUS: `${KEK},${secret}` },
    ];
    for (const env of cases) {
      const e = configError(env);
      expect(e.message).not.toContain(secret);
      expect(e.message).not.toContain('hunter2');
    }
  });

  test('importing the schema reads and starts nothing; its specs are plain data', async () => {
    const proc = Bun.spawn(
      ['bun', '-e', "const m = await import('./src/config/settings.ts'); console.log(Object.keys(m.SETTINGS).length)"],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GATEWAY_PORT: '99999', GATEWAY_LOG_LEVEL: 'loud' },
        stdout: 'pipe',
        stderr: 'pipe',
      },
    );
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(Number(out.trim())).toBe(Object.keys(SETTINGS).length);
    const specs = settingSpecs();
    expect(JSON.parse(JSON.stringify(specs))).toEqual(specs);
    for (const s of specs) expect(s.description.length).toBeGreaterThan(10);
    expect(() => parseSettings({})).not.toThrow();
  });

  test('a bad flag stops start-up with one line naming it and exit code 2', async () => {
    const proc = Bun.spawn(['bun', 'src/main.ts', 'serve'], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY_DATA_DIR: 'memory://', GATEWAY_PORT: '0', GATEWAY_ADMIN_PORT: '0', GATEWAY_DEMO: 'maybe' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const code = await proc.exited;
    const err = (await new Response(proc.stderr).text()).trim();
    expect(code).toBe(2);
    expect(err).toBe("gateway: configuration error: GATEWAY_DEMO: 'maybe' is not 0, 1, true or false");
  }, 30_000);
});
