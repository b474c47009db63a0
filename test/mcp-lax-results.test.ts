import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { setLogLevel, setLogSink } from '../src/core/log.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { textOf } from './support/mcp-gateway.ts';
import { discoverResult, jsonAnswer } from './support/mcp-hand-written.ts';

/**
 * Contract §7.1: a 2026-07-28 upstream that leaves `resultType` out of its results (as the
 * conformance suite's reference server does for `tools/call`) is read as sending complete results;
 * the gateway's client gets spec-valid results (`resultType: "complete"`), whether the upstream
 * answered with one JSON body, with newline-delimited JSON-RPC messages in one JSON body, or with
 * an SSE stream; an answer over GATEWAY_MCP_MAX_MESSAGE_BYTES still fails naming the bound; the
 * gateway logs it once per server, naming the server and none of what it sent.
 */

const BOUND = 64 * 1024;

/** A 2026-07-28-only MCP server written by hand, no result of which carries `resultType`. */
const startLaxServer = () => {
  const calls: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      if (req.method !== 'POST') return new Response(null, { status: 405 });
      const msg = (await req.json()) as { id?: number | string; method?: string; params?: { name?: string } };
      if (msg.id === undefined) return new Response(null, { status: 202 });
      const id = msg.id;
      const result = (text: string) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });
      if (msg.method === 'server/discover') return jsonAnswer({ jsonrpc: '2.0', id, result: discoverResult('lax') });
      if (msg.method === 'tools/list')
        return jsonAnswer({
          jsonrpc: '2.0',
          id,
          result: {
            tools: ['plain', 'lines', 'sse', 'big', 'bigjson'].map((name) => ({ name, inputSchema: { type: 'object' } })),
            ttlMs: 0,
            cacheScope: 'private',
          },
        });
      if (msg.method !== 'tools/call')
        return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }), {
          status: 404,
          headers: { 'content-type': 'application/json' },
        });
      const name = msg.params?.name ?? '';
      calls.push(name);
      if (name === 'plain') return jsonAnswer(result('plain answer'));
      if (name === 'bigjson') return jsonAnswer(result('x'.repeat(4 * BOUND)));
      if (name === 'lines') {
        // The reference server's test_streaming_elicitation: a notification, then the response, one per line.
        const note = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'token-abc', total: 100, value: 50 } };
        return new Response(`${JSON.stringify(note)}\n${JSON.stringify(result('lines answer'))}`, {
          headers: { 'content-type': 'application/json' },
        });
      }
      const sse = (data: string) =>
        new Response(`id: e1\r\nevent: message\r\n${data}\r\n\r\n`, { headers: { 'content-type': 'text/event-stream' } });
      // The JSON split over two data lines (joined with a newline by the SSE rules).
      if (name === 'sse')
        return sse(
          `data: {"jsonrpc":"2.0","id":${JSON.stringify(id)},\r\ndata: "result":{"content":[{"type":"text","text":"sse answer"}]}}`,
        );
      return sse(`data: ${JSON.stringify(result('x'.repeat(4 * BOUND)))}`);
    },
  });
  return { url: `http://127.0.0.1:${server.port}/mcp`, calls, stop: () => server.stop(true) };
};

let tg: TestGateway;
let lax: ReturnType<typeof startLaxServer>;
let apiKey: string;
const lines: string[] = [];
const acme = { customerId: 'acme', projectId: 'default' };

beforeAll(async () => {
  // The warn line is read whatever level an earlier test file left.
  setLogLevel('warn');
  setLogSink((line) => void lines.push(line));
  lax = startLaxServer();
  tg = await startTestGateway({ GATEWAY_MCP_MAX_MESSAGE_BYTES: '64KiB' });
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  apiKey = ((await tg.must(apikeyOp('CreateApiKey'), { name: 'k', userId: 'u1', enterpriseContext: acme })) as { apiKey: string }).apiKey;
  await tg.must(admin('CreateMcpServer'), { serverId: 'lax', url: lax.url });
  await tg.must(admin('AddProjectMcpServer'), { ...acme, serverId: 'lax' });
  await tg.must(admin('CreateMcpProfile'), { ...acme, profileId: 'p', servers: [{ serverId: 'lax' }] });
});

afterAll(async () => {
  setLogSink(undefined);
  setLogLevel('error');
  await tg?.stop();
  await lax?.stop();
});

const modernClient = async (): Promise<Client> => {
  const c = new Client({ name: 'v2-client', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${tg.url}/mcp/p`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }),
  );
  return c;
};

describe('a 2026-07-28 upstream whose results carry no resultType', () => {
  test('its tools are called through the gateway by a v2 client pinned to 2026-07-28: JSON, JSON lines and SSE answers', async () => {
    const c = await modernClient();
    expect(c.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect((await c.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'lax__big',
      'lax__bigjson',
      'lax__lines',
      'lax__plain',
      'lax__sse',
    ]);
    expect(textOf(await c.callTool({ name: 'lax__plain', arguments: {} }))).toBe('plain answer');
    expect(textOf(await c.callTool({ name: 'lax__lines', arguments: {} }))).toBe('lines answer');
    expect(textOf(await c.callTool({ name: 'lax__sse', arguments: {} }))).toBe('sse answer');
    expect(lax.calls).toEqual(['plain', 'lines', 'sse']);
    await c.close();
  });

  test('the gateway answers its own client with a spec-valid result (resultType "complete")', async () => {
    const res = await fetch(`${tg.url}/mcp/p`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'lax__plain',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: {
          name: 'lax__plain',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const data = text.startsWith('{')
      ? text
      : (text
          .split('\n')
          .find((l) => l.startsWith('data: '))
          ?.slice(6) ?? '');
    const body = JSON.parse(data) as { id: number; result: { resultType?: string; content: unknown } };
    expect(body.id).toBe(7);
    expect(body.result.resultType).toBe('complete');
    expect(body.result.content).toEqual([{ type: 'text', text: 'plain answer' }]);
  });

  test('an answer over GATEWAY_MCP_MAX_MESSAGE_BYTES still fails naming the bound: one SSE event, one JSON body', async () => {
    const c = await modernClient();
    for (const name of ['big', 'bigjson']) {
      const e = await c.callTool({ name: `lax__${name}`, arguments: {} }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(String(e)).toContain('GATEWAY_MCP_MAX_MESSAGE_BYTES');
      expect(lax.calls.at(-1)).toBe(name);
    }
    await c.close();
  });

  test('logged at warn once for the server, naming it and nothing it sent', () => {
    const warned = lines.filter((l) => l.includes('without resultType'));
    expect(warned.length).toBe(1);
    expect(JSON.parse(warned[0] ?? '{}')).toMatchObject({ level: 'warn', server: 'lax' });
    expect(lines.join('\n')).not.toContain('plain answer');
  });
});
