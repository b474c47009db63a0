import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { connectMcp } from './support/mcp-gateway.ts';
import { type HostileMcpServer, startHostileServer } from './support/mcp-hostile.ts';
import { startStreamableServer, type TestMcpServer } from './support/mcp-servers.ts';

/**
 * Contract §7.1 bounds and names against a hostile MCP server: a name the server never listed is
 * not callable whatever a glob says; a list over GATEWAY_MCP_MAX_LIST_ITEMS leaves that server out;
 * a message over GATEWAY_MCP_MAX_MESSAGE_BYTES fails its call naming the bound, and the gateway's memory
 * stays flat across 50 such calls (48 MB each).
 */

let tg: TestGateway;
let hostile: HostileMcpServer;
let many: HostileMcpServer;
let twins: TestMcpServer[] = [];
let apiKey: string;
const acme = { customerId: 'acme', projectId: 'default' };
const url = (): string => `${tg.url}/mcp/p`;

beforeAll(async () => {
  hostile = startHostileServer({ bigBytes: 48 * 1024 * 1024 });
  many = startHostileServer({ many: 101 });
  tg = await startTestGateway({ GATEWAY_MCP_MAX_MESSAGE_BYTES: '1MiB', GATEWAY_MCP_MAX_LIST_ITEMS: '100' });
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  apiKey = ((await tg.must(apikeyOp('CreateApiKey'), { name: 'k', userId: 'u1', enterpriseContext: acme })) as { apiKey: string }).apiKey;
  await tg.must(admin('CreateMcpServer'), { serverId: 'h', url: hostile.url });
  await tg.must(admin('CreateMcpServer'), { serverId: 'many', url: many.url });
  for (const serverId of ['h', 'many']) await tg.must(admin('AddProjectMcpServer'), { ...acme, serverId });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'p', servers: [{ serverId: 'h', tools: ['*'] }, { serverId: 'many' }] });
  // Two servers listing the same resource URIs.
  twins = [startStreamableServer('d', {}), startStreamableServer('d', {})];
  for (const [i, t] of twins.entries()) {
    await tg.must(admin('CreateMcpServer'), { serverId: `d${i}`, url: t.url });
    await tg.must(admin('AddProjectMcpServer'), { ...acme, serverId: `d${i}` });
  }
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'dup', servers: [{ serverId: 'd0' }, { serverId: 'd1' }] });
});

afterAll(async () => {
  await tg?.stop();
  await hostile?.stop();
  await many?.stop();
  for (const t of twins) await t.stop();
});

const failure = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('a hostile MCP server', () => {
  test('a list over GATEWAY_MCP_MAX_LIST_ITEMS leaves its server out; the others are listed', async () => {
    const { client } = await connectMcp(url(), apiKey);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['h__big', 'h__echo']);
    const e = await failure(client.callTool({ name: 'many__t1', arguments: {} }));
    expect(e).toBeInstanceOf(McpError);
    expect(many.calls.size).toBe(0);
    await client.close();
  });

  test('a name the server never listed is not callable, though the glob `*` matches it', async () => {
    const { client } = await connectMcp(url(), apiKey);
    const e = await failure(client.callTool({ name: 'h__secret', arguments: {} }));
    expect(e).toBeInstanceOf(McpError);
    expect(String(e)).toContain('h__secret not found');
    expect(hostile.calls.get('secret')).toBeUndefined();
    // A listed one is.
    expect(JSON.stringify(await client.callTool({ name: 'h__echo', arguments: {} }))).toContain('called echo');
    await client.close();
  });

  test('50 calls answered with 48 MB each fail naming the bound; the gateway memory stays flat', async () => {
    const { client } = await connectMcp(url(), apiKey);
    const call = () => failure(client.callTool({ name: 'h__big', arguments: {} }));
    for (let i = 0; i < 5; i++) await call();
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 50; i++) {
      const e = await call();
      expect(e).toBeInstanceOf(McpError);
      expect(String(e)).toContain('GATEWAY_MCP_MAX_MESSAGE_BYTES');
    }
    Bun.gc(true);
    const after = process.memoryUsage().rss;
    const mb = (n: number): string => (n / 1024 / 1024).toFixed(1);
    console.log(
      `RSS across 50 hostile calls (48 MB answers, 1 MiB bound): before ${mb(before)} MB, after ${mb(after)} MB, growth ${mb(after - before)} MB`,
    );
    expect(hostile.calls.get('big')).toBe(55);
    // 50 answers of 48 MB: 2.4 GB sent; a gateway that read them would grow by far more than this.
    expect(after - before).toBeLessThan(48 * 1024 * 1024);
    await client.close();
  });

  test('resources/list and resources/templates/list carry each URI once: the first server in profile order wins', async () => {
    const { client } = await connectMcp(`${tg.url}/mcp/dup`, apiKey);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['mem://d/readme']);
    expect((await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate)).toEqual(['mem://d/items/{id}']);
    await client.readResource({ uri: 'mem://d/readme' });
    expect(twins[0]?.seen.some((h) => h.rpc === 'resources/read')).toBe(true);
    expect(twins[1]?.seen.some((h) => h.rpc === 'resources/read')).toBe(false);
    await client.close();
  });
});
