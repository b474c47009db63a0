import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { connectMcp, textOf } from './support/mcp-gateway.ts';
import { type ModernMcpServer, startModernServer } from './support/mcp-servers-v2.ts';

/**
 * Contract §7.1, which generation the gateway speaks upstream. A server that speaks both (the v2
 * SDK serving 2025 requests statelessly beside 2026-07-28, as the conformance suite's reference
 * server does) is spoken to in the caller's generation: a 2025 client's calls go up after an
 * `initialize`, in 2025-11-25 (so what only 2025 has — server→client requests, subscriptions,
 * logging levels — stays available), a 2026 client's in 2026-07-28. A server that speaks only
 * 2026-07-28 refuses the 2025 `initialize` once; it is then spoken to in 2026-07-28 straight away.
 * Clients are the v1 SDK (2025-11-25) and the v2 SDK pinned to 2026-07-28; upstreams the v2 SDK.
 */

let tg: TestGateway;
let dual: ModernMcpServer;
let strict: ModernMcpServer;
let apiKey: string;
const acme = { customerId: 'acme', projectId: 'default' };

beforeAll(async () => {
  dual = startModernServer('d', undefined, 'stateless');
  strict = startModernServer('s');
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  apiKey = String((await tg.must(apikeyOp('CreateApiKey'), { name: 'k', enterpriseContext: acme })).apiKey);
  await tg.must(admin('CreateMcpServer'), { serverId: 'dual', url: dual.url });
  await tg.must(admin('CreateMcpServer'), { serverId: 'strict', url: strict.url });
  for (const serverId of ['dual', 'strict']) await tg.must(admin('AddProjectMcpServer'), { ...acme, serverId });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'dual', servers: [{ serverId: 'dual' }] });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'strict', servers: [{ serverId: 'strict' }] });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  await dual?.stop();
  await strict?.stop();
});

/** A 2025 session (v1 SDK) calling the server's `echo` once through profile `profile` (its one server, named alike). */
const call2025 = async (profile: string, text: string): Promise<string> => {
  const { client } = await connectMcp(`${tg.url}/mcp/${profile}`, apiKey);
  try {
    return textOf(await client.callTool({ name: `${profile}__echo`, arguments: { text } }));
  } finally {
    await client.close();
  }
};

describe('the upstream generation follows the caller', () => {
  test("a 2025 client's call reaches a server of both generations in 2025-11-25, after an initialize", async () => {
    dual.seen.length = 0;
    expect(await call2025('dual', 'old')).toBe('d:old');
    const methods = dual.seen.map((s) => s.rpc);
    expect(methods).toContain('initialize');
    expect(methods).not.toContain('server/discover');
    const call = dual.seen.find((s) => s.rpc === 'tools/call');
    expect(call?.version).toBe('2025-11-25');
  });

  test("a 2026-07-28 client's call reaches the same server in 2026-07-28, without an initialize", async () => {
    dual.seen.length = 0;
    const c = new ClientV2({ name: 'v2-client', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await c.connect(new TransportV2(new URL(`${tg.url}/mcp/dual`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
    expect(textOf(await c.callTool({ name: 'dual__echo', arguments: { text: 'new' } }))).toBe('d:new');
    await c.close();
    expect(dual.seen.map((s) => s.rpc)).not.toContain('initialize');
    expect(dual.seen.find((s) => s.rpc === 'tools/call')?.version).toBe('2026-07-28');
  });

  test('a 2026-07-28-only server refuses one 2025 initialize; later 2025 sessions reach it in 2026-07-28 straight away', async () => {
    strict.seen.length = 0;
    expect(await call2025('strict', 'a')).toBe('s:a');
    expect(await call2025('strict', 'b')).toBe('s:b');
    expect(strict.seen.filter((s) => s.rpc === 'initialize')).toHaveLength(1);
    const calls = strict.seen.filter((s) => s.rpc === 'tools/call');
    expect(calls).toHaveLength(2);
    expect(calls.every((s) => s.version === '2026-07-28')).toBe(true);
  });
});
