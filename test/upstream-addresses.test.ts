import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { classifyIp, setResolver } from '../src/core/addresses.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { type MockUpstream, startMockUpstream } from './support/mock-upstreams.ts';

/**
 * Issue 7 defect 5 / contract §3.1 "Upstream addresses": a project admin cannot point a connection
 * (baseUrl, a credential's token_uri, an options URL) at loopback, private, link-local, shared or
 * metadata addresses; the platform admin can, and so can anyone under
 * GATEWAY_UPSTREAM_ALLOW_PRIVATE=1. The data plane re-checks the address it connects to, so a
 * name that later resolves inward is refused too.
 */

/** DNS for the test: names we control, resolved as each test says. */
const dns = new Map<string, string[]>([
  ['api.example.com', ['93.184.216.34']],
  ['inward.example.test', ['93.184.216.34', '10.0.0.7']],
  ['rebind.example.test', ['93.184.216.34']],
]);

let tg: TestGateway;
let up: MockUpstream;
let aliceToken = '';
let apiKey = '';

const issue = async (g: TestGateway, userId: string) =>
  (
    (await g.must(admin('CreateUserToken'), {
      customerId: 'acme',
      workspaceId: 'ws1',
      userId,
      organizationUnit: 'eng',
      role: 'developer',
    })) as { accessToken: string }
  ).accessToken;

const setUp = async (g: TestGateway): Promise<{ token: string; apiKey: string }> => {
  await g.must(admin('CreateCustomer'), { customerId: 'acme' });
  await g.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'default', userId: 'alice', role: 'admin' });
  const m = (await g.must(admin('CreateModel'), { model: 'm1', provider: 'openai', mode: 'chat', capabilities: ['chat'] })) as {
    model: { id: string };
  };
  await g.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
  const k = (await g.must(apikeyOp('CreateApiKey'), {
    name: 'k',
    userId: 'u1',
    enterpriseContext: { customerId: 'acme', projectId: 'default' },
  })) as { apiKey: string };
  return { token: await issue(g, 'alice'), apiKey: k.apiKey };
};

/** Points the model `m1` at `connection` (creating the route the first time). */
const route = async (g: TestGateway, connection: string) => {
  const body = { customerId: 'acme', model: 'm1', targets: [{ connection, model: 'gpt-4o-mini' }] };
  const created = await g.call(admin('CreateRoute'), body);
  return created.status === 409 ? g.call(admin('UpdateRoute'), body) : created;
};

const chat = async (g: TestGateway, key: string) => {
  const res = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'm1', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
};

const connections = async (g: TestGateway) =>
  ((await g.must(admin('ListProviderConnections'), { customerId: 'acme' })) as { connections: { name: string; baseUrl: string }[] })
    .connections;

beforeAll(async () => {
  setResolver(async (host) => {
    const a = dns.get(host);
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a;
  });
  up = startMockUpstream('openai');
  tg = await startTestGateway();
  ({ token: aliceToken, apiKey } = await setUp(tg));
}, 60_000);

afterAll(async () => {
  setResolver(undefined);
  await tg?.stop();
  up?.stop();
});

describe('classifyIp: IPv4 embedded in IPv6', () => {
  test('IPv4-translated (::ffff:0:0/96, RFC 2765/6145) is classified by its IPv4, like mapped and compatible', () => {
    expect(classifyIp('::ffff:0:127.0.0.1')).toBe('loopback');
    expect(classifyIp('::ffff:0:7f00:1')).toBe('loopback');
    expect(classifyIp('0:0:0:0:ffff:0:a00:1')).toBe('private');
    expect(classifyIp('[::ffff:0:169.254.169.254]')).toBe('metadata');
    expect(classifyIp('::ffff:0:192.168.1.1')).toBe('private');
    expect(classifyIp('::ffff:0:0.0.0.0')).toBe('unspecified');
    expect(classifyIp('::ffff:0:93.184.216.34')).toBe('public');
    expect(classifyIp('::ffff:127.0.0.1')).toBe('loopback');
  });
});

describe('save time', () => {
  const port = () => new URL(up.url).port;
  const refused: [string, Record<string, unknown>, string][] = [
    ['loopback', { provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1' }, 'baseUrl'],
    ['loopback, short form', { provider: 'openai', baseUrl: 'http://127.1/v1' }, 'baseUrl'],
    ['private 10/8', { provider: 'openai', baseUrl: 'http://10.1.2.3/v1' }, 'baseUrl'],
    ['cloud metadata', { provider: 'openai', baseUrl: 'http://169.254.169.254/latest/meta-data' }, 'baseUrl'],
    ['IPv6 loopback', { provider: 'openai', baseUrl: 'http://[::1]:8080/v1' }, 'baseUrl'],
    ['IPv4-mapped IPv6', { provider: 'openai', baseUrl: 'http://[::ffff:127.0.0.1]/v1' }, 'baseUrl'],
    ['IPv4-translated IPv6 (::ffff:0:0/96)', { provider: 'openai', baseUrl: 'http://[::ffff:0:127.0.0.1]/v1' }, 'baseUrl'],
    ['IPv4-translated IPv6, metadata', { provider: 'openai', baseUrl: 'http://[::ffff:0:a9fe:a9fe]/latest/meta-data' }, 'baseUrl'],
    ['CGNAT', { provider: 'openai', baseUrl: 'http://100.64.0.1/v1' }, 'baseUrl'],
    ['unspecified', { provider: 'openai', baseUrl: 'http://0.0.0.0:80/v1' }, 'baseUrl'],
    ['localhost', { provider: 'openai', baseUrl: 'http://localhost:8080/v1' }, 'baseUrl'],
    ['metadata name', { provider: 'openai', baseUrl: 'http://metadata.google.internal/computeMetadata/v1' }, 'baseUrl'],
    ['a name that resolves inward', { provider: 'openai', baseUrl: 'https://inward.example.test/v1' }, 'baseUrl'],
    [
      'Vertex token_uri',
      {
        provider: 'vertex',
        apiKey: JSON.stringify({
          type: 'service_account',
          client_email: 'a@b',
          private_key: 'k',
          token_uri: 'http://169.254.169.254/token',
        }),
        options: { projectId: 'p' },
      },
      'apiKey.token_uri',
    ],
    [
      'watsonx iamUrl',
      { provider: 'watsonx', apiKey: 'ibm', options: { projectId: 'p', iamUrl: 'http://10.0.0.5/identity/token' } },
      'options.iamUrl',
    ],
  ];
  for (const [name, fields, field] of refused) {
    test(`project admin: ${name} → permission_denied naming ${field}, nothing stored`, async () => {
      const r = await tg.call(admin('CreateProviderConnection'), { customerId: 'acme', name: 'bad', ...fields }, aliceToken);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('permission_denied');
      expect(String(r.body.message)).toContain(`'${field}'`);
      expect((await connections(tg)).map((c) => c.name)).not.toContain('bad');
    });
  }

  test('project admin: a public address is accepted; changing it to an inward one is refused', async () => {
    const ok = await tg.call(
      admin('CreateProviderConnection'),
      { customerId: 'acme', name: 'pub', provider: 'openai', baseUrl: 'https://api.example.com/v1' },
      aliceToken,
    );
    expect(ok.status).toBe(200);
    const r = await tg.call(
      admin('UpdateProviderConnection'),
      { customerId: 'acme', name: 'pub', baseUrl: `http://127.0.0.1:${port()}/v1` },
      aliceToken,
    );
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('permission_denied');
    expect((await connections(tg)).find((c) => c.name === 'pub')?.baseUrl).toBe('https://api.example.com/v1');
  });

  test('platform admin: a loopback address is accepted and served; a project admin may rotate its key but not move it', async () => {
    await tg.must(admin('CreateProviderConnection'), {
      customerId: 'acme',
      name: 'local',
      provider: 'openai',
      baseUrl: `${up.url}/v1`,
      apiKey: 'sk-one',
    });
    expect((await route(tg, 'local')).status).toBe(200);
    expect((await chat(tg, apiKey)).status).toBe(200);
    expect(
      (await tg.call(admin('UpdateProviderConnection'), { customerId: 'acme', name: 'local', apiKey: 'sk-two' }, aliceToken)).status,
    ).toBe(200);
    expect((await chat(tg, apiKey)).status).toBe(200);
    expect(up.requests.at(-1)?.headers.authorization).toBe('Bearer sk-two');
    const moved = await tg.call(
      admin('UpdateProviderConnection'),
      { customerId: 'acme', name: 'local', baseUrl: 'http://127.0.0.1:1/v1' },
      aliceToken,
    );
    expect(moved.status).toBe(403);
  });
});

describe('connect time', () => {
  test('a name that resolves publicly when saved and inward later is refused before any request leaves', async () => {
    const saved = await tg.call(
      admin('CreateProviderConnection'),
      { customerId: 'acme', name: 'rebind', provider: 'openai', baseUrl: `http://rebind.example.test:${new URL(up.url).port}/v1` },
      aliceToken,
    );
    expect(saved.status).toBe(200);
    expect((await route(tg, 'rebind')).status).toBe(200);
    dns.set('rebind.example.test', ['127.0.0.1']);
    setResolver(async (host) => dns.get(host) ?? []); // clears the resolution cache too
    const before = up.requests.length;
    const r = await chat(tg, apiKey);
    expect(r.status).toBe(502);
    expect(r.body.error?.code).toBe('upstream_address_forbidden');
    expect(up.requests.length).toBe(before);
  });
});

describe('GATEWAY_UPSTREAM_ALLOW_PRIVATE=1', () => {
  test('a project admin may save and use a loopback address', async () => {
    const g = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
    try {
      const s = await setUp(g);
      const r = await g.call(
        admin('CreateProviderConnection'),
        { customerId: 'acme', name: 'local', provider: 'openai', baseUrl: `${up.url}/v1` },
        s.token,
      );
      expect(r.status).toBe(200);
      expect((await route(g, 'local')).status).toBe(200);
      expect((await chat(g, s.apiKey)).status).toBe(200);
    } finally {
      await g.stop();
    }
  }, 60_000);
});
