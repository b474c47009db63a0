import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { z } from 'zod';

/**
 * MCP servers built with the official SDK for the gateway's tests and bench: one over Streamable
 * HTTP (stateful sessions, on Bun.serve), one over the 2024-11-05 HTTP+SSE transport (node:http).
 * Each checks its own credential and remembers the credential-bearing headers it saw.
 */

export interface TestMcpServer {
  url: string;
  /** `authorization` and `x-api-token` headers of every HTTP request, as received, with its method (and the JSON-RPC method of a Streamable HTTP POST). */
  seen: { authorization: string | null; token: string | null; method: string; rpc?: string }[];
  /** Drops every upstream session (as a restarted or expiring server would). */
  forgetSessions(): void;
  sessions(): number;
  stop(): Promise<void>;
}

/** Registers the tools, prompts and resources of server `tag` ('a' or 'b'). */
const populate = (server: McpServer, tag: string): void => {
  server.registerTool('echo', { description: 'Echoes text', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text: `${tag}:${text}` }],
  }));
  server.registerTool('add', { description: 'Adds', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  server.registerTool('admin_reset', { description: 'Hidden by filters' }, async () => ({
    content: [{ type: 'text', text: `${tag}:reset done` }],
  }));
  server.registerTool('progress', { description: 'Reports progress', inputSchema: { steps: z.number() } }, async ({ steps }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++)
      if (token !== undefined)
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
    return { content: [{ type: 'text', text: `${tag}:progressed ${steps}` }] };
  });
  server.registerTool('ask', { description: 'Asks the client to sample' }, async (extra) => {
    const r = await extra.sendRequest(
      { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } },
      z.object({ content: z.object({ type: z.string(), text: z.string().optional() }) }).loose(),
    );
    return { content: [{ type: 'text', text: `${tag}:sampled ${r.content.text ?? ''}` }] };
  });
  server.registerPrompt('greet', { description: 'Greets', argsSchema: { who: z.string() } }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `${tag}: hello ${who}` } }],
  }));
  server.registerResource('readme', `mem://${tag}/readme`, { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: `${tag} readme` }],
  }));
  server.registerResource(
    'item',
    new ResourceTemplate(`mem://${tag}/items/{id}`, { list: undefined }),
    { mimeType: 'text/plain' },
    async (uri, { id }) => ({
      contents: [{ uri: uri.href, text: `${tag} item ${String(id)}` }],
    }),
  );
};

const authorized = (headers: { authorization: string | null; token: string | null }, auth: { bearer?: string; token?: string }): boolean =>
  (auth.bearer === undefined || headers.authorization === `Bearer ${auth.bearer}`) &&
  (auth.token === undefined || headers.token === auth.token);

/** A Streamable HTTP server (stateful: one McpServer per session). */
export const startStreamableServer = (tag: string, auth: { bearer?: string; token?: string }): TestMcpServer => {
  const seen: TestMcpServer['seen'] = [];
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    fetch: async (req) => {
      const h = { authorization: req.headers.get('authorization'), token: req.headers.get('x-api-token'), method: req.method };
      const body: unknown =
        req.method === 'POST'
          ? await req
              .clone()
              .json()
              .catch(() => undefined)
          : undefined;
      const rpc =
        typeof body === 'object' && body !== null && 'method' in body && typeof body.method === 'string' ? body.method : undefined;
      seen.push(rpc ? { ...h, rpc } : h);
      if (!authorized(h, auth)) return new Response('unauthorized', { status: 401 });
      const sid = req.headers.get('mcp-session-id');
      const existing = sid ? sessions.get(sid) : undefined;
      if (existing) return existing.handleRequest(req);
      if (sid)
        return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }), {
          status: 404,
        });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => void sessions.set(id, transport),
      });
      const mcp = new McpServer({ name: `server-${tag}`, version: '1.0.0' }, { capabilities: { logging: {} } });
      populate(mcp, tag);
      await mcp.connect(transport);
      return transport.handleRequest(req);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/mcp`,
    seen,
    forgetSessions: () => sessions.clear(),
    sessions: () => sessions.size,
    stop: async () => {
      for (const t of sessions.values()) await t.close();
      server.stop(true);
    },
  };
};

/** An HTTP+SSE server (2024-11-05): GET /sse opens the stream, POST /messages?sessionId= carries messages. */
export const startSseServer = async (tag: string, auth: { bearer?: string; token?: string }): Promise<TestMcpServer> => {
  const seen: TestMcpServer['seen'] = [];
  const sessions = new Map<string, SSEServerTransport>();
  const header = (req: IncomingMessage, name: string): string | null => {
    const v = req.headers[name];
    return typeof v === 'string' ? v : null;
  };
  const http: HttpServer = createServer((req, res) => {
    const h = { authorization: header(req, 'authorization'), token: header(req, 'x-api-token'), method: req.method ?? '' };
    seen.push(h);
    if (!authorized(h, auth)) {
      res.writeHead(401).end('unauthorized');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      sessions.set(transport.sessionId, transport);
      res.on('close', () => sessions.delete(transport.sessionId));
      const mcp = new McpServer({ name: `server-${tag}`, version: '1.0.0' });
      populate(mcp, tag);
      void mcp.connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const t = sessions.get(url.searchParams.get('sessionId') ?? '');
      if (!t) {
        res.writeHead(404).end('unknown session');
        return;
      }
      void t.handlePostMessage(req, res);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    seen,
    forgetSessions: () => sessions.clear(),
    sessions: () => sessions.size,
    stop: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
};
