import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { admin, type TestGateway } from './support/gateway.ts';
import type { MockUpstream, Scripted } from './support/mock-upstreams.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';
import { settled } from './support/settled.ts';

/**
 * Upstream failures: normalised errors, fallback by priority, weighted splitting, time-outs,
 * malformed bodies, mid-stream errors, cut streams and client disconnects. The upstream model id
 * picks the mock's behaviour, so one mock serves every case.
 */

let tg: TestGateway;
let oa: MockUpstream;
let p: Provisioned;
let client: OpenAI;

const BEHAVIOUR: Record<string, Scripted> = {
  'fail-500': { status: 500, errorBody: JSON.stringify({ error: { message: 'boom', type: 'server_error', param: null, code: null } }) },
  'fail-429': {
    status: 429,
    errorBody: JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } }),
    headers: { 'retry-after': '7' },
  },
  'fail-400': {
    status: 400,
    errorBody: JSON.stringify({ error: { message: 'bad temperature', type: 'invalid_request_error', param: 'temperature', code: null } }),
  },
  'fail-401': {
    status: 401,
    errorBody: JSON.stringify({
      error: {
        message: 'Incorrect API key provided: sk-upstr****cret',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    }),
  },
  slow: { text: 'late', delayMs: 1500, usage: { input: 1, output: 1 } },
  malformed: { raw: '{"id": "x", "choices": [' },
  'mid-error': { text: 'one two three four', midStreamError: true, chunkDelayMs: 30, usage: { input: 3, output: 4 } },
  'early-error': { text: 'one two three four', midStreamError: true, usage: { input: 3, output: 4 } },
  cut: { text: 'one two three four five', cutAfter: 3, usage: { input: 3, output: 5 } },
  dribble: { text: 'a b c d e f g h i j k l m n o p', chunkDelayMs: 200, usage: { input: 3, output: 16 } },
};

const route = async (
  model: string,
  targets: { model: string; priority?: number; weight?: number }[],
  extra: Record<string, unknown> = {},
) => {
  const m = (await tg.must(admin('CreateModel'), { model, provider: 'openai', inputPricePerMillion: 1, outputPricePerMillion: 2 })) as {
    model: { id: string };
  };
  await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
  await tg.must(admin('CreateRoute'), {
    customerId: 'acme',
    model,
    targets: targets.map((t) => ({ connection: 'mock-openai', ...t })),
    ...extra,
  });
};

let world: World | undefined;
beforeAll(async () => {
  world = await startWorld();
  ({ tg, oa, p } = world);
  // The failover itself, every time: these cases fail the same targets over and over (the circuit
  // breakers that would then bench them are test/circuit-breaker.test.ts's).
  await tg.must(admin('UpsertProjectSetting'), {
    customerId: 'acme',
    projectId: 'default',
    settingName: 'circuit-breaker',
    settingValue: '{"failures": 0}',
  });
  oa.script((r) => BEHAVIOUR[String(r.body.model)] ?? { text: `served by ${String(r.body.model)}`, usage: { input: 5, output: 3 } });
  client = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: p.apiKey, maxRetries: 0 });
  await route('r-fallback', [
    { model: 'fail-500', priority: 0 },
    { model: 'backup-ok', priority: 1 },
  ]);
  await route('r-all-down', [
    { model: 'fail-500', priority: 0 },
    { model: 'fail-500', priority: 1 },
  ]);
  await route('r-429', [{ model: 'fail-429' }]);
  await route('r-400', [
    { model: 'fail-400', priority: 0 },
    { model: 'backup-ok', priority: 1 },
  ]);
  await route('r-401', [{ model: 'fail-401' }]);
  await route(
    'r-timeout',
    [
      { model: 'slow', priority: 0 },
      { model: 'backup-ok', priority: 1 },
    ],
    { timeoutMs: 300 },
  );
  await route('r-timeout-only', [{ model: 'slow' }], { timeoutMs: 300 });
  await route('r-slow-once', [{ model: 'slow' }]);
  await route('r-malformed', [{ model: 'malformed' }]);
  await route('r-mid-error', [{ model: 'mid-error' }]);
  await route('r-early-error', [{ model: 'early-error' }]);
  await route('r-cut', [{ model: 'cut' }]);
  await route('r-dribble', [{ model: 'dribble' }]);
  await route('r-split', [
    { model: 'split-a', weight: 3 },
    { model: 'split-b', weight: 1 },
  ]);
}, 60_000);

afterAll(() => stopWorld(world));

const post = (model: string, extra: Record<string, unknown> = {}) =>
  fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });

describe('non-streaming', () => {
  test('a 5xx primary falls back to the priority-1 target', async () => {
    const res = await post('r-fallback');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe('served by backup-ok');
    const tried = oa.requests.slice(-2).map((r) => r.body.model);
    expect(tried).toEqual(['fail-500', 'backup-ok']);
  });

  test('every target down → 503 with the normalised body', async () => {
    const res = await post('r-all-down');
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error.message).toContain('boom');
  });

  test('upstream 429 → 429 rate_limit_error rate_limit_exceeded, Retry-After kept', async () => {
    const res = await post('r-429');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(((await res.json()) as { error: { type: string; code: string } }).error).toMatchObject({
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
    });
  });

  test('a non-retryable 400 does not fall back and keeps the upstream param', async () => {
    const before = oa.requests.length;
    const res = await post('r-400');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe('temperature');
    expect(oa.requests.length - before).toBe(1);
  });

  test("an upstream auth failure is the gateway's problem (502) and leaks no upstream key", async () => {
    const res = await post('r-401');
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).not.toContain('sk-upstream');
    expect(text).not.toContain('sk-upstr');
  });

  test('time-out → the backup serves; without one → 504 timeout_error', async () => {
    const ok = await post('r-timeout');
    expect(ok.status).toBe(200);
    const t0 = performance.now();
    const res = await post('r-timeout-only');
    expect(res.status).toBe(504);
    expect(performance.now() - t0).toBeLessThan(1400);
    expect(((await res.json()) as { error: { type: string; code: string } }).error).toMatchObject({
      type: 'timeout_error',
      code: 'timeout',
    });
  });

  test('an unparseable upstream body → 502', async () => {
    const res = await post('r-malformed');
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('api_error');
  });

  test('weighted split at one priority follows the weights', async () => {
    const before = oa.requests.length;
    await Promise.all(Array.from({ length: 200 }, () => post('r-split').then((r) => r.text())));
    const models = oa.requests.slice(before).map((r) => r.body.model);
    const a = models.filter((m) => m === 'split-a').length;
    expect(models.length).toBe(200);
    expect(a).toBeGreaterThan(120);
    expect(a).toBeLessThan(180);
  });
});

describe('streaming', () => {
  test('a failing primary still falls back before the stream opens', async () => {
    const stream = await client.chat.completions.create({ model: 'r-fallback', messages: [{ role: 'user', content: 'x' }], stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('served by backup-ok');
  });

  test('errors before the stream opens are plain HTTP errors', async () => {
    const res = await post('r-429', { stream: true });
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toContain('application/json');
  });

  test('a mid-stream upstream error ends the stream with an error event the SDK raises', async () => {
    const stream = await client.chat.completions.create({ model: 'r-mid-error', messages: [{ role: 'user', content: 'x' }], stream: true });
    let text = '';
    const run = async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    };
    await expect((await settled(run())).promise).rejects.toThrow(/upstream exploded/);
    expect(text.length).toBeGreaterThan(0);
  });

  test('an error in the first upstream read is reported as an HTTP error, not a 200 stream', async () => {
    const res = await post('r-early-error', { stream: true });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('upstream exploded');
  });

  test('an upstream that closes mid-stream → error event, not a silent success', async () => {
    const res = await post('r-cut', { stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"error"');
    expect(text).not.toContain('[DONE]');
  });

  test('a client that disconnects while the upstream has not answered ends the attempt at once (record: client_closed)', async () => {
    const ac = new AbortController();
    const clientId = `gone-${crypto.randomUUID()}`;
    const pending = fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-request-id': clientId },
      body: JSON.stringify({ model: 'r-slow-once', messages: [{ role: 'user', content: 'x' }] }),
      signal: ac.signal,
    }).catch(() => undefined);
    await Bun.sleep(200);
    ac.abort();
    await pending;
    // The upstream answers after 1.5 s; the attempt must have ended long before that.
    await Bun.sleep(300);
    await tg.gw.records.flush();
    const found = (await tg.must(admin('SearchRequestRecords'), { clientRequestId: clientId })) as {
      records: { latencyMs: number; errorCode?: string }[];
    };
    expect(found.records).toHaveLength(1);
    expect(found.records[0]?.errorCode).toBe('client_closed');
    expect(found.records[0]?.latencyMs).toBeLessThan(1_000);
  });

  test('a client that disconnects cancels the upstream request', async () => {
    const before = oa.cancelled;
    const ac = new AbortController();
    const res = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'r-dribble', stream: true, messages: [{ role: 'user', content: 'x' }] }),
      signal: ac.signal,
    });
    const reader = res.body?.getReader();
    await reader?.read();
    ac.abort();
    await Bun.sleep(600);
    expect(oa.cancelled).toBe(before + 1);
  });
});
