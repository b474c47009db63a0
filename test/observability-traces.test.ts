import { afterAll, beforeAll, expect, test } from 'bun:test';
import { admin, type TestGateway } from './support/gateway.ts';
import type { MockUpstream } from './support/mock-upstreams.ts';
import { eventually, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './support/otlp-receiver.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Traces as contract §8 fixes them, received over OTLP/HTTP protobuf by a local receiver: a
 * SERVER span named `chat <model>` continuing the client's traceparent, one CLIENT child per
 * upstream attempt (the failed one with error.type), the GenAI and gateway attributes, both ids
 * and the forwarded headers, no prompt or completion text unless `trace-content` is true, and each
 * attempt's traceparent sent upstream.
 */

let world: World | undefined;
let tg: TestGateway;
let oa: MockUpstream;
let p: Provisioned;
let otlp: OtlpReceiver;

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

beforeAll(async () => {
  otlp = startOtlpReceiver();
  world = await startWorld({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
  ({ tg, oa, p } = world);
  oa.script((r) =>
    r.body.model === 'fail-500'
      ? { status: 500, errorBody: '{"error":{"message":"boom","type":"server_error"}}' }
      : { text: 'the answer is 42', usage: { input: 7, output: 5 } },
  );
  const m = (await tg.must(admin('CreateModel'), {
    model: 'fb',
    provider: 'openai',
    inputPricePerMillion: 1,
    outputPricePerMillion: 2,
  })) as { model: { id: string } };
  await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
  await tg.must(admin('CreateRoute'), {
    customerId: 'acme',
    model: 'fb',
    targets: [
      { connection: 'mock-openai', model: 'fail-500', priority: 0 },
      { connection: 'mock-openai', model: 'backup-ok', priority: 1 },
    ],
  });
}, 60_000);

afterAll(async () => {
  await stopWorld(world);
  otlp.stop();
});

const chat = (content: string, headers: Record<string, string> = {}) =>
  fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'fb', max_tokens: 64, temperature: 0.3, messages: [{ role: 'user', content }] }),
  });

/** The request's SERVER span and its CLIENT children, once all arrived. */
const treeOf = (requestId: string, children: number) =>
  eventually(() => {
    const server = otlp.spans.find((s) => s.kind === 2 && s.attributes['gateway.request_id'] === requestId);
    if (!server) return undefined;
    const kids = otlp.spans.filter((s) => s.parentSpanId === server.spanId && s.kind === 3);
    return kids.length >= children ? { server, kids } : undefined;
  });

test('a request with a fallback is one SERVER span with a CLIENT span per attempt, GenAI attributes, both ids and forwarded headers', async () => {
  const res = await chat('secret prompt words', {
    traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
    'x-request-id': 'client-77',
    'x-session-id': 'sess-9',
  });
  expect(res.status).toBe(200);
  await res.text();
  const requestId = res.headers.get('x-request-id') ?? '';
  const { server, kids } = await treeOf(requestId, 2);

  // The client's trace is continued.
  expect(server.traceId).toBe(CLIENT_TRACE);
  expect(server.parentSpanId).toBe(CLIENT_SPAN);
  expect(server.name).toBe('chat fb');
  expect(server.attributes).toMatchObject({
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'fb',
    'gen_ai.provider.name': 'openai',
    'gen_ai.response.model': 'backup-ok',
    'gen_ai.usage.input_tokens': 7,
    'gen_ai.usage.output_tokens': 5,
    'gen_ai.request.max_tokens': 64,
    'gen_ai.request.temperature': 0.3,
    'gen_ai.response.finish_reasons': ['stop'],
    'gateway.request_id': requestId,
    'gateway.client_request_id': 'client-77',
    'gateway.header.x-session-id': 'sess-9',
    'gateway.customer_id': 'acme',
    'gateway.project_id': 'default',
    'gateway.api_key_id': p.keyId,
    'gateway.attempts': 2,
    'http.response.status_code': 200,
  });
  expect(Number(server.attributes['gateway.cost_usd'])).toBeCloseTo((7 * 1 + 5 * 2) / 1e6, 12);
  expect(typeof server.attributes['gen_ai.response.id']).toBe('string');

  // Fallback: two sibling CLIENT spans, the failed one first with error.type.
  const [failed, ok] = [...kids].sort(
    (a, b) => Number(a.attributes['gen_ai.request.model'] !== 'fail-500') - Number(b.attributes['gen_ai.request.model'] !== 'fail-500'),
  ) as [ReceivedSpan, ReceivedSpan];
  expect(failed.name).toBe('chat fail-500');
  expect(failed.statusCode).toBe(2);
  expect(failed.attributes).toMatchObject({
    'gen_ai.provider.name': 'openai',
    'http.response.status_code': 500,
    'server.address': '127.0.0.1',
  });
  expect(typeof failed.attributes['error.type']).toBe('string');
  expect(ok.name).toBe('chat backup-ok');
  expect(ok.attributes['error.type']).toBeUndefined();
  expect(ok.attributes).toMatchObject({
    'gen_ai.request.model': 'backup-ok',
    'gen_ai.usage.input_tokens': 7,
    'gen_ai.usage.output_tokens': 5,
    'server.address': '127.0.0.1',
  });
  expect(ok.traceId).toBe(CLIENT_TRACE);

  // Each attempt sent its own span's traceparent upstream.
  const sent = oa.requests.slice(-2).map((r) => r.headers.traceparent);
  expect(sent).toEqual([`00-${CLIENT_TRACE}-${failed.spanId}-01`, `00-${CLIENT_TRACE}-${ok.spanId}-01`]);

  // No content by default.
  for (const s of [server, ...kids]) expect(JSON.stringify(s.attributes)).not.toContain('secret prompt');
  expect(JSON.stringify(server.attributes)).not.toContain('the answer is 42');
});

test("the project's trace-content setting puts prompt and completion text on the span", async () => {
  await tg.must(admin('UpsertProjectSetting'), {
    customerId: 'acme',
    projectId: 'default',
    settingName: 'trace-content',
    settingValue: 'true',
  });
  const res = await chat('visible prompt words');
  await res.text();
  const requestId = res.headers.get('x-request-id') ?? '';
  const { server } = await treeOf(requestId, 2);
  expect(String(server.attributes['gen_ai.input.messages'])).toContain('visible prompt words');
  expect(String(server.attributes['gen_ai.output.messages'])).toContain('the answer is 42');
  await tg.must(admin('DeleteProjectSetting'), { customerId: 'acme', projectId: 'default', settingName: 'trace-content' });
});

test('without a client traceparent the SERVER span starts a trace; the protobuf transport was used', async () => {
  const res = await chat('x');
  await res.text();
  const { server } = await treeOf(res.headers.get('x-request-id') ?? '', 2);
  expect(server.parentSpanId).toBe('');
  expect(server.traceId).not.toBe(CLIENT_TRACE);
  expect([...(otlp.contentTypes.get('/v1/traces') ?? [])]).toEqual(['application/x-protobuf']);
});
