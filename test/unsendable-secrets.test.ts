import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { setLogSink } from '../src/core/log.ts';
import { generateKek, SecretBox } from '../src/core/secrets.ts';
import { providerConnections } from '../src/store/schema/index.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import { type MockUpstream, startMockUpstream } from './support/mock-upstreams.ts';
import { provision, type Provisioned } from './support/provision.ts';

/**
 * Contract §17, "Secrets that cannot be sent" (issue 38 item 7b): an upstream credential that is
 * not a valid HTTP header value — the README's old placeholder `sk-upstream-…` with its Unicode
 * ellipsis, a CR or LF, another control character — is refused at save with `invalid_argument`
 * naming the field, on every credential the gateway sends as a header; nothing is stored. A key
 * stored before (written here straight into the store) fails at request time with an error naming
 * the connection, logged — not "could not reach the upstream".
 */

const kek = generateKek();
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let p: Provisioned;

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  tg = await startTestGateway({ GATEWAY_KEK: kek });
  p = await provision(tg, { openaiUrl: oa.url, anthropicUrl: an.url });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  oa?.stop();
  an?.stop();
});

const BAD = ['sk-upstream-\u2026', 'sk-a\r\nX-Injected: 1', 'sk-a\nb', 'sk-\u007fa', ' sk-lead', 'sk-tail\t', 'sk-caf\u00e9'];
const RULE = 'must be a valid HTTP header value';

const refusedNaming = async (op: string, body: Record<string, unknown>, field: string): Promise<void> => {
  const r = await tg.call(op, body);
  expect(r.status).toBe(400);
  expect(r.body.code).toBe('invalid_argument');
  expect(String(r.body.message)).toStartWith(`invalid field '${field}': ${RULE}`);
  // The secret is never echoed.
  expect(JSON.stringify(r.body)).not.toContain('sk-a');
};

describe('refused at save, naming the field', () => {
  test('a connection apiKey, on create and update; nothing stored', async () => {
    for (const apiKey of BAD)
      await refusedNaming(admin('CreateProviderConnection'), { customerId: 'acme', name: 'bad-key', provider: 'openai', apiKey }, 'apiKey');
    expect((await tg.call(admin('GetProviderConnection'), { customerId: 'acme', name: 'bad-key' })).status).toBe(404);
    for (const apiKey of BAD)
      await refusedNaming(admin('UpdateProviderConnection'), { customerId: 'acme', name: 'mock-openai', apiKey }, 'apiKey');
    // The plain ASCII placeholder of the README is taken; so is a key with inner spaces.
    expect(
      (
        await tg.call(admin('CreateProviderConnection'), {
          customerId: 'acme',
          name: 'ascii-key',
          provider: 'openai',
          apiKey: 'sk-upstream-xxxx',
        })
      ).status,
    ).toBe(200);
    // A Vertex connection's apiKey is a service-account JSON key (several lines), not a header value.
    const vertex = await tg.call(admin('CreateProviderConnection'), {
      customerId: 'acme',
      name: 'vx',
      provider: 'vertex',
      apiKey: '{\n  "type": "service_account"\n}',
      options: { project: 'p', location: 'us-central1' },
    });
    expect(vertex.body.code).not.toBe('invalid_argument');
  });

  test("a connection's custom headers: names must be header names, values sendable", async () => {
    await refusedNaming(
      admin('CreateProviderConnection'),
      { customerId: 'acme', name: 'bad-h', provider: 'openai', apiKey: 'sk-ok', options: { headers: { 'x-team': 'a\u2026' } } },
      'options.headers.x-team',
    );
    await refusedNaming(
      admin('UpdateProviderConnection'),
      { customerId: 'acme', name: 'mock-openai', options: { headers: { 'x-team': 'a\r\nb' } } },
      'options.headers.x-team',
    );
    const name = await tg.call(admin('CreateProviderConnection'), {
      customerId: 'acme',
      name: 'bad-n',
      provider: 'openai',
      options: { headers: { 'x team': 'a' } },
    });
    expect(name.status).toBe(400);
    expect(String(name.body.message)).toContain("invalid field 'options.headers': 'x team' is not an HTTP header name");
  });

  test('MCP server credentials (catalog and per project), BYOK keys and telemetry tokens', async () => {
    for (const authValue of BAD.slice(0, 3)) {
      await refusedNaming(
        admin('CreateMcpServer'),
        { serverId: 'gh-bad', url: 'https://93.184.216.34/mcp', authType: 'bearer', authValue },
        'authValue',
      );
    }
    expect(
      (
        await tg.call(admin('CreateMcpServer'), {
          serverId: 'gh',
          url: 'https://93.184.216.34/mcp',
          authType: 'header',
          authHeader: 'x-token',
          authValue: 'tok-1',
        })
      ).status,
    ).toBe(200);
    await refusedNaming(admin('UpdateMcpServer'), { serverId: 'gh', authValue: 'tok\u2026' }, 'authValue');
    expect((await tg.call(admin('AddProjectMcpServer'), { customerId: 'acme', projectId: 'default', serverId: 'gh' })).status).toBe(200);
    await refusedNaming(
      admin('SetMcpServerCredential'),
      { customerId: 'acme', projectId: 'default', serverId: 'gh', authValue: 'tok\nX' },
      'authValue',
    );
    await refusedNaming(
      '/byok.v1.ByokService/Register',
      { customerId: 'acme', projectId: 'default', provider: 'PROVIDER_OPENAI', name: 'team', secret: 'sk-upstream-\u2026' },
      'secret',
    );
    await refusedNaming(
      admin('CreateTelemetryConfig'),
      {
        userId: 'ops',
        telemetryType: 'logs',
        sinkUrl: 'https://otel.example.com',
        protocol: 'http/json',
        authType: 'bearer',
        authValue: 'tok\r\n',
      },
      'authValue',
    );
    await refusedNaming(
      admin('CreateTelemetryConfig'),
      {
        userId: 'ops',
        telemetryType: 'logs',
        sinkUrl: 'https://otel.example.com',
        protocol: 'http/json',
        authType: 'api_key',
        authValue: 'k\u2026',
      },
      'authValue',
    );
  });
});

test('a key stored before the rule: the request fails naming the connection, and it is logged', async () => {
  // Written straight into the store (as a row of an older version), then a change of the
  // connection through the API carries it to the data plane.
  const bad = new SecretBox(kek).wrap('sk-upstream-\u2026');
  await tg.gw.store.db.update(providerConnections).set({ apiKeyWrapped: bad }).where(eq(providerConnections.name, 'mock-openai'));
  expect(
    (await tg.call(admin('UpdateProviderConnection'), { customerId: 'acme', name: 'mock-openai', options: { note: 'touched' } })).status,
  ).toBe(200);
  const lines: string[] = [];
  setLogSink((l) => void lines.push(l));
  try {
    const res = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(res.status).toBe(502);
    expect(body.error.code).toBe('upstream_credential_unsendable');
    expect(body.error.message).toContain("connection 'mock-openai'");
    expect(body.error.message).not.toContain('Could not reach');
    const said = lines.filter((l) => l.includes('cannot be sent as an HTTP header value'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('"connection":"mock-openai"');
    expect(said[0]).toContain('"header":"authorization"');
    expect(lines.join('\n')).not.toContain('sk-upstream');
  } finally {
    setLogSink(undefined);
  }
});
