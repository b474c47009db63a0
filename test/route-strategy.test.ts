import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { admin, type TestGateway } from './support/gateway.ts';
import type { MockUpstream, Recorded, Scripted } from './support/mock-upstreams.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Route `strategy` (contract §14) through the real listeners: `latency` sends to the target with
 * the lowest recent latency across priorities, `headroom` to the connection with the most
 * requests left (the provider's rate-limit headers, else the connection's `rpm` option).
 */

let world: World | undefined;
let tg: TestGateway;
let oa: MockUpstream;
let p: Provisioned;

const REMAINING: Record<string, string> = { 'Bearer sk-nearly-spent': '2', 'Bearer sk-plenty-left': '500' };
const behaviour = (r: Recorded): Scripted => {
  const model = String(r.body.model);
  const left = REMAINING[r.headers.authorization ?? ''];
  return {
    text: `served by ${model}`,
    usage: { input: 3, output: 2 },
    ...(model === 'slow-t' ? { delayMs: 150 } : {}),
    ...(left ? { headers: { 'x-ratelimit-remaining-requests': left, 'x-ratelimit-limit-requests': '1000' } } : {}),
  };
};

const connection = (name: string, apiKey: string, options: Record<string, unknown> = {}) =>
  tg.must(admin('CreateProviderConnection'), {
    customerId: 'acme',
    projectId: 'default',
    name,
    provider: 'openai',
    baseUrl: `${oa.url}/v1`,
    apiKey,
    options,
  });
const route = async (model: string, strategy: string, targets: { connection: string; model: string; priority: number }[]) => {
  const m = (await tg.must(admin('CreateModel'), { model, provider: 'openai', inputPricePerMillion: 1, outputPricePerMillion: 2 })) as {
    model: { id: string };
  };
  await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
  return tg.call(admin('CreateRoute'), { customerId: 'acme', model, strategy, targets });
};
const chat = async (model: string): Promise<{ text: string; key: string }> => {
  const n = oa.requests.length;
  const res = await fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(200);
  return { text: await res.text(), key: oa.requests[n]?.headers.authorization ?? '' };
};

beforeAll(async () => {
  world = await startWorld();
  ({ tg, oa, p } = world);
  oa.script(behaviour);
  await connection('nearly-spent', 'sk-nearly-spent');
  await connection('plenty-left', 'sk-plenty-left');
  await connection('small-rpm', 'sk-small-rpm', { rpm: 2 });
  await connection('large-rpm', 'sk-large-rpm', { rpm: 100 });
  expect(
    (
      await route('r-latency', 'latency', [
        { connection: 'mock-openai', model: 'slow-t', priority: 0 },
        { connection: 'mock-openai', model: 'fast-t', priority: 1 },
      ])
    ).status,
  ).toBe(200);
  await route('r-headroom', 'headroom', [
    { connection: 'nearly-spent', model: 'h', priority: 0 },
    { connection: 'plenty-left', model: 'h', priority: 1 },
  ]);
  await route('r-rpm', 'headroom', [
    { connection: 'small-rpm', model: 'h', priority: 0 },
    { connection: 'large-rpm', model: 'h', priority: 1 },
  ]);
}, 60_000);

afterAll(() => stopWorld(world));

describe('route strategy', () => {
  test('latency: once both are measured, the faster target serves although it is the backup', async () => {
    expect((await chat('r-latency')).text).toContain('served by slow-t');
    expect((await chat('r-latency')).text).toContain('served by fast-t');
    for (let i = 0; i < 4; i++) expect((await chat('r-latency')).text).toContain('served by fast-t');
  });

  test("headroom: the provider's rate-limit headers move traffic to the connection with requests left", async () => {
    expect((await chat('r-headroom')).key).toBe('Bearer sk-nearly-spent');
    for (let i = 0; i < 4; i++) expect((await chat('r-headroom')).key).toBe('Bearer sk-plenty-left');
  });

  test("headroom without headers: the connection's rpm option less what was sent this minute", async () => {
    for (let i = 0; i < 3; i++) expect((await chat('r-rpm')).key).toBe('Bearer sk-large-rpm');
  });

  test('the strategy is kept and shown; an unknown one is invalid_argument naming strategy', async () => {
    const got = (await tg.must(admin('GetRoute'), { customerId: 'acme', model: 'r-latency' })) as { route: { strategy?: string } };
    expect(got.route.strategy).toBe('latency');
    await tg.must(admin('UpdateRoute'), { customerId: 'acme', model: 'r-latency', strategy: 'ordered' });
    const now = (await tg.must(admin('GetRoute'), { customerId: 'acme', model: 'r-latency' })) as { route: { strategy?: string } };
    expect(now.route.strategy).toBe('ordered');
    expect((await chat('r-latency')).text).toContain('served by slow-t');
    const bad = await route('r-bad', 'fastest', [{ connection: 'mock-openai', model: 'x', priority: 0 }]);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_argument' });
    expect(JSON.stringify(bad.body)).toContain('strategy');
  });
});
