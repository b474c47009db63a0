import { afterAll, beforeAll, expect, test } from 'bun:test';
import { admin, type TestGateway } from './support/gateway.ts';
import type { MockUpstream } from './support/mock-upstreams.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Spans reach a real OTLP/HTTP receiver with both request ids and the forwarded application
 * headers; quiet streams get keep-alive comments; a silent upstream ends the stream with a time-out.
 */

let tg: TestGateway;
let oa: MockUpstream;
let p: Provisioned;
const spans: Record<string, unknown>[] = [];
let collector: ReturnType<typeof Bun.serve>;

interface OtlpAttr {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}

let world: World | undefined;
beforeAll(async () => {
  collector = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      if (new URL(req.url).pathname === '/v1/traces') {
        const body = (await req.json()) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] };
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      return new Response('{}', { headers: { 'content-type': 'application/json' } });
    },
  });
  world = await startWorld({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`, GATEWAY_KEEPALIVE_INTERVAL: '100ms' });
  ({ tg, oa, p } = world);
  oa.script((r) =>
    r.body.model === 'quiet'
      ? { text: 'a b c', chunkDelayMs: 350, usage: { input: 1, output: 3 } }
      : r.body.model === 'stalled'
        ? { text: 'a b c', chunkDelayMs: 2000, usage: { input: 1, output: 3 } }
        : { text: 'ok', usage: { input: 1, output: 1 } },
  );
  for (const [model, timeoutMs] of [
    ['quiet', 5000],
    ['stalled', 500],
  ] as const) {
    const m = (await tg.must(admin('CreateModel'), { model, provider: 'openai' })) as { model: { id: string } };
    await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
    await tg.must(admin('CreateRoute'), { customerId: 'acme', model, timeoutMs, targets: [{ connection: 'mock-openai', model }] });
  }
}, 60_000);

afterAll(async () => {
  await stopWorld(world);
  collector.stop(true);
});

const stream = (model: string, headers: Record<string, string> = {}) =>
  fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'x' }] }),
  });

test('a quiet stream gets keep-alive comments and still completes', async () => {
  const res = await stream('quiet');
  const text = await res.text();
  expect(text).toContain(': keep-alive');
  expect(text).toContain('data: [DONE]');
});

test('an upstream silent past the route time-out ends the stream with a timeout error event', async () => {
  const t0 = performance.now();
  const res = await stream('stalled');
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(performance.now() - t0).toBeLessThan(1800);
  expect(text).toContain('"code":"timeout"');
  expect(text).not.toContain('[DONE]');
});

test('each request is a span carrying both ids, the model, usage and forwarded app headers', async () => {
  const res = await fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${p.apiKey}`,
      'content-type': 'application/json',
      'x-request-id': 'span-client-1',
      'x-session-id': 'sess-42',
    },
    body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'trace me' }] }),
  });
  const requestId = res.headers.get('x-request-id');
  await res.text();
  await tg.gw.stop();
  const attrsOf = (s: Record<string, unknown>) =>
    Object.fromEntries(
      ((s.attributes as OtlpAttr[]) ?? []).map((a) => [a.key, a.value.stringValue ?? a.value.intValue ?? a.value.boolValue]),
    );
  const span = spans.map(attrsOf).find((a) => a['gateway.request_id'] === requestId);
  expect(span).toBeDefined();
  expect(span).toMatchObject({
    'gateway.client_request_id': 'span-client-1',
    'gateway.header.x-session-id': 'sess-42',
    'gen_ai.request.model': 'gpt-mini',
    'gen_ai.provider.name': 'openai',
  });
  expect(Number(span?.['gen_ai.usage.input_tokens'])).toBe(1);
  expect(Number(span?.['http.response.status_code'])).toBe(200);
});
