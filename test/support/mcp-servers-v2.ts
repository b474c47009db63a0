import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

/**
 * An MCP 2026-07-28 server built with the v2 SDK (`@modelcontextprotocol/server`), strict: a 2025
 * request (`initialize`, no `_meta` envelope) is refused, so whatever reaches it through the gateway
 * came in the stateless generation. `seen` is the `MCP-Protocol-Version` and JSON-RPC method of each
 * POST as received, and its credential. With `legacy: 'stateless'` it speaks both generations (the
 * SDK serves a 2025 request statelessly), as the conformance suite's reference server does.
 */
export interface ModernMcpServer {
  url: string;
  seen: { version: string | null; rpc: string; authorization: string | null }[];
  stop(): Promise<void>;
}

export const startModernServer = (tag: string, bearer?: string, legacy: 'reject' | 'stateless' = 'reject'): ModernMcpServer => {
  const seen: ModernMcpServer['seen'] = [];
  const handler = createMcpHandler(
    () => {
      const s = new McpServer({ name: `modern-${tag}`, version: '2.0.0' });
      s.registerTool('echo', { description: 'Echoes text', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
        content: [{ type: 'text', text: `${tag}:${text}` }],
      }));
      s.registerTool('add', { description: 'Adds', inputSchema: z.object({ a: z.number(), b: z.number() }) }, async ({ a, b }) => ({
        content: [{ type: 'text', text: String(a + b) }],
      }));
      s.registerResource('readme', `mem://${tag}/readme`, { mimeType: 'text/plain' }, async (uri) => ({
        contents: [{ uri: uri.href, text: `${tag} readme` }],
      }));
      return s;
    },
    { legacy },
  );
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      const authorization = req.headers.get('authorization');
      if (bearer !== undefined && authorization !== `Bearer ${bearer}`) return new Response('unauthorized', { status: 401 });
      if (req.method === 'POST') {
        const body: unknown = await req.clone().json();
        const rpc = typeof body === 'object' && body !== null && 'method' in body && typeof body.method === 'string' ? body.method : '';
        seen.push({ version: req.headers.get('mcp-protocol-version'), rpc, authorization });
      }
      return handler.fetch(req);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/mcp`,
    seen,
    stop: async () => {
      await handler.close();
      await server.stop(true);
    },
  };
};
