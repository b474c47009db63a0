import { afterAll, beforeAll, expect, test } from 'bun:test';
import { admin, type TestGateway } from './support/gateway.ts';
import type { MockUpstream } from './support/mock-upstreams.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Issue 9, item 4: a client's `anthropic-beta` header reaches an Anthropic upstream, merged
 * (deduplicated, comma-joined) with the connection's `beta` option, on the pass-through path
 * (Messages client) and on the translated path (Chat client).
 */

let world: World | undefined;
let tg: TestGateway;
let an: MockUpstream;

beforeAll(async () => {
  world = await startWorld();
  ({ tg, an } = world);
  await tg.must(admin('UpdateProviderConnection'), {
    customerId: 'acme',
    projectId: 'default',
    name: 'mock-anthropic',
    options: { beta: ['conn-beta-1', 'shared-beta'] },
  });
}, 60_000);

afterAll(() => stopWorld(world));

const betaOf = (): string[] =>
  (an.requests.at(-1)?.headers['anthropic-beta'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

const post = (path: string, body: object, extra: Record<string, string>) =>
  fetch(`${tg.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world?.p.apiKey ?? ''}`, 'content-type': 'application/json', ...extra },
    body: JSON.stringify(body),
  });

for (const stream of [false, true]) {
  test(`anthropic-beta, messages pass-through (stream=${stream}): client and connection betas merged`, async () => {
    an.script(() => ({ text: 'ok', usage: { input: 3, output: 1 } }));
    const res = await post(
      '/v1/messages',
      { model: 'claude-mini', max_tokens: 16, stream, messages: [{ role: 'user', content: 'hi' }] },
      {
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'client-beta-a, shared-beta',
      },
    );
    expect(res.status).toBe(200);
    await res.text();
    expect(betaOf().sort()).toEqual(['client-beta-a', 'conn-beta-1', 'shared-beta']);
  });

  test(`anthropic-beta, chat translated to Anthropic (stream=${stream}): client and connection betas merged`, async () => {
    an.script(() => ({ text: 'ok', usage: { input: 3, output: 1 } }));
    const res = await post(
      '/v1/chat/completions',
      { model: 'claude-mini', stream, messages: [{ role: 'user', content: 'hi' }] },
      { 'anthropic-beta': 'client-beta-b,shared-beta' },
    );
    expect(res.status).toBe(200);
    await res.text();
    expect(betaOf().sort()).toEqual(['client-beta-b', 'conn-beta-1', 'shared-beta']);
  });
}

test('anthropic-beta: without a client header the connection betas alone are sent', async () => {
  an.script(() => ({ text: 'ok', usage: { input: 3, output: 1 } }));
  const res = await post(
    '/v1/messages',
    { model: 'claude-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    { 'anthropic-version': '2023-06-01' },
  );
  expect(res.status).toBe(200);
  expect(betaOf()).toEqual(['conn-beta-1', 'shared-beta']);
});
