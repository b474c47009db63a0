import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startDataPlaneServer } from '../src/data-plane/server.ts';
import { type Counters, MemoryCounters } from '../src/governance/counters.ts';
import { RedisCounters } from '../src/governance/redis-counters.ts';
import { McpGateway } from '../src/mcp/http.ts';
import { NO_OBSERVERS } from '../src/pipeline/observe.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { textOf } from './support/mcp-gateway.ts';
import { startStreamableServer, type TestMcpServer } from './support/mcp-servers.ts';
import { type ModernMcpServer, startModernServer } from './support/mcp-servers-v2.ts';

/**
 * Contract §7.1, generations: each client generation against each upstream generation, through two
 * gateway replicas that share nothing but the configuration and the counters (Redis with
 * TEST_REDIS_URL), every client's requests alternating between them (no affinity). Upstreams: a
 * 2025 server (v1 SDK, stateful sessions) and a strict 2026-07-28 server (v2 SDK, refuses 2025
 * requests). Clients: the v1 SDK client (2025-11-25), the v2 SDK client in its 2025 mode, and the
 * v2 SDK client pinned to 2026-07-28.
 */

const OLD_SECRET = 'old-upstream-secret';
const NEW_SECRET = 'new-upstream-secret';
const IDLE_MS = 1500;

let tg: TestGateway;
let old: TestMcpServer;
let fresh: ModernMcpServer;
let counters: Counters;
const replicas: { url: string; stop: () => void; served: number }[] = [];
let apiKey: string;
const acme = { customerId: 'acme', projectId: 'default' };

/** A fetch that sends each request to the next replica (the path kept), counting what each served. */
const roundRobin = (): typeof fetch => {
  let next = 0;
  const f = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const r = replicas[next++ % replicas.length];
    if (!r) throw new Error('no replica');
    r.served++;
    const u = new URL(input instanceof Request ? input.url : input.toString());
    return fetch(`${r.url}${u.pathname}${u.search}`, init);
  };
  return Object.assign(f, { preconnect: fetch.preconnect });
};

const profileUrl = (profile: string): string => `${replicas[0]?.url}/mcp/${profile}`;
const headers = { authorization: '' };

beforeAll(async () => {
  old = startStreamableServer('a', { bearer: OLD_SECRET });
  fresh = startModernServer('n', NEW_SECRET);
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  apiKey = ((await tg.must(apikeyOp('CreateApiKey'), { name: 'mcp', userId: 'u1', enterpriseContext: acme })) as { apiKey: string }).apiKey;
  headers.authorization = `Bearer ${apiKey}`;
  await tg.must(admin('CreateMcpServer'), { serverId: 'old', url: old.url, authType: 'bearer', authValue: OLD_SECRET });
  await tg.must(admin('CreateMcpServer'), { serverId: 'new', url: fresh.url, authType: 'bearer', authValue: NEW_SECRET });
  for (const serverId of ['old', 'new']) await tg.must(admin('AddProjectMcpServer'), { ...acme, serverId });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'both', servers: [{ serverId: 'old' }, { serverId: 'new' }] });
  const redis = process.env.TEST_REDIS_URL;
  counters = redis ? new RedisCounters(redis) : new MemoryCounters();
  for (let i = 0; i < 2; i++) {
    const deps = { snapshots: tg.gw.snapshots, observers: NO_OBSERVERS, recordBodies: false, keepAliveMs: 15_000, counters };
    const mcp = new McpGateway({ deps, version: '9.9.9', sessionIdleMs: IDLE_MS });
    const server = startDataPlaneServer({
      host: '127.0.0.1',
      port: 0,
      deps,
      mcp,
      limits: { maxBodyBytes: 1 << 20, idleTimeoutSeconds: 30 },
      ready: () => true,
      readiness: () => ({}),
    });
    replicas.push({
      url: `http://127.0.0.1:${server.port}`,
      served: 0,
      stop: () => {
        mcp.close();
        void server.stop(true);
      },
    });
  }
});

afterAll(async () => {
  for (const r of replicas) r.stop();
  await counters?.close();
  await tg?.stop();
  await old?.stop();
  await fresh?.stop();
});

interface Generic {
  list(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>): Promise<string>;
  read(uri: string): Promise<string>;
  close(): Promise<void>;
}

const v1Client = async (): Promise<Generic & { transport: TransportV1 }> => {
  const transport = new TransportV1(new URL(profileUrl('both')), { requestInit: { headers }, fetch: roundRobin() });
  const c = new ClientV1({ name: 'v1-client', version: '1.0.0' });
  await c.connect(transport);
  expect(c.getServerVersion()?.name).toBe('ai-gateway');
  return {
    transport,
    list: async () => (await c.listTools()).tools.map((t) => t.name).sort(),
    call: async (name, args) => textOf(await c.callTool({ name, arguments: args })),
    read: async (uri) => JSON.stringify((await c.readResource({ uri })).contents),
    close: () => c.close(),
  };
};

const v2Client = async (generation: '2025' | '2026'): Promise<Generic & { c: ClientV2 }> => {
  const c = new ClientV2(
    { name: 'v2-client', version: '2.0.0' },
    generation === '2026' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : { versionNegotiation: { mode: 'legacy' } },
  );
  await c.connect(new TransportV2(new URL(profileUrl('both')), { requestInit: { headers }, fetch: roundRobin() }));
  return {
    c,
    list: async () => (await c.listTools()).tools.map((t) => t.name).sort(),
    call: async (name, args) => textOf(await c.callTool({ name, arguments: args })),
    read: async (uri) => JSON.stringify((await c.readResource({ uri })).contents),
    close: () => c.close(),
  };
};

const exercise = async (client: Generic): Promise<void> => {
  expect(await client.list()).toEqual(['new__add', 'new__echo', 'old__add', 'old__admin_reset', 'old__ask', 'old__echo', 'old__progress']);
  for (let i = 0; i < 3; i++) {
    expect(await client.call('old__echo', { text: `x${i}` })).toBe(`a:x${i}`);
    expect(await client.call('new__echo', { text: `y${i}` })).toBe(`n:y${i}`);
  }
  expect(await client.call('new__add', { a: 2, b: 40 })).toBe('42');
  expect(await client.read('mem://n/readme')).toContain('n readme');
  expect(await client.read('mem://a/readme')).toContain('a readme');
};

describe('each client generation against each upstream generation, across two replicas', () => {
  test('a 2025-11-25 client (v1 SDK) reaches the 2025 server and the strict 2026-07-28 server', async () => {
    const before = replicas.map((r) => r.served);
    const c = await v1Client();
    await exercise(c);
    expect(c.transport.sessionId).toBeString();
    await c.close();
    // Both replicas served this client.
    expect(replicas.map((r, i) => r.served - (before[i] ?? 0)).every((n) => n > 0)).toBe(true);
  });

  test('a 2025-11-25 client (v2 SDK, 2025 mode) reaches both upstream generations', async () => {
    const c = await v2Client('2025');
    expect(c.c.getProtocolEra()).toBe('legacy');
    expect(c.c.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    await exercise(c);
    await c.close();
  });

  test('a 2026-07-28 client (v2 SDK, pinned) reaches both upstream generations, statelessly', async () => {
    const c = await v2Client('2026');
    expect(c.c.getProtocolEra()).toBe('modern');
    expect(c.c.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(c.c.getServerVersion()?.name).toBe('ai-gateway');
    await exercise(c);
    await c.close();
  });

  test('the strict upstream was spoken to in 2026-07-28 only (after one refused 2025 initialize per replica at most); the 2025 one in 2025 with its credential', () => {
    expect(fresh.seen.length).toBeGreaterThan(0);
    expect(fresh.seen.every((s) => s.authorization === `Bearer ${NEW_SECRET}`)).toBe(true);
    const [legacy, modern] = [fresh.seen.filter((s) => s.rpc === 'initialize'), fresh.seen.filter((s) => s.rpc !== 'initialize')];
    expect(legacy.length).toBeLessThanOrEqual(replicas.length);
    expect(modern.every((s) => s.version === '2026-07-28')).toBe(true);
    expect(old.seen.some((s) => s.rpc === 'initialize')).toBe(true);
    expect(old.seen.every((s) => s.authorization === `Bearer ${OLD_SECRET}`)).toBe(true);
  });

  test('2026-07-28: no session id is handed out; GET and DELETE answer 405', async () => {
    const url = profileUrl('both');
    const h = { ...headers, 'mcp-protocol-version': '2026-07-28', accept: 'application/json, text/event-stream' };
    const post = await fetch(url, {
      method: 'POST',
      headers: { ...h, 'content-type': 'application/json', 'mcp-method': 'server/discover' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    const text = await post.text();
    expect(`${post.status} ${text}`).toStartWith('200');
    expect(text).toContain('2026-07-28');
    expect(post.headers.get('mcp-session-id')).toBeNull();
    for (const method of ['GET', 'DELETE']) expect((await fetch(url, { method, headers: h })).status).toBe(405);
  });
});

const rawCall = (replica: number, sessionId: string, text: string): Promise<Response> =>
  fetch(`${replicas[replica]?.url}/mcp/both`, {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'old__echo', arguments: { text } } }),
  });

describe('2025 sessions', () => {
  test('a session ended with DELETE on one replica is refused (404) on the other', async () => {
    const c = await v1Client();
    expect(await c.call('old__echo', { text: 'before' })).toBe('a:before');
    const id = c.transport.sessionId ?? '';
    const ok = await rawCall(1, id, 'still');
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('a:still');
    const del = await fetch(`${replicas[0]?.url}/mcp/both`, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': id } });
    expect(del.status).toBe(200);
    for (const replica of [1, 0]) {
      const after = await rawCall(replica, id, 'after');
      expect(after.status).toBe(404);
      expect(await after.text()).toContain('Session not found');
    }
  });

  test(`a session left idle past GATEWAY_MCP_SESSION_IDLE (${IDLE_MS} ms here) is refused; one in use is not`, async () => {
    const idle = await v1Client();
    const busy = await v1Client();
    const idleId = idle.transport.sessionId ?? '';
    const busyId = busy.transport.sessionId ?? '';
    for (let i = 0; i < 4; i++) {
      await Bun.sleep(IDLE_MS / 3);
      const r = await rawCall(i % 2, busyId, `tick${i}`);
      expect(r.status).toBe(200);
      await r.text();
    }
    const expired = await rawCall(1, idleId, 'late');
    expect(expired.status).toBe(404);
    expect(await expired.text()).toContain('idle');
    const again = await rawCall(0, busyId, 'again');
    expect(again.status).toBe(200);
    await again.text();
  });
});
