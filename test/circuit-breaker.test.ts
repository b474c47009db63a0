import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { admin, type TestGateway } from './support/gateway.ts';
import type { MockUpstream, Recorded, Scripted } from './support/mock-upstreams.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';
import { freePort } from './support/throwaway-pg.ts';

/**
 * Circuit breakers (contract §14) through the real listeners, against a mock OpenAI upstream whose
 * behaviour each upstream model id picks: a target failing then recovering (opens, probes, closes),
 * every target open (fail fast), a bad key on one of two connections to the same provider, and a
 * 429 storm with Retry-After.
 */

let world: World | undefined;
let tg: TestGateway;
let oa: MockUpstream;
let p: Provisioned;
const down = { flaky: true };
let metricsUrl = '';

const fail503: Scripted = {
  status: 503,
  errorBody: JSON.stringify({ error: { message: 'overloaded', type: 'server_error', param: null, code: null } }),
};
const behaviour = (r: Recorded): Scripted => {
  if (r.headers.authorization === 'Bearer sk-revoked-key') {
    return {
      status: 401,
      errorBody: JSON.stringify({
        error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
      }),
    };
  }
  const model = String(r.body.model);
  if (model === 'flaky' && down.flaky) return fail503;
  if (model === 'always-down') return fail503;
  if (model === 'storm')
    return {
      status: 429,
      headers: { 'retry-after': '2' },
      errorBody: JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } }),
    };
  return { text: `served by ${model}`, usage: { input: 5, output: 3 } };
};
const sentTo = (model: string): number => oa.requests.filter((r) => r.body.model === model).length;

const route = async (model: string, targets: { connection?: string; model: string; priority?: number }[]) => {
  const m = (await tg.must(admin('CreateModel'), { model, provider: 'openai', inputPricePerMillion: 1, outputPricePerMillion: 2 })) as {
    model: { id: string };
  };
  await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
  await tg.must(admin('CreateRoute'), { customerId: 'acme', model, targets: targets.map((t) => ({ connection: 'mock-openai', ...t })) });
};

const chat = async (model: string, path = '/v1/chat/completions') => {
  const messages = [{ role: 'user', content: 'hi' }];
  const res = await fetch(`${tg.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(path === '/v1/messages' ? { model, max_tokens: 50, messages } : { model, messages }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
};

type Health = {
  model: string;
  connection: string;
  upstreamModel: string;
  state: string;
  reason?: string;
  failures: number;
  latencyMsP50: number;
  lastError?: string;
  openedAt?: string;
};
const health = async (): Promise<Health[]> =>
  ((await tg.must(admin('GetTargetHealth'), { customerId: 'acme', projectId: 'default' })) as { targets: Health[] }).targets;
const healthOf = async (model: string, upstreamModel: string, connection = 'mock-openai') =>
  (await health()).find((h) => h.model === model && h.upstreamModel === upstreamModel && h.connection === connection);

beforeAll(async () => {
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  world = await startWorld({ GATEWAY_METRICS_PORT: String(port) });
  ({ tg, oa, p } = world);
  oa.script(behaviour);
  await tg.must(admin('UpsertProjectSetting'), {
    customerId: 'acme',
    projectId: 'default',
    settingName: 'circuit-breaker',
    settingValue: '{"failures": 3, "windowSeconds": 30, "openSeconds": 1}',
  });
  await route('r-flaky', [
    { model: 'flaky', priority: 0 },
    { model: 'steady', priority: 1 },
  ]);
  await route('r-down', [{ model: 'always-down' }]);
  await route('r-storm', [
    { model: 'storm', priority: 0 },
    { model: 'calm', priority: 1 },
  ]);
  await route('r-storm-only', [{ model: 'storm' }]);
  await tg.must(admin('CreateProviderConnection'), {
    customerId: 'acme',
    projectId: 'default',
    name: 'revoked-openai',
    provider: 'openai',
    baseUrl: `${oa.url}/v1`,
    apiKey: 'sk-revoked-key',
  });
  await route('r-keys', [
    { connection: 'revoked-openai', model: 'keyed', priority: 0 },
    { model: 'keyed', priority: 1 },
  ]);
  await route('r-keys-other', [
    { connection: 'revoked-openai', model: 'keyed-2', priority: 0 },
    { model: 'keyed-2', priority: 1 },
  ]);
}, 60_000);

afterAll(async () => {
  await stopWorld(world);
});

describe('a target failing then recovering', () => {
  test('opens after 3 failures (the backup serves, nothing sent to it while open), probes once after openSeconds, closes on success', async () => {
    const t0 = Date.now();
    const timeline: string[] = [];
    const mark = (what: string) => timeline.push(`+${String(Date.now() - t0).padStart(5)} ms  ${what}`);
    for (let i = 1; i <= 3; i++) {
      const r = await chat('r-flaky');
      expect(r.status).toBe(200);
      expect(JSON.stringify(r.body)).toContain('served by steady');
      mark(`request ${i}: flaky answered 503, steady served (sent to flaky: ${sentTo('flaky')})`);
    }
    const open = await healthOf('r-flaky', 'flaky');
    expect(open).toMatchObject({ state: 'OPEN', reason: 'failures', failures: 3 });
    expect(open?.lastError).toContain('503');
    expect(typeof open?.openedAt).toBe('string');
    mark(`breaker OPEN (reason ${open?.reason}, failures ${open?.failures}, last error "${open?.lastError}")`);
    for (let i = 4; i <= 6; i++) {
      const r = await chat('r-flaky');
      expect(r.status).toBe(200);
      mark(`request ${i}: steady served, flaky skipped (sent to flaky: ${sentTo('flaky')})`);
    }
    expect(sentTo('flaky')).toBe(3);
    down.flaky = false;
    mark('flaky recovers');
    await Bun.sleep(1100);
    const probe = await chat('r-flaky');
    expect(probe.status).toBe(200);
    expect(JSON.stringify(probe.body)).toContain('served by flaky');
    expect(sentTo('flaky')).toBe(4);
    mark(`request 7 after openSeconds: the probe went to flaky and it answered (sent to flaky: ${sentTo('flaky')})`);
    const closed = await healthOf('r-flaky', 'flaky');
    expect(closed?.state).toBe('CLOSED');
    expect(closed?.failures).toBe(0);
    expect(closed?.latencyMsP50).toBeGreaterThanOrEqual(0);
    mark(`breaker ${closed?.state}`);
    const after = await chat('r-flaky');
    expect(JSON.stringify(after.body)).toContain('served by flaky');
    mark('request 8: flaky serves again');
    console.log(`breaker timeline (target mock-openai × flaky; failures 3, openSeconds 1):\n${timeline.join('\n')}`);
  });

  test('every target open: a 503 circuit_open with Retry-After at once, in the client format, no upstream request', async () => {
    for (let i = 0; i < 3; i++) expect((await chat('r-down')).status).toBe(503);
    const before = sentTo('always-down');
    const r = await chat('r-down');
    expect(r.status).toBe(503);
    expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(r.body).toMatchObject({ error: { code: 'circuit_open', type: 'service_unavailable_error' } });
    expect(String((r.body.error as { message: string }).message)).toContain("'r-down'");
    const m = await chat('r-down', '/v1/messages');
    expect(m.status).toBe(503);
    expect(m.body.type).toBe('error');
    expect(String((m.body.error as { message: string }).message)).toContain('circuit breaker');
    expect(sentTo('always-down')).toBe(before);
  });
});

describe('a bad key on one of two connections to the same provider', () => {
  test('the 401 benches that connection (reason auth) on every route; the other connection to the provider serves', async () => {
    const revoked = () => oa.requests.filter((r) => r.headers.authorization === 'Bearer sk-revoked-key').length;
    const first = await chat('r-keys');
    expect(first.status).toBe(200);
    expect(JSON.stringify(first.body)).toContain('served by keyed');
    expect(revoked()).toBe(1);
    const h = await healthOf('r-keys', 'keyed', 'revoked-openai');
    expect(h).toMatchObject({ state: 'OPEN', reason: 'auth' });
    expect(h?.lastError).toContain('401');
    expect(h?.lastError).not.toContain('sk-revoked-key');
    // Another route through the same connection: benched too, without a request with the bad key.
    const other = await chat('r-keys-other');
    expect(other.status).toBe(200);
    expect((await healthOf('r-keys-other', 'keyed-2', 'revoked-openai'))?.reason).toBe('auth');
    for (let i = 0; i < 3; i++) expect((await chat('r-keys')).status).toBe(200);
    expect(revoked()).toBe(1);
    // The provider itself is not benched: the good connection's targets are closed.
    expect((await healthOf('r-keys', 'keyed', 'mock-openai'))?.state).toBe('CLOSED');
  });
});

describe('a 429 storm with Retry-After', () => {
  test('the target cools down for the Retry-After (COOLING): the backup serves, nothing sent to it; then it is tried again', async () => {
    const storm = await Promise.all(Array.from({ length: 8 }, () => chat('r-storm')));
    expect(storm.every((r) => r.status === 200)).toBe(true);
    const during = sentTo('storm');
    expect(await healthOf('r-storm', 'storm')).toMatchObject({ state: 'COOLING', reason: 'rate_limited' });
    for (let i = 0; i < 5; i++) expect(JSON.stringify((await chat('r-storm')).body)).toContain('served by calm');
    expect(sentTo('storm')).toBe(during);
    // A route with only the cooling target: the upstream's 429 with the time left, no request sent.
    const only = await chat('r-storm-only');
    expect(only.status).toBe(429);
    expect(Number(only.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(only.retryAfter)).toBeLessThanOrEqual(2);
    expect(sentTo('storm')).toBe(during);
    await Bun.sleep(2100);
    await chat('r-storm');
    expect(sentTo('storm')).toBe(during + 1);
  });
});

describe('the setting and the metrics', () => {
  test('a circuit-breaker value outside its format is invalid_argument naming settingValue, and nothing changes', async () => {
    for (const bad of ['{"failures": -1}', '{"failures": 3, "openSeconds": 0}', '{"failures": 3, "window": 10}', '[5]', 'five']) {
      const r = await tg.call(admin('UpsertProjectSetting'), {
        customerId: 'acme',
        projectId: 'default',
        settingName: 'circuit-breaker',
        settingValue: bad,
      });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'invalid_argument' });
      expect(String(r.body.message)).toContain('settingValue');
    }
    const now = (await tg.must(admin('GetProjectSettings'), { customerId: 'acme', projectId: 'default' })) as {
      settings: { settingName: string; settingValue: string }[];
    };
    expect(now.settings.find((x) => x.settingName === 'circuit-breaker')?.settingValue).toBe(
      '{"failures": 3, "windowSeconds": 30, "openSeconds": 1}',
    );
  });

  test('/metrics: gateway_circuit_state (1 on the current state) and the transitions counter', async () => {
    const text = await (await fetch(metricsUrl)).text();
    const line = (name: string, labels: Record<string, string>): number | undefined => {
      for (const l of text.split('\n')) {
        if (!l.startsWith(`${name}{`)) continue;
        if (Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`))) return Number(l.slice(l.lastIndexOf(' ') + 1));
      }
      return undefined;
    };
    expect(line('gateway_circuit_state', { connection: 'mock-openai', upstream_model: 'always-down', state: 'OPEN' })).toBe(1);
    expect(line('gateway_circuit_state', { connection: 'mock-openai', upstream_model: 'always-down', state: 'CLOSED' })).toBe(0);
    expect(line('gateway_circuit_state', { connection: 'revoked-openai', upstream_model: '', state: 'OPEN' })).toBe(1);
    expect(line('gateway_circuit_transitions_total', { connection: 'mock-openai', upstream_model: 'flaky', state: 'OPEN' })).toBe(1);
    expect(line('gateway_circuit_transitions_total', { connection: 'mock-openai', upstream_model: 'flaky', state: 'HALF_OPEN' })).toBe(1);
    expect(line('gateway_circuit_transitions_total', { connection: 'mock-openai', upstream_model: 'flaky', state: 'CLOSED' })).toBe(1);
  });
});
