import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import pkg from '../package.json' with { type: 'json' };
import { admin } from './support/gateway.ts';
import { connectMcp } from './support/mcp-gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Issue 47: the MCP gateway tells clients the product's version (not 0.0.0), and an error reaches
 * an SDK client with one "MCP error <code>:" prefix, whether the upstream's (relayed) or the
 * gateway's own; a hosted `mcp_call.error` carries the text alone.
 */

let w: World;
let faulty: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  w = await startWorld();
  faulty = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (req) => {
      const mcp = new Server({ name: 'faulty', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [{ name: 'explode', description: 'Fails with a protocol error', inputSchema: { type: 'object' } }],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async () => {
        throw new McpError(-32050, 'database unavailable');
      });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await mcp.connect(transport);
      return transport.handleRequest(req);
    },
  });
  const acme = { customerId: 'acme', projectId: 'default' };
  await w.tg.must(admin('CreateMcpServer'), { serverId: 'faulty', url: `http://127.0.0.1:${faulty.port}/mcp` });
  await w.tg.must(admin('AddProjectMcpServer'), { ...acme, serverId: 'faulty' });
  await w.tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'broken', servers: [{ serverId: 'faulty', prefix: '' }] });
  await w.tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'prefixed', servers: [{ serverId: 'faulty', prefix: 'f' }] });
}, 60_000);

afterAll(async () => {
  await stopWorld(w);
  void faulty?.stop(true);
});

test("serverInfo names the gateway with the product's version", async () => {
  const { client } = await connectMcp(`${w.tg.url}/mcp/broken`, w.p.apiKey);
  expect(client.getServerVersion()).toMatchObject({ name: 'ai-gateway', version: pkg.version });
  expect(pkg.version).not.toBe('0.0.0');
  await client.close();
});

test('an upstream error and a gateway error each reach the SDK client with one prefix', async () => {
  const { client } = await connectMcp(`${w.tg.url}/mcp/broken`, w.p.apiKey);
  const upstream = await client.callTool({ name: 'explode', arguments: {} }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(upstream).toBeInstanceOf(McpError);
  expect(upstream instanceof McpError ? upstream.message : '').toBe('MCP error -32050: database unavailable');
  await client.close();
  // A name no server of the profile has: the gateway's own error.
  const prefixed = await connectMcp(`${w.tg.url}/mcp/prefixed`, w.p.apiKey);
  const own = await prefixed.client.callTool({ name: 'nope', arguments: {} }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(own instanceof McpError ? own.message : String(own)).toBe('MCP error -32602: Tool nope not found');
  await prefixed.client.close();
});

test("a hosted mcp_call's error is the upstream's text alone", async () => {
  const sdk = new OpenAI({ baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey, maxRetries: 0 });
  const r = await sdk.responses.create({
    model: 'claude-mini',
    input: 'call explode {}',
    tools: [{ type: 'mcp', server_label: 'broken', server_url: `${w.tg.url}/mcp/broken`, require_approval: 'never' }],
  });
  const call = r.output.find((o) => o.type === 'mcp_call');
  expect(call?.type === 'mcp_call' ? call.error : undefined).toEqual({
    type: 'mcp_protocol_error',
    code: -32050,
    message: 'database unavailable',
  });
});
