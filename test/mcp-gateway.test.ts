import { NO_OBSERVERS } from '../src/pipeline/observe.ts';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { connectMcp, textOf } from './support/mcp-gateway.ts';
import { startSseServer, startStreamableServer, type TestMcpServer } from './support/mcp-servers.ts';
import { settled } from './support/settled.ts';

/**
 * The MCP gateway (contract §7) with the SDK's own client, against a profile fronting two SDK-built
 * servers: `alpha` over Streamable HTTP (bearer credential) and `beta` over HTTP+SSE (a header
 * credential). Everything is configured through the management API (CreateMcpServer,
 * AddProjectMcpServer, CreateMcpProfile, …) and reaches the embedded data plane by propagation.
 */

const ALPHA_SECRET = 'alpha-upstream-secret';
const BETA_SECRET = 'beta-upstream-secret';

let tg: TestGateway;
let alpha: TestMcpServer;
let beta: TestMcpServer;
let apiKey: string;
let keyId: string;
let otherKey: string;
const acme = { customerId: 'acme', projectId: 'default' };
const TOOLS_SERVERS = [{ serverId: 'alpha', tools: ['echo', 'add*', 'progress', 'ask'] }, { serverId: 'beta' }, { serverId: 'down' }];

const url = (profile: string): string => `${tg.url}/mcp/${profile}`;

beforeAll(async () => {
  alpha = startStreamableServer('a', { bearer: ALPHA_SECRET });
  beta = await startSseServer('b', { token: BETA_SECRET });
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  await tg.must(admin('CreateCustomer'), { customerId: 'other', name: 'Other' });
  const k = (await tg.must(apikeyOp('CreateApiKey'), {
    name: 'mcp',
    userId: 'u1',
    enterpriseContext: { customerId: 'acme', projectId: 'default' },
  })) as { apiKey: string; id: string };
  apiKey = k.apiKey;
  keyId = k.id;
  otherKey = (
    (await tg.must(apikeyOp('CreateApiKey'), {
      name: 'mcp',
      userId: 'u2',
      enterpriseContext: { customerId: 'other', projectId: 'default' },
    })) as { apiKey: string }
  ).apiKey;
  await tg.must(admin('CreateMcpServer'), { serverId: 'alpha', url: alpha.url, authType: 'bearer', authValue: ALPHA_SECRET });
  await tg.must(admin('CreateMcpServer'), {
    serverId: 'beta',
    url: beta.url,
    transport: 'sse',
    authType: 'header',
    authHeader: 'x-api-token',
    authValue: BETA_SECRET,
  });
  // Nothing listens there: a server that is down.
  await tg.must(admin('CreateMcpServer'), { serverId: 'down', url: 'http://127.0.0.1:9/mcp' });
  for (const serverId of ['alpha', 'beta', 'down']) await tg.must(admin('AddProjectMcpServer'), { ...acme, serverId });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'tools', servers: TOOLS_SERVERS });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'flat', servers: [{ serverId: 'alpha', prefix: '' }] });
});

afterAll(async () => {
  await tg?.stop();
  await alpha?.stop();
  await beta?.stop();
});

describe('listing and routing back', () => {
  test('tools of both servers are listed with their prefixes; filtered and down servers cost only their own entries', async () => {
    const { client } = await connectMcp(url('tools'), apiKey);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual([
      'alpha__add',
      'alpha__ask',
      'alpha__echo',
      'alpha__progress',
      'beta__add',
      'beta__admin_reset',
      'beta__ask',
      'beta__echo',
      'beta__progress',
    ]);
    await client.close();
  });

  test('calls are routed to the server that lists the tool; a filtered tool cannot be called', async () => {
    const { client } = await connectMcp(url('tools'), apiKey);
    expect(textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: 'hi' } }))).toBe('a:hi');
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'yo' } }))).toBe('b:yo');
    expect(textOf(await client.callTool({ name: 'beta__admin_reset', arguments: {} }))).toBe('b:reset done');
    const hidden = await client.callTool({ name: 'alpha__admin_reset', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(hidden).toBeInstanceOf(McpError);
    expect(alpha.seen.length).toBeGreaterThan(0);
    await client.close();
    // A finished call is not cancelled upstream when the client's HTTP request ends (the SDK keeps its abort listener).
    await Bun.sleep(200);
    expect(alpha.seen.filter((h) => h.rpc === 'notifications/cancelled')).toEqual([]);
  });

  test('no prefix: names as the server lists them', async () => {
    const { client } = await connectMcp(url('flat'), apiKey);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['add', 'admin_reset', 'ask', 'echo', 'progress']);
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }))).toBe('5');
    await client.close();
  });

  test('prompts and resources are listed and routed back', async () => {
    const { client } = await connectMcp(url('tools'), apiKey);
    expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['alpha__greet', 'beta__greet']);
    const got = await client.getPrompt({ name: 'beta__greet', arguments: { who: 'Ada' } });
    expect(got.messages[0]?.content).toEqual({ type: 'text', text: 'b: hello Ada' });
    const uris = (await client.listResources()).resources.map((r) => r.uri).sort();
    expect(uris).toEqual(['mem://a/readme', 'mem://b/readme']);
    expect((await client.listResourceTemplates()).resourceTemplates.map((t) => `${t.name} ${t.uriTemplate}`).sort()).toEqual([
      'alpha__item mem://a/items/{id}',
      'beta__item mem://b/items/{id}',
    ]);
    expect(await client.readResource({ uri: 'mem://b/readme' })).toMatchObject({ contents: [{ uri: 'mem://b/readme', text: 'b readme' }] });
    expect(await client.readResource({ uri: 'mem://a/items/7' })).toMatchObject({ contents: [{ text: 'a item 7' }] });
    await client.close();
  });

  test('progress and server-to-client requests (sampling) pass through', async () => {
    const { client } = await connectMcp(url('tools'), apiKey, { sampling: true });
    const progress: number[] = [];
    const r = await client.callTool({ name: 'alpha__progress', arguments: { steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(textOf(r)).toBe('a:progressed 3');
    expect(progress).toEqual([1, 2, 3]);
    expect(textOf(await client.callTool({ name: 'alpha__ask', arguments: {} }))).toBe('a:sampled sampled-by-client');
    expect(textOf(await client.callTool({ name: 'beta__ask', arguments: {} }))).toBe('b:sampled sampled-by-client');
    await client.close();
  });
});

describe('credentials and callers', () => {
  test("the catalog's credential goes upstream, the caller's never does", async () => {
    const { client } = await connectMcp(url('tools'), apiKey);
    await client.callTool({ name: 'alpha__echo', arguments: { text: 'x' } });
    await client.callTool({ name: 'beta__echo', arguments: { text: 'x' } });
    await client.close();
    expect(alpha.seen.length).toBeGreaterThan(0);
    expect(beta.seen.length).toBeGreaterThan(0);
    expect(alpha.seen.every((h) => h.authorization === `Bearer ${ALPHA_SECRET}`)).toBe(true);
    expect(beta.seen.every((h) => h.token === BETA_SECRET && h.authorization === null)).toBe(true);
    const all = JSON.stringify([...alpha.seen, ...beta.seen]);
    expect(all).not.toContain(apiKey);
  });

  test('no credential or a bad one: 401 with WWW-Authenticate: Bearer resource_metadata (RFC 9728); another project: 404', async () => {
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const none = await fetch(url('tools'), { method: 'POST', headers, body: init });
    expect(none.status).toBe(401);
    const metadataUrl = `${tg.url}/.well-known/oauth-protected-resource/mcp/tools`;
    expect(none.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    // The metadata, public: the resource is the profile's absolute URL, bearer tokens in the header.
    const meta = await fetch(metadataUrl);
    expect(meta.status).toBe(200);
    expect(await meta.json()).toEqual({ resource: url('tools'), bearer_methods_supported: ['header'] });
    const bad = await fetch(url('tools'), { method: 'POST', headers: { ...headers, authorization: 'Bearer sk-not-a-key' }, body: init });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    const other = await fetch(url('tools'), { method: 'POST', headers: { ...headers, authorization: `Bearer ${otherKey}` }, body: init });
    expect(other.status).toBe(404);
    const unknown = await fetch(url('nope'), { method: 'POST', headers: { ...headers, authorization: `Bearer ${apiKey}` }, body: init });
    expect(unknown.status).toBe(404);
    // The SDK client sees the refusal too.
    await expect((await settled(connectMcp(url('tools'), undefined))).promise).rejects.toThrow();
  });
});

describe('sessions without stickiness', () => {
  test('a session id is served by any replica, and an expired upstream session is re-established', async () => {
    const { client, transport } = await connectMcp(url('flat'), apiKey);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: '1' } }))).toBe('a:1');
    const sessionId = transport.sessionId;
    expect(sessionId).toBeString();
    // The upstream forgets its sessions (a restart, an expiry): the gateway opens a new one.
    alpha.forgetSessions();
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: '2' } }))).toBe('a:2');
    // Another replica: a second listener on the same configuration, with nothing of the session in memory.
    const { startDataPlaneServer } = await import('../src/data-plane/server.ts');
    const replica = startDataPlaneServer({
      host: '127.0.0.1',
      port: 0,
      deps: { snapshots: tg.gw.snapshots, observers: NO_OBSERVERS, recordBodies: false, keepAliveMs: 15_000 },
      limits: { maxBodyBytes: 1 << 20, idleTimeoutSeconds: 30 },
      ready: () => true,
      readiness: () => ({}),
    });
    try {
      const res = await fetch(`http://127.0.0.1:${replica.port}/mcp/flat`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${apiKey}`,
          'mcp-session-id': sessionId ?? '',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'elsewhere' } } }),
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('a:elsewhere');
      // A session id is bound to its caller: another credential cannot use it.
      const stolen = await fetch(`http://127.0.0.1:${replica.port}/mcp/flat`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${otherKey}`,
          'mcp-session-id': sessionId ?? '',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: {} }),
      });
      expect(stolen.status).toBe(404);
    } finally {
      replica.stop(true);
    }
    await client.close();
  });
});

describe('governance', () => {
  test('each tools/call, prompts/get and resources/read is a request record found by X-Request-ID', async () => {
    const { client, requestIds } = await connectMcp(url('tools'), apiKey);
    await client.callTool({ name: 'alpha__echo', arguments: { text: 'recorded' } });
    await client.getPrompt({ name: 'alpha__greet', arguments: { who: 'R' } });
    await client.readResource({ uri: 'mem://b/readme' });
    await client.close();
    const idOf = (method: string): string => requestIds.find((r) => r.method === method)?.id ?? '';
    const search = async (requestId: string) =>
      ((await tg.must(admin('SearchRequestRecords'), { requestId })) as { records: Record<string, unknown>[] }).records[0];
    expect(await search(idOf('tools/call'))).toMatchObject({
      endpoint: '/mcp/tools',
      model: 'tools/call',
      provider: 'mcp',
      connection: 'alpha',
      upstreamModel: 'echo',
      httpStatus: 200,
      apiKeyId: keyId,
      customerId: 'acme',
    });
    expect(await search(idOf('prompts/get'))).toMatchObject({
      model: 'prompts/get',
      connection: 'alpha',
      upstreamModel: 'greet',
      httpStatus: 200,
    });
    expect(await search(idOf('resources/read'))).toMatchObject({
      model: 'resources/read',
      connection: 'beta',
      upstreamModel: 'mem://b/readme',
      httpStatus: 200,
    });
    const rec = await search(idOf('tools/call'));
    expect(JSON.stringify(rec?.requestBody)).toContain('recorded');
    expect(typeof rec?.latencyMs).toBe('number');
  });

  test('guardrails: input on tool arguments, output on tool results', async () => {
    await tg.must(admin('CreateGuardrail'), {
      customerId: 'acme',
      projectId: 'default',
      name: 'no-secret-in',
      stage: 'input',
      kind: 'regex',
      pattern: 'forbidden-word',
      action: 'block',
    });
    await tg.must(admin('CreateGuardrail'), {
      customerId: 'acme',
      projectId: 'default',
      name: 'redact-out',
      stage: 'output',
      kind: 'regex',
      pattern: 'a:leak\\S*',
      action: 'redact',
    });
    const { client } = await connectMcp(url('tools'), apiKey);
    const blocked = await client.callTool({ name: 'alpha__echo', arguments: { text: 'a forbidden-word here' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(blocked).toBeInstanceOf(McpError);
    expect(String(blocked)).toContain('no-secret-in');
    const out = textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: 'leak123' } }));
    expect(out).not.toContain('leak123');
    expect(out).toContain('REDACTED');
    await client.close();
  });

  test('a tool call counts against the rate limit', async () => {
    await tg.must(admin('UpsertProjectSetting'), {
      customerId: 'acme',
      projectId: 'default',
      settingName: 'rate-limit',
      settingValue: '{"requestsPerMinute":2}',
    });
    const { client } = await connectMcp(url('flat'), apiKey);
    // Listing is not a governed call; calls are.
    await client.listTools();
    const results: unknown[] = [];
    for (let i = 0; i < 4; i++)
      results.push(await client.callTool({ name: 'echo', arguments: { text: String(i) } }).catch((e: unknown) => e));
    const refused = results.filter((r) => r instanceof McpError);
    expect(refused.length).toBeGreaterThanOrEqual(2);
    expect(refused[0] instanceof McpError ? refused[0].code : 0).toBe(-32029);
    expect(String(refused[0])).toContain('Rate limit');
    await client.close();
    await tg.must(admin('DeleteProjectSetting'), { customerId: 'acme', projectId: 'default', settingName: 'rate-limit' });
  });
});

describe('removal and revocation take effect within the propagation time', () => {
  const rejection = (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );

  test('a server removed from the profile: no longer listed nor callable, on a session opened before', async () => {
    const { client } = await connectMcp(url('tools'), apiKey);
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'before' } }))).toBe('b:before');
    await tg.must(admin('UpdateMcpProfile'), { ...acme, profileId: 'tools', servers: TOOLS_SERVERS.filter((s) => s.serverId !== 'beta') });
    expect((await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('beta__'))).toEqual([]);
    expect(await rejection(client.callTool({ name: 'beta__echo', arguments: { text: 'after' } }))).toBeInstanceOf(McpError);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['alpha__greet']);
    await tg.must(admin('UpdateMcpProfile'), { ...acme, profileId: 'tools', servers: TOOLS_SERVERS });
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'back' } }))).toBe('b:back');
    await client.close();
  });

  test('a server removed from the project drops out of its profiles; assigned again, it is served again', async () => {
    const { client } = await connectMcp(url('tools'), apiKey);
    await tg.must(admin('RemoveProjectMcpServer'), { ...acme, serverId: 'beta' });
    expect((await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('beta__'))).toEqual([]);
    expect(await rejection(client.callTool({ name: 'beta__echo', arguments: { text: 'gone' } }))).toBeInstanceOf(McpError);
    expect(await rejection(client.readResource({ uri: 'mem://b/readme' }))).toBeInstanceOf(McpError);
    // The profile keeps its entry: assigned again, the server is back.
    await tg.must(admin('AddProjectMcpServer'), { ...acme, serverId: 'beta' });
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'again' } }))).toBe('b:again');
    await client.close();
  });

  test('a deleted profile answers 404; a revoked key is refused (401), its open session too', async () => {
    await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'temp', servers: [{ serverId: 'alpha' }] });
    const k = (await tg.must(apikeyOp('CreateApiKey'), { name: 'short-lived', enterpriseContext: acme })) as { apiKey: string; id: string };
    const { client, transport } = await connectMcp(url('temp'), k.apiKey);
    expect(textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: 'ok' } }))).toBe('a:ok');
    const raw = (key: string, profile: string) =>
      fetch(url(profile), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${key}`,
          'mcp-session-id': transport.sessionId ?? '',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
      });
    await tg.must(apikeyOp('RevokeApiKey'), { id: k.id, ...acme });
    const revoked = await raw(k.apiKey, 'temp');
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get('www-authenticate')).toStartWith('Bearer resource_metadata="');
    expect(await rejection(client.callTool({ name: 'alpha__echo', arguments: { text: 'no' } }))).toBeInstanceOf(Error);
    await tg.must(admin('DeleteMcpProfile'), { ...acme, profileId: 'temp' });
    expect((await raw(apiKey, 'temp')).status).toBe(404);
    await client.close().catch(() => undefined);
  });
});
