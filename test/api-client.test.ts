import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ApiError, isNotFound, ManagementClient } from '../src/api/client.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import { settled } from './support/settled.ts';

/** The one typed client of src/api against a real management listener. */
let tg: TestGateway;
let client: ManagementClient;

beforeAll(async () => {
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'clientco', name: 'Client Co' });
  client = new ManagementClient({ endpoint: tg.adminUrl, token: ADMIN_TOKEN, attempts: 2, baseDelayMs: 10 });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
});

test('a typed call sends the operation to its service and returns the answer its response schema types', async () => {
  const created = await client.call('CreateGuardrail', {
    customerId: 'clientco',
    projectId: 'default',
    name: 'no-pins',
    stage: 'input',
    kind: 'regex',
    pattern: 'PIN-\\d{4}',
    action: 'block',
  });
  expect(created.guardrail.name).toBe('no-pins');
  expect(created.guardrail.pattern).toBe('PIN-\\d{4}');
  expect(Date.parse(created.guardrail.createdAt)).toBeGreaterThan(0);
  const listed = await client.call('ListGuardrails', { customerId: 'clientco', projectId: 'default' });
  expect(listed.guardrails.map((g) => g.name)).toEqual(['no-pins']);
});

test('refusals are ApiError values with the Connect code: thrown by call, returned by tryCall', async () => {
  const missing = await client.tryCall('GetGuardrail', { customerId: 'clientco', projectId: 'default', name: 'absent' });
  expect(missing.ok).toBe(false);
  if (!missing.ok) {
    expect(missing.error.code).toBe('not_found');
    expect(missing.error.status).toBe(404);
    expect(isNotFound(missing.error)).toBe(true);
  }
  const bad = client.call('CreateGuardrail', {
    customerId: 'clientco',
    projectId: 'default',
    name: 'broken',
    stage: 'input',
    kind: 'regex',
    pattern: '(',
    action: 'block',
  });
  await expect((await settled(bad)).promise).rejects.toBeInstanceOf(ApiError);
  await expect((await settled(bad)).promise).rejects.toMatchObject({ code: 'invalid_argument' });
  const denied = new ManagementClient({ endpoint: tg.adminUrl, token: 'not-a-token', attempts: 1 });
  await expect(
    (await settled(denied.call('ListGuardrails', { customerId: 'clientco', projectId: 'default' }))).promise,
  ).rejects.toMatchObject({ code: 'unauthenticated', status: 401 });
});

test('an unreachable plane is `unavailable` after the configured attempts; a token function is asked on every call', async () => {
  let asked = 0;
  const offline = new ManagementClient({
    endpoint: 'http://127.0.0.1:9',
    token: async () => {
      asked++;
      return ADMIN_TOKEN;
    },
    attempts: 3,
    baseDelayMs: 1,
  });
  await expect(
    (await settled(offline.callJson('ListGuardrails', { customerId: 'clientco', projectId: 'default' }))).promise,
  ).rejects.toMatchObject({ code: 'unavailable', status: 0 });
  expect(asked).toBe(3);
});

test('pages() walks nextPageToken to the end', async () => {
  for (const c of ['pg-a', 'pg-b', 'pg-c']) await tg.must(admin('CreateCustomer'), { customerId: c, name: c });
  const seen: string[] = [];
  for await (const c of client.pages('ListCustomers', { pageSize: 2 }, 'customers')) {
    if (c && typeof c === 'object' && !Array.isArray(c) && typeof c.customerId === 'string') seen.push(c.customerId);
  }
  expect(seen).toEqual(expect.arrayContaining(['clientco', 'pg-a', 'pg-b', 'pg-c']));
  expect(new Set(seen).size).toBe(seen.length);
});

test('an answer cut off mid-body is `unavailable` and retried, never another kind of error', async () => {
  let served = 0;
  const cut = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => {
      served++;
      // Headers and half a JSON body, then the stream fails: the connection ends mid-answer.
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode('{"dataplanes":['));
          setTimeout(() => c.error(new Error('gone')), 5);
        },
      });
      return new Response(body, { headers: { 'content-type': 'application/json' } });
    },
  });
  try {
    const c = new ManagementClient({ endpoint: `http://127.0.0.1:${cut.port}`, token: ADMIN_TOKEN, attempts: 2, baseDelayMs: 1 });
    const e = await c.call('GetConfigStatus', {}).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ code: 'unavailable' });
    expect(served).toBe(2);
  } finally {
    void cut.stop(true);
  }
});
