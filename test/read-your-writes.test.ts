import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ADMIN_TOKEN, admin, apikeyOp } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Management writes return at commit; the data plane in the same process serves the change a few
 * tens of milliseconds later. A client that creates a key or a route and uses it at once must not
 * see a 401 or 404 in between: a refusal for an unknown caller or model shortly after a write
 * waits for the plane to catch up and is looked up once more. Raw HTTP here (the test harness's
 * own calls wait for convergence; these must not).
 */

let world: World | undefined;

beforeAll(async () => {
  world = await startWorld();
}, 60_000);
afterAll(() => stopWorld(world));

const raw = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
  const res = await fetch(`${world?.tg.adminUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
};

const chat = (key: string, model: string) =>
  fetch(`${world?.tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });

test('a key created and used at once is served (20 rounds)', async () => {
  world?.oa.script(() => ({ text: 'ok', usage: { input: 1, output: 1 } }));
  for (let i = 0; i < 20; i++) {
    const created = (await raw(apikeyOp('CreateApiKey'), {
      name: `ryw-${i}`,
      userId: 'u1',
      enterpriseContext: { customerId: 'acme', projectId: 'default' },
    })) as { apiKey: string };
    const res = await chat(created.apiKey, 'gpt-mini');
    expect(res.status).toBe(200);
  }
});

test('a model and route created and used at once are served', async () => {
  world?.oa.script(() => ({ text: 'ok', usage: { input: 1, output: 1 } }));
  for (let i = 0; i < 5; i++) {
    const model = `ryw-model-${i}`;
    const created = (await raw(admin('CreateModel'), {
      model,
      provider: 'openai',
      mode: 'chat',
      capabilities: ['chat'],
      contextWindow: 8000,
      maxOutputTokens: 1000,
      inputPricePerMillion: 1,
      outputPricePerMillion: 1,
    })) as { model: { id: string } };
    await raw(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: created.model.id });
    await raw(admin('CreateRoute'), {
      customerId: 'acme',
      projectId: 'default',
      model,
      targets: [{ connection: 'mock-openai', model: 'gpt-4o-mini' }],
    });
    const res = await chat(world?.p.apiKey ?? '', model);
    expect(res.status).toBe(200);
  }
});

test('long after any write, an unknown key is refused without waiting', async () => {
  await world?.tg.settle();
  // Long after any write: a wrong key gets its 401 without waiting for anything.
  await Bun.sleep(10_500);
  const t0 = performance.now();
  expect((await chat('sk-not-a-key-of-this-gateway', 'gpt-mini')).status).toBe(401);
  expect(performance.now() - t0).toBeLessThan(1_000);
}, 30_000);
