import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Gateway, startGateway } from '../src/app.ts';
import { loadConfig } from '../src/config/env.ts';
import { generateKek } from '../src/core/secrets.ts';
import { jsonStore } from '../src/records/backend.ts';
import { entryOf } from '../src/records/entry.ts';
import { type TestDatabase, testDatabase } from './support/db.ts';
import { ADMIN_TOKEN, admin, apikeyOp } from './support/gateway.ts';
import { type MockUpstream, startMockUpstream } from './support/mock-upstreams.ts';
import { eventually, type OtlpReceiver, startGrpcOtlpReceiver, startOtlpReceiver } from './support/otlp-receiver.ts';

/**
 * Telemetry forwarding configs of type traces, metrics and logs (issue 25, deliver 4; contract §8):
 * the request records go to each config's sink as spans, metric points or log records, in its
 * protocol (http/json, http/protobuf, grpc) and with its auth, exactly once across sink failures
 * and a gateway restart on the same store, late records included. A real gateway (PGlite in a data
 * directory — bodies kept beside the rows — or PostgreSQL with TEST_DATABASE_URL), a mock upstream,
 * and local OTLP receivers (HTTP, and gRPC with @grpc/grpc-js).
 */

const KEK = generateKek();
let dataDir = '';
let target: TestDatabase;
let rx: OtlpReceiver;
let grpcRx: { url: string; stop(): void };
let oa: MockUpstream;
let gw: Gateway | undefined;
let apiKey = '';

const start = (): Promise<Gateway> =>
  startGateway(
    loadConfig([], {
      GATEWAY_PORT: '0',
      GATEWAY_ADMIN_PORT: '0',
      GATEWAY_METRICS_PORT: '0',
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      GATEWAY_DEMO: '0',
      GATEWAY_KEK: KEK,
      GATEWAY_LOG_LEVEL: 'error',
      GATEWAY_SHUTDOWN_GRACE: '1s',
      GATEWAY_RECORD_FLUSH_INTERVAL: '50ms',
      // The forwarding lag follows the audit lag (here 1 s).
      GATEWAY_AUDIT_CHECKPOINT_INTERVAL: '1s',
      GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1',
      ...(target.url ? { DATABASE_URL: target.url } : {}),
    }),
  );

const g = (): Gateway => gw as Gateway;
const must = async (op: string, body: unknown): Promise<Record<string, unknown>> => {
  const res = await fetch(`${g().adminUrl}${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify(body),
  });
  const out = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(out)}`);
  return out;
};

/** The configs: sink name → (type, protocol, auth). */
const SINKS = {
  '/tj': { telemetryType: 'traces', protocol: 'http/json', authType: 'bearer', authValue: 'tok-tj' },
  '/tp': { telemetryType: 'traces', protocol: 'http/protobuf', authType: 'api_key', authValue: 'key-tp' },
  '/mj': { telemetryType: 'metrics', protocol: 'http/json', authType: 'basic', authValue: 'u:p' },
  '/mp': { telemetryType: 'metrics', protocol: 'http/protobuf', authType: 'bearer', authValue: 'tok-mp' },
  '/lj': { telemetryType: 'logs', protocol: 'http/json', authType: 'bearer', authValue: 'tok-lj' },
  '/lp': { telemetryType: 'logs', protocol: 'http/protobuf', authType: 'bearer', authValue: 'tok-lp' },
} as const;
const ids: Record<string, string> = {};
const sent: string[] = [];

const chat = async (content: string, clientId?: string): Promise<string> => {
  const res = await fetch(`${g().inferenceUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...(clientId ? { 'x-request-id': clientId } : {}) },
    body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  const id = res.headers.get('x-request-id') ?? '';
  sent.push(id);
  return id;
};

const uidsAt = (sink: string): string[] => rx.logs.filter((l) => l.sink === sink).map((l) => String(l.attributes['log.record.uid']));
const serverSpansAt = (sink: string) => rx.spans.filter((s) => s.sink === sink && s.kind === 2);
const requestsCounted = (sink: string): number =>
  rx.points.filter((p) => p.sink === sink && p.metric === 'gateway.requests').reduce((n, p) => n + p.value, 0);

/** Every sink holds every request sent, each once (metrics: the request counts add up to them). */
const allExactlyOnce = async (timeoutMs = 20_000): Promise<void> => {
  await eventually(
    () =>
      ['/lj', '/lp'].every((s) => uidsAt(s).length >= sent.length) &&
      ['/tj', '/tp'].every((s) => serverSpansAt(s).length >= sent.length) &&
      ['/mj', '/mp'].every((s) => requestsCounted(s) >= sent.length)
        ? true
        : undefined,
    timeoutMs,
  );
  for (const s of ['/lj', '/lp']) expect(uidsAt(s).sort()).toEqual([...sent].sort());
  for (const s of ['/tj', '/tp'])
    expect(
      serverSpansAt(s)
        .map((x) => String(x.attributes['gateway.request_id']))
        .sort(),
    ).toEqual([...sent].sort());
  for (const s of ['/mj', '/mp']) expect(requestsCounted(s)).toBe(sent.length);
};

const until = async (check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> => {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await Bun.sleep(100);
  }
};

const status = async (sink: string): Promise<string> =>
  ((await must(admin('GetTelemetryConfig'), { id: ids[sink] })) as { config: { status: string } }).config.status;

beforeAll(async () => {
  target = await testDatabase();
  dataDir = target.url ? 'memory://' : mkdtempSync(join(tmpdir(), 'gw-telemetry-fwd-'));
  rx = startOtlpReceiver();
  grpcRx = await startGrpcOtlpReceiver(rx);
  oa = startMockUpstream('openai');
  oa.script(() => ({ text: 'forty-two', usage: { input: 11, output: 7 } }));
  gw = await start();
  await must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  const m = (await must(admin('CreateModel'), {
    model: 'gpt-mini',
    provider: 'openai',
    inputPricePerMillion: 1,
    outputPricePerMillion: 2,
  })) as { model: { id: string } };
  await must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
  await must(admin('CreateProviderConnection'), {
    customerId: 'acme',
    projectId: 'default',
    name: 'mock-openai',
    provider: 'openai',
    baseUrl: `${oa.url}/v1`,
    apiKey: 'sk-upstream',
  });
  await must(admin('CreateRoute'), {
    customerId: 'acme',
    projectId: 'default',
    model: 'gpt-mini',
    targets: [{ connection: 'mock-openai', model: 'gpt-4o-mini' }],
  });
  apiKey = (
    (await must(apikeyOp('CreateApiKey'), {
      name: 'fwd',
      userId: 'u1',
      enterpriseContext: { customerId: 'acme', projectId: 'default' },
    })) as { apiKey: string }
  ).apiKey;
  for (const [sink, c] of Object.entries(SINKS)) {
    const created = (await must(admin('CreateTelemetryConfig'), {
      userId: 'ops',
      sinkUrl: `${rx.url}${sink}`,
      apiKeyHeader: c.authType === 'api_key' ? 'x-api-key' : '',
      ...c,
    })) as { config: { id: string } };
    ids[sink] = created.config.id;
  }
  await g().controller.settled();
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  rx?.stop();
  grpcRx?.stop();
  oa?.stop();
  await target?.drop();
  if (dataDir && dataDir !== 'memory://') rmSync(dataDir, { recursive: true, force: true });
});

describe('telemetry forwarding of request records', () => {
  test('traces, metrics and logs reach their sinks over http/json and http/protobuf, with the ids, values and auth', async () => {
    const first = await chat('what is six times seven', 'client-1');
    await chat('and eight times nine');
    await allExactlyOnce();
    const hex = first.replaceAll('-', '');
    for (const sink of ['/tj', '/tp']) {
      const server = serverSpansAt(sink).find((s) => s.attributes['gateway.request_id'] === first);
      expect(server).toMatchObject({ name: 'chat gpt-mini', traceId: hex, parentSpanId: '' });
      expect(server?.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-mini',
        'gen_ai.provider.name': 'openai',
        'gen_ai.usage.input_tokens': 11,
        'gen_ai.usage.output_tokens': 7,
        'gateway.client_request_id': 'client-1',
        'gateway.customer_id': 'acme',
        'gateway.project_id': 'default',
        'http.response.status_code': 200,
      });
      expect(typeof server?.attributes['gateway.api_key_id']).toBe('string');
      const client = rx.spans.find((s) => s.sink === sink && s.kind === 3 && s.parentSpanId === server?.spanId);
      expect(client).toMatchObject({ traceId: hex, name: 'chat gpt-4o-mini' });
      expect(client?.attributes['gen_ai.request.model']).toBe('gpt-4o-mini');
    }
    for (const sink of ['/lj', '/lp']) {
      const rec = rx.logs.find((l) => l.sink === sink && l.attributes['log.record.uid'] === first);
      expect(rec?.attributes).toMatchObject({
        'gateway.request_id': first,
        'gateway.client_request_id': 'client-1',
        'gateway.customer_id': 'acme',
        'gateway.project_id': 'default',
        'gen_ai.request.model': 'gpt-mini',
      });
      // The body is the record as SearchRequestRecords returns it, bodies as stored (on PGlite: read from the body files).
      const body = JSON.parse(rec?.body ?? '{}') as {
        requestId: string;
        requestBody: { messages: { content: string }[] };
        responseBody: unknown;
        usage: { promptTokens: number };
      };
      expect(body.requestId).toBe(first);
      expect(body.requestBody.messages[0]?.content).toBe('what is six times seven');
      expect(JSON.stringify(body.responseBody)).toContain('forty-two');
      expect(body.usage.promptTokens).toBe(11);
    }
    for (const sink of ['/mj', '/mp']) {
      const points = rx.points.filter((p) => p.sink === sink);
      expect(points.find((p) => p.metric === 'gateway.requests')?.attributes).toMatchObject({
        status_code: 200,
        'gen_ai.request.model': 'gpt-mini',
        'gen_ai.provider.name': 'openai',
        project: 'acme/default',
      });
      const input = points.filter((p) => p.metric === 'gen_ai.client.token.usage' && p.attributes['gen_ai.token.type'] === 'input');
      expect(input.reduce((n, p) => n + p.value, 0)).toBe(2);
      expect(input.reduce((n, p) => n + (p.sum ?? 0), 0)).toBe(22);
      expect(points.filter((p) => p.metric === 'gen_ai.client.operation.duration').reduce((n, p) => n + p.value, 0)).toBe(2);
      // 2 × (11 × $1 + 7 × $2) per million tokens.
      expect(points.filter((p) => p.metric === 'gateway.cost').reduce((n, p) => n + p.value, 0)).toBeCloseTo(0.00005, 9);
    }
    expect([...(rx.contentTypes.get('/tj/v1/traces') ?? [])]).toEqual(['application/json']);
    expect([...(rx.contentTypes.get('/tp/v1/traces') ?? [])]).toEqual(['application/x-protobuf']);
    expect([...(rx.contentTypes.get('/mp/v1/metrics') ?? [])]).toEqual(['application/x-protobuf']);
    expect([...(rx.contentTypes.get('/lj/v1/logs') ?? [])]).toEqual(['application/json']);
    expect([...(rx.auth.get('/tj') ?? [])]).toEqual(['authorization: Bearer tok-tj']);
    expect([...(rx.auth.get('/tp') ?? [])]).toEqual(['x-api-key: key-tp']);
    expect([...(rx.auth.get('/mj') ?? [])]).toEqual([`authorization: Basic ${btoa('u:p')}`]);
    for (const sink of Object.keys(SINKS)) expect(await status(sink)).toBe('connected');
  }, 40_000);

  test('a sink failing (500) then recovering receives everything exactly once; status error, then connected', async () => {
    for (const s of Object.keys(SINKS)) rx.failing.add(s);
    const refusedBefore = rx.refused.get('/lj') ?? 0;
    for (let i = 0; i < 5; i++) await chat(`while down ${i}`);
    await eventually(() => ((rx.refused.get('/lj') ?? 0) > refusedBefore ? true : undefined), 10_000);
    await until(async () => (await status('/lj')) === 'error');
    expect(uidsAt('/lj').length).toBe(sent.length - 5);
    for (const s of Object.keys(SINKS)) rx.failing.delete(s);
    await allExactlyOnce(30_000);
    expect(await status('/lj')).toBe('connected');
  }, 60_000);

  test('a restart on the same store resumes without duplicates or losses', async () => {
    for (const s of Object.keys(SINKS)) rx.failing.add(s);
    for (let i = 0; i < 4; i++) await chat(`before restart ${i}`);
    await Bun.sleep(1_500);
    await g().stop();
    for (const s of Object.keys(SINKS)) rx.failing.delete(s);
    gw = await start();
    await g().controller.settled();
    for (let i = 0; i < 3; i++) await chat(`after restart ${i}`);
    await allExactlyOnce(40_000);
  }, 90_000);

  test('a record stored late (an older received_at, as a spooled batch delivers it) is still forwarded', async () => {
    const id = crypto.randomUUID();
    const receivedAt = new Date(Date.now() - 3_600_000);
    // The JSON insert a spooled batch takes (stored_at is left to the database).
    const failed = await jsonStore(g().store.db).insert([
      entryOf({
        requestId: id,
        receivedAt,
        customerId: 'acme',
        projectId: 'default',
        endpoint: '/v1/chat/completions',
        model: 'gpt-mini',
        provider: 'openai',
        httpStatus: 502,
        latencyMs: 30,
        errorCode: 'upstream_error',
      }),
    ]);
    expect(failed).toBeUndefined();
    sent.push(id);
    await allExactlyOnce();
    const span = serverSpansAt('/tp').find((s) => s.attributes['gateway.request_id'] === id);
    expect(span?.attributes['error.type']).toBe('upstream_error');
    expect(span?.statusCode).toBe(2);
    expect(rx.points.find((p) => p.sink === '/mj' && p.metric === 'gateway.requests' && p.attributes.status_code === 502)?.value).toBe(1);
  }, 40_000);

  test('grpc: spans and log records over OTLP/gRPC with the bearer token as metadata', async () => {
    const created = await Promise.all(
      (['traces', 'logs'] as const).map((telemetryType) =>
        must(admin('CreateTelemetryConfig'), {
          userId: 'ops',
          telemetryType,
          sinkUrl: grpcRx.url,
          protocol: 'grpc',
          authType: 'bearer',
          authValue: 'tok-grpc',
        }),
      ),
    );
    expect(created.length).toBe(2);
    const id = await chat('over grpc');
    await eventually(
      () =>
        rx.spans.some((s) => s.sink === 'grpc' && s.attributes['gateway.request_id'] === id) &&
        rx.logs.some((l) => l.sink === 'grpc' && l.attributes['log.record.uid'] === id)
          ? true
          : undefined,
      20_000,
    );
    // Only records stored after the configs' creation.
    expect(new Set(rx.logs.filter((l) => l.sink === 'grpc').map((l) => l.attributes['log.record.uid']))).toEqual(new Set([id]));
    expect(rx.spans.find((s) => s.sink === 'grpc' && s.kind === 2)?.traceId).toBe(id.replaceAll('-', ''));
    expect([...(rx.auth.get('grpc') ?? [])]).toEqual(['authorization: Bearer tok-grpc']);
  }, 40_000);
});
