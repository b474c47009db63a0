import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { loadConfig } from '../src/config/env.ts';
import { setLogLevel, setLogSink } from '../src/core/log.ts';
import { type AccountTelemetry, DataExports, timeoutMsOf } from '../src/data-plane/remote/exports.ts';
import { spanExporter } from '../src/telemetry/otlp.ts';
import type { TelemetryConfig } from '../src/config/telemetry.ts';

/**
 * Issue 25, item 4: how a separate data plane's `dataExports.telemetry` combines with its own
 * environment (the environment's OTLP endpoint wins; otherwise the account's endpoint, protocol,
 * headers, timeout, insecure and honoured local variables), that a pulled document re-applies the
 * settings only when they differ, and that `insecure` really skips verification of an https
 * endpoint's certificate (a self-signed receiver made here by openssl).
 */

const base = (env: Record<string, string> = {}): TelemetryConfig => loadConfig([], { GATEWAY_METRICS_PORT: '0', ...env }).telemetry;
const account = (o: Partial<AccountTelemetry> = {}): AccountTelemetry => ({
  endpoint: 'http://collector:4318',
  headers: {},
  insecure: false,
  protocol: '',
  timeout: '',
  localVars: {},
  ...o,
});
const lines: string[] = [];

beforeAll(() => {
  // Another file may have left the level at error: this one reads warnings.
  setLogLevel('info');
  setLogSink((l) => void lines.push(l));
});
afterAll(() => {
  setLogSink(undefined);
  setLogLevel('error');
});

describe("a data plane's export settings", () => {
  test('the account’s endpoint applies when the environment names none: OTLP paths, protocol default, headers, timeout, insecure', () => {
    const c = new DataExports(
      base({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_HEADERS: 'x-env=1' }),
      account({
        endpoint: 'https://collector:4318/',
        headers: { authorization: 'Bearer a', 'x-env': 'account' },
        insecure: true,
        timeout: '2500ms',
      }),
    ).initial;
    expect(c.protocol).toBe('http/protobuf');
    expect(c.tracesUrl).toBe('https://collector:4318/v1/traces');
    expect(c.metrics.url).toBe('https://collector:4318/v1/metrics');
    // The environment's headers win per name.
    expect(c.headers).toEqual({ authorization: 'Bearer a', 'x-env': '1' });
    expect(c.insecure).toBe(true);
    expect(c.timeoutMs).toBe(2500);
    const grpc = new DataExports(base(), account({ protocol: 'grpc', endpoint: 'http://collector:4317' })).initial;
    expect([grpc.protocol, grpc.tracesUrl, grpc.metrics.url]).toEqual(['grpc', 'http://collector:4317', 'http://collector:4317']);
  });

  test('an OTLP endpoint in the environment wins; no endpoint anywhere exports nothing', () => {
    const env = base({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://local:4318' });
    expect(new DataExports(env, account({ headers: { authorization: 'Bearer a' } })).initial).toEqual(env);
    const none = new DataExports(base(), account({ endpoint: '' })).initial;
    expect([none.tracesUrl, none.metrics.url]).toEqual([undefined, undefined]);
    expect(new DataExports(base(), undefined).initial.tracesUrl).toBeUndefined();
  });

  test('local variables: service name, resource attributes and extra headers honoured; others logged once by name, never by value', () => {
    const ex = new DataExports(base(), undefined);
    const vars = {
      OTEL_SERVICE_NAME: 'edge',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,team=a%2Cb',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=t1',
      OTEL_TRACES_SAMPLER: 'sampler-secret-77',
    };
    const c = ex.effective(account({ headers: { 'x-tenant': 'account' }, localVars: vars }));
    expect(c.serviceName).toBe('edge');
    expect(c.resourceAttributes).toEqual({ 'deployment.environment': 'prod', team: 'a,b' });
    expect(c.headers).toEqual({ 'x-tenant': 't1' });
    ex.effective(account({ localVars: vars }));
    expect(lines.filter((l) => l.includes('OTEL_TRACES_SAMPLER'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('sampler-secret-77'))).toEqual([]);
    // OTEL_SERVICE_NAME set in the environment wins over the local variable.
    expect(new DataExports(base({ OTEL_SERVICE_NAME: 'ops-name' }), account({ localVars: vars })).initial.serviceName).toBe('ops-name');
  });

  test('timeouts are durations of the seed’s pattern', () => {
    expect([
      timeoutMsOf('10s'),
      timeoutMsOf('250ms'),
      timeoutMsOf('1m'),
      timeoutMsOf('1500us'),
      timeoutMsOf('5ns'),
      timeoutMsOf(''),
      timeoutMsOf('10'),
      timeoutMsOf('0s'),
    ]).toEqual([10_000, 250, 60_000, 2, 1, undefined, undefined, undefined]);
  });

  test('a pulled document re-applies the settings only when they differ', async () => {
    const ex = new DataExports(base(), account());
    const applied: TelemetryConfig[] = [];
    ex.follow({ reconfigure: async (c) => void applied.push(c) });
    await ex.apply(account());
    await ex.apply(undefined);
    expect(applied).toHaveLength(0);
    await ex.apply(account({ endpoint: 'http://other:4318', headers: { authorization: 'Bearer b' } }));
    await ex.apply(account({ endpoint: 'http://other:4318', headers: { authorization: 'Bearer b' } }));
    expect(applied.map((c) => [c.tracesUrl, c.headers.authorization])).toEqual([['http://other:4318/v1/traces', 'Bearer b']]);
    await ex.apply(account({ endpoint: '' }));
    expect(applied.at(-1)?.tracesUrl).toBeUndefined();
  });
});

describe('insecure: an https endpoint with a certificate nobody trusts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-otlp-tls-'));
  let server: ReturnType<typeof Bun.serve> | undefined;
  const got: string[] = [];
  afterAll(() => {
    void server?.stop(true);
    rmSync(dir, { recursive: true, force: true });
  });

  const exportOne = async (insecure: boolean): Promise<void> => {
    const url = `https://127.0.0.1:${server?.port}/v1/traces`;
    const provider = new BasicTracerProvider({
      spanProcessors: [
        new BatchSpanProcessor(
          await spanExporter('http/json', url, { headers: { authorization: 'Bearer tls' }, insecure, timeoutMs: 3000 }),
        ),
      ],
    });
    provider
      .getTracer('t')
      .startSpan(insecure ? 'insecure' : 'verified')
      .end();
    await provider.forceFlush().catch(() => undefined);
    await provider.shutdown().catch(() => undefined);
  };

  test('is exported to with insecure, and not without', async () => {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    const made = Bun.spawnSync([
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ]);
    expect(made.exitCode).toBe(0);
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      tls: { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') },
      fetch: async (req) => {
        got.push(
          `${req.headers.get('authorization')} ${JSON.stringify(await req.json()).includes('"insecure"') ? 'insecure' : 'verified'}`,
        );
        return Response.json({});
      },
    });
    await exportOne(false);
    expect(got).toEqual([]);
    await exportOne(true);
    expect(got).toEqual(['Bearer tls insecure']);
  }, 30_000);
});
