import { afterAll, beforeAll, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { createEventStreamParser } from '../src/providers/eventstream.ts';
import { requestRecords } from '../src/store/schema/index.ts';
import { meteredWorld, type World } from './governance/support.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import { type MockUpstream, startMockUpstream } from './support/mock-upstreams.ts';

/**
 * The Gemini, Converse and Cohere endpoints stand on the same pipeline as the first three formats
 * (contract §13): guardrails (input block and redaction, output block mid-stream), fallback across
 * families, request records with usage and cost.
 */

let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let w: World;
const at = () => ({ customerId: w.customerId, projectId: w.projectId });

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
  w = await meteredWorld(tg, oa.url, an.url);
  await tg.must(admin('CreateGuardrail'), {
    ...at(),
    name: 'no-secrets',
    stage: 'both',
    kind: 'regex',
    pattern: 'TOPSECRET-\\d+',
    action: 'block',
  });
  await tg.must(admin('CreateGuardrail'), { ...at(), name: 'pii', stage: 'input', kind: 'pii', piiTypes: ['email'], action: 'redact' });
  const m = (await tg.must(admin('CreateModel'), {
    model: 'two-families',
    provider: 'openai',
    mode: 'chat',
    capabilities: ['chat'],
    contextWindow: 128000,
    maxOutputTokens: 1000,
    inputPricePerMillion: 0,
    outputPricePerMillion: 1,
  })) as { model: { id: string } };
  await tg.must(admin('AddProjectModel'), { ...at(), modelId: m.model.id });
  await tg.must(admin('CreateRoute'), {
    ...at(),
    model: 'two-families',
    targets: [
      { connection: 'mock-openai', model: 'gpt-4o-mini', priority: 0 },
      { connection: 'mock-anthropic', model: 'claude-haiku-4-5', priority: 1 },
    ],
  });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  oa?.stop();
  an?.stop();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${tg.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

test('Gemini: an input guardrail blocks in Google shape, nothing reaches the upstream', async () => {
  const before = oa.requests.length;
  const r = await post('/v1beta/models/metered:generateContent', { contents: [{ role: 'user', parts: [{ text: 'TOPSECRET-7' }] }] });
  expect(r.status).toBe(400);
  const err = ((await r.json()) as { error: { code: number; status: string; message: string } }).error;
  expect(err).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  expect(err.message).toContain('no-secrets');
  expect(oa.requests.length).toBe(before);
});

test('Cohere: an input redaction reaches the upstream redacted', async () => {
  const r = await post('/v2/chat', { model: 'metered', messages: [{ role: 'user', content: 'mail bob@example.com please' }] });
  expect(r.status).toBe(200);
  expect(JSON.stringify(oa.requests.at(-1)?.body)).toContain('[REDACTED:email]');
  expect(JSON.stringify(oa.requests.at(-1)?.body)).not.toContain('bob@example.com');
});

test('Converse stream: an output guardrail ends the event stream with an exception message', async () => {
  oa.script(() => ({ text: 'the code is TOPSECRET-42 indeed' }));
  const r = await post('/model/metered/converse-stream', { messages: [{ role: 'user', content: [{ text: 'tell me' }] }] });
  oa.script(undefined);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
  const frames = createEventStreamParser().push(new Uint8Array(await r.arrayBuffer()));
  const last = frames.at(-1);
  expect(last?.headers?.[':message-type']).toBe('exception');
  expect(frames.map((f) => f.data).join('')).not.toContain('TOPSECRET-42');
});

test('fallback across families: the OpenAI target fails, the Anthropic one answers the Gemini client', async () => {
  oa.script(() => ({ status: 503, errorBody: '{"error":{"message":"overloaded","type":"server_error"}}' }));
  const r = await post('/v1beta/models/two-families:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] });
  oa.script(undefined);
  expect(r.status).toBe(200);
  const body = (await r.json()) as { candidates: { content: { parts: { text: string }[] } }[]; modelVersion: string };
  expect(body.candidates[0]?.content.parts[0]?.text).toBe('anthropic says: hello');
  expect(body.modelVersion).toBe('two-families');
});

test('records: each format is recorded with its endpoint, usage and cost', async () => {
  const ids: [string, string][] = [];
  for (const [path, body] of [
    ['/v1beta/models/metered:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }],
    ['/model/metered/converse', { messages: [{ role: 'user', content: [{ text: 'hi' }] }] }],
    ['/v2/chat', { model: 'metered', messages: [{ role: 'user', content: 'hi' }], stream: true }],
  ] as const) {
    const r = await post(path, body);
    expect(r.status).toBe(200);
    await r.arrayBuffer();
    ids.push([path, r.headers.get('x-request-id') as string]);
  }
  await tg.gw.records.flush();
  const endpoints: string[] = [];
  for (const [, id] of ids) {
    const [row] = await tg.gw.store.db.select().from(requestRecords).where(eq(requestRecords.requestId, id));
    expect(row).toMatchObject({ httpStatus: 200, inputTokens: 12, outputTokens: 7, costNanoUsd: 7000 });
    endpoints.push(String(row?.endpoint));
  }
  expect(endpoints).toEqual(['/v1beta/models/{model}:generateContent', '/model/{modelId}/converse', '/v2/chat']);
});

test('limits reserve the output cap each format names: Gemini maxOutputTokens, Converse maxTokens, Cohere max_tokens', async () => {
  // 1000 tokens a minute for the project; a request reserves its input bound plus its output cap
  // until it settles. Two held at once: caps of 100 fit together, caps of 600 do not.
  await tg.must(admin('UpsertProjectSetting'), {
    ...at(),
    settingName: 'rate-limit',
    settingValue: JSON.stringify({ tokensPerMinute: 1000, per: 'project' }),
  });
  const cases: [string, (cap: number) => Record<string, unknown>, number][] = [
    [
      '/v1beta/models/metered:generateContent',
      (cap) => ({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: cap } }),
      429,
    ],
    [
      '/model/metered/converse',
      (cap) => ({ messages: [{ role: 'user', content: [{ text: 'hi' }] }], inferenceConfig: { maxTokens: cap } }),
      429,
    ],
    ['/v2/chat', (cap) => ({ model: 'metered', messages: [{ role: 'user', content: 'hi' }], max_tokens: cap }), 429],
  ];
  oa.script(() => ({ text: 'ok', delayMs: 300 }));
  try {
    for (const [path, body, limited] of cases) {
      const small = await Promise.all([post(path, body(100)), post(path, body(100))]);
      expect({ path, statuses: small.map((r) => r.status) }).toEqual({ path, statuses: [200, 200] });
      const large = await Promise.all([post(path, body(600)), post(path, body(600))]);
      expect({ path, statuses: large.map((r) => r.status).sort() }).toEqual({ path, statuses: [200, limited] });
      const refused = large.find((r) => r.status === limited);
      expect(await refused?.text()).toContain('1000 tokens per minute');
      await Promise.all([...small, ...large].map((r) => r.arrayBuffer().catch(() => undefined)));
    }
  } finally {
    oa.script(undefined);
    await tg.must(admin('DeleteProjectSetting'), { ...at(), settingName: 'rate-limit' });
  }
});

test('Converse: metrics.latencyMs is the time from the request to the answer, streamed or not', async () => {
  oa.script(() => ({ text: 'ok', delayMs: 200 }));
  try {
    const r = await post('/model/metered/converse-stream', { messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
    expect(r.status).toBe(200);
    const frames = createEventStreamParser().push(new Uint8Array(await r.arrayBuffer()));
    const metadata = frames.find((f) => f.headers?.[':event-type'] === 'metadata');
    const streamed = (JSON.parse(metadata?.data ?? '{}') as { metrics?: { latencyMs?: number } }).metrics?.latencyMs ?? 0;
    expect(streamed).toBeGreaterThanOrEqual(200);
    expect(streamed).toBeLessThan(30_000);
    const whole = (await (await post('/model/metered/converse', { messages: [{ role: 'user', content: [{ text: 'hi' }] }] })).json()) as {
      metrics?: { latencyMs?: number };
    };
    expect(whole.metrics?.latencyMs ?? 0).toBeGreaterThanOrEqual(200);
  } finally {
    oa.script(undefined);
  }
});
