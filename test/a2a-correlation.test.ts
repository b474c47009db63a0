import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestAgent, type TestAgent } from './support/a2a-agent.ts';
import { admin } from './support/gateway.ts';
import { eventually, type OtlpReceiver, startOtlpReceiver } from './support/otlp-receiver.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Correlation (contract §12): an A2A call's `X-Gateway-Correlation-Id` is returned and sent to the
 * agent with `traceparent`; when the agent sends them back on its own model call through the
 * gateway, that call's record carries the correlation id, so SearchRequestRecords by correlation
 * id finds the task's record and the model call together, in one trace.
 */

let w: World;
let otlp: OtlpReceiver;
let agent: TestAgent;
const seen: { traceparent: string | null; correlation: string | null }[] = [];

beforeAll(async () => {
  otlp = startOtlpReceiver();
  w = await startWorld({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
  // The agent, on every call, asks the gateway's model with the headers it was given.
  agent = startTestAgent('Planner', {
    onCall: async (h) => {
      seen.push({ traceparent: h.get('traceparent'), correlation: h.get('x-gateway-correlation-id') });
      const res = await fetch(`${w.tg.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${w.p.apiKey}`,
          traceparent: h.get('traceparent') ?? '',
          'x-gateway-correlation-id': h.get('x-gateway-correlation-id') ?? '',
        },
        body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'plan it' }] }),
      });
      await res.text();
    },
  });
  await w.tg.must(admin('CreateA2aAgent'), { agentId: 'planner', cardUrl: agent.cardUrl });
  await w.tg.must(admin('AddProjectA2aAgent'), { customerId: 'acme', projectId: 'default', agentId: 'planner' });
}, 90_000);

afterAll(async () => {
  await agent?.stop();
  await stopWorld(w);
  otlp?.stop();
});

const send = (headers: Record<string, string> = {}, method = 'SendMessage') =>
  fetch(`${w.tg.url}/a2a/planner`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${w.p.apiKey}`, 'a2a-version': '1.0', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { message: { role: 'ROLE_USER', messageId: crypto.randomUUID(), parts: [{ text: 'make a plan' }] } },
    }),
  });

const byCorrelation = async (correlationId: string, n: number): Promise<Record<string, unknown>[]> => {
  for (let i = 0; i < 50; i++) {
    const r = (await w.tg.must(admin('SearchRequestRecords'), { correlationId })) as { records: Record<string, unknown>[] };
    if (r.records.length >= n) return r.records;
    await Bun.sleep(100);
  }
  return [];
};

describe("a task's record and the model call it caused", () => {
  test('share the correlation id (returned, sent to the agent, sent back) and are found together', async () => {
    const res = await send();
    expect(res.status).toBe(200);
    await res.text();
    const correlation = res.headers.get('x-gateway-correlation-id') ?? '';
    expect(correlation).not.toBe('');
    expect(seen.at(-1)?.correlation).toBe(correlation);
    const records = await byCorrelation(correlation, 2);
    expect(records.map((r) => r.endpoint).sort()).toEqual(['/a2a/planner', '/v1/chat/completions']);
    expect(records.every((r) => r.correlationId === correlation)).toBe(true);
    // One trace: the A2A call's SERVER span (invoke_agent) and, under the same trace id, the model call the agent made.
    const a2aId = String(records.find((r) => r.endpoint === '/a2a/planner')?.requestId);
    const chatId = String(records.find((r) => r.endpoint === '/v1/chat/completions')?.requestId);
    const spans = await eventually(() => {
      const a2a = otlp.spans.find((s) => s.kind === 2 && s.attributes['gateway.request_id'] === a2aId);
      const chat = otlp.spans.find((s) => s.kind === 2 && s.attributes['gateway.request_id'] === chatId);
      return a2a && chat ? { a2a, chat } : undefined;
    });
    expect(spans.a2a.name).toBe('invoke_agent planner');
    expect(spans.a2a.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': 'planner',
      'gen_ai.agent.name': 'Planner',
    });
    expect(spans.chat.traceId).toBe(spans.a2a.traceId);
  });

  test("the client's own correlation id is honoured, and its traceparent continues to the agent", async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const res = await send({ 'x-gateway-correlation-id': 'order-4711', traceparent });
    await res.text();
    expect(res.headers.get('x-gateway-correlation-id')).toBe('order-4711');
    expect(seen.at(-1)?.traceparent?.split('-')[1]).toBe('0af7651916cd43dd8448eb211c80319c');
    expect((await byCorrelation('order-4711', 2)).length).toBe(2);
  });
});

describe('the SERVER span of a streamed call', () => {
  test('ends when the stream ends, with its outcome (not when it starts)', async () => {
    agent.mode = 'slow';
    try {
      const t0 = performance.now();
      const res = await send({ accept: 'text/event-stream' }, 'SendStreamingMessage');
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: '));
      const streamMs = performance.now() - t0;
      // A task, one artifact per word (3), a completed status: four gaps of 300 ms.
      expect(events.length).toBe(5);
      expect(streamMs).toBeGreaterThanOrEqual(1_100);
      const id = String(res.headers.get('x-request-id'));
      const span = await eventually(() => otlp.spans.find((s) => s.kind === 2 && s.attributes['gateway.request_id'] === id));
      expect(span.durationMs).toBeGreaterThanOrEqual(1_100);
      const taskId = JSON.parse(String(events[0]).slice(6)).result.task.id;
      expect(span.attributes).toMatchObject({ 'http.response.status_code': 200, 'gateway.stream': true, 'gateway.upstream_model': taskId });
    } finally {
      agent.mode = 'normal';
    }
  });

  test('a stream that breaks ends its span as an error, after the events that came', async () => {
    agent.mode = 'break';
    try {
      const res = await send({ accept: 'text/event-stream' }, 'SendStreamingMessage');
      const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: '));
      expect(events.length).toBe(3);
      const id = String(res.headers.get('x-request-id'));
      const span = await eventually(() => otlp.spans.find((s) => s.kind === 2 && s.attributes['gateway.request_id'] === id));
      expect(span.statusCode).toBe(2);
      expect(span.attributes).toMatchObject({ 'error.type': 'a2a_upstream_error', 'http.response.status_code': 502 });
      expect(span.durationMs).toBeGreaterThanOrEqual(90);
    } finally {
      agent.mode = 'normal';
    }
  });
});
