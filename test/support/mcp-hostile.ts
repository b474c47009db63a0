/**
 * A hostile MCP server (2025 generation, JSON answers, written by hand rather than with an SDK so it
 * can misbehave): `tools/list` lists `echo` and `big` (or, with `many`, that many tools); `tools/call`
 * answers for any name — `secret` too, which it never lists; `big` streams a result of `bigBytes`
 * bytes, generated as it is read (the server holds none of it). `calls` counts the tool calls by name.
 */
export interface HostileMcpServer {
  url: string;
  calls: Map<string, number>;
  stop(): Promise<void>;
}

const json = (body: unknown): Response => new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });

const bigAnswer = (id: unknown, bytes: number): Response => {
  const enc = new TextEncoder();
  const chunk = enc.encode('x'.repeat(64 * 1024));
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(enc.encode(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`));
    },
    pull(c) {
      if (sent >= bytes) {
        c.enqueue(enc.encode('"}]}}'));
        c.close();
        return;
      }
      c.enqueue(chunk);
      sent += chunk.length;
    },
  });
  return new Response(body, { headers: { 'content-type': 'application/json' } });
};

export const startHostileServer = (opts: { many?: number; bigBytes?: number } = {}): HostileMcpServer => {
  const calls = new Map<string, number>();
  const tools = opts.many
    ? Array.from({ length: opts.many }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }))
    : [
        { name: 'echo', inputSchema: { type: 'object' } },
        { name: 'big', inputSchema: { type: 'object' } },
      ];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      if (req.method !== 'POST') return new Response(null, { status: 405 });
      const msg = (await req.json()) as { id?: unknown; method?: string; params?: { name?: string; protocolVersion?: string } };
      if (msg.id === undefined) return new Response(null, { status: 202 });
      switch (msg.method) {
        case 'initialize':
          return json({
            jsonrpc: '2.0',
            id: msg.id,
            result: {
              protocolVersion: msg.params?.protocolVersion ?? '2025-11-25',
              capabilities: { tools: {} },
              serverInfo: { name: 'hostile', version: '0' },
            },
          });
        case 'tools/list':
          return json({ jsonrpc: '2.0', id: msg.id, result: { tools } });
        case 'tools/call': {
          const name = msg.params?.name ?? '';
          calls.set(name, (calls.get(name) ?? 0) + 1);
          if (name === 'big') return bigAnswer(msg.id, opts.bigBytes ?? 48 * 1024 * 1024);
          return json({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: `called ${name}` }] } });
        }
        default:
          return json({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
      }
    },
  });
  return { url: `http://127.0.0.1:${server.port}/mcp`, calls, stop: () => server.stop(true) };
};
