/**
 * Hostile upstreams for the body bounds (issue 38 item 3): each streams a body far larger than any
 * bound, from one reused buffer (so the upstream itself holds next to nothing), and counts what it
 * produced and whether the gateway cancelled it. Used by test/upstream-bounds.test.ts and
 * bench/upstream-bounds.ts.
 *
 * - An OpenAI-wire LLM upstream: the upstream model names the behaviour — `endless-json` (a
 *   non-streaming answer of `total` bytes, no Content-Length), `endless-event` (a stream whose first
 *   event never ends), `late-endless-event` (one normal event, then an event that never ends),
 *   anything else a normal short answer.
 * - An MCP server (Streamable HTTP, JSON-RPC by hand): tools `big_json` and `big_sse` answer with
 *   a tool result of `total` bytes (as JSON, or as one SSE event); with `manyTools` its tools/list
 *   has that many tools (200,012 ≈ 31 MB).
 */

export interface HostileState {
  /** Bytes produced (enqueued) so far, over every answer. */
  produced: number;
  /** Answers whose body the gateway cancelled before their end. */
  cancelled: number;
  /** Answers sent to their end. */
  completed: number;
}

export interface Hostile {
  url: string;
  state: HostileState;
  stop(): void;
}

const enc = new TextEncoder();
const PIECE = 64 * 1024;

/** A body of `head` + `total` bytes of filler + `tail`, produced lazily; counted in `state`. */
const streamed = (state: HostileState, head: string, total: number, tail: string, fill = 'x'): ReadableStream<Uint8Array> => {
  // Whole copies of `fill` per piece (ASCII), so a body of repeated JSON stays well-formed.
  const per = Math.max(1, Math.floor(PIECE / fill.length)) * fill.length;
  const piece = enc.encode(fill.repeat(per / fill.length));
  let left = total;
  let stage = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (stage === 0) {
        stage = 1;
        const h = enc.encode(head);
        state.produced += h.byteLength;
        return c.enqueue(h);
      }
      if (left > 0) {
        const n = Math.min(left, per);
        left -= n;
        state.produced += n;
        return c.enqueue(n === per ? piece : piece.subarray(0, n));
      }
      if (stage === 1) {
        stage = 2;
        state.completed++;
        c.enqueue(enc.encode(tail));
        return;
      }
      c.close();
    },
    cancel() {
      state.cancelled++;
    },
  });
};

const chunk = (content: string) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  });

/** The OpenAI-wire hostile upstream; `total` bytes of filler per hostile answer. */
export const startHostileLlm = (total: number): Hostile => {
  const state: HostileState = { produced: 0, cancelled: 0, completed: 0 };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const body = (await req.json()) as { model?: string; stream?: boolean };
      const sse = { 'content-type': 'text/event-stream' };
      switch (body.model) {
        case 'endless-json':
          return new Response(
            streamed(
              state,
              '{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"',
              total,
              '"},"finish_reason":"stop"}]}',
            ),
            {
              headers: { 'content-type': 'application/json' },
            },
          );
        case 'endless-event':
          return new Response(
            streamed(
              state,
              `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"`,
              total,
              '"},"finish_reason":null}]}\n\ndata: [DONE]\n\n',
            ),
            { headers: sse },
          );
        case 'late-endless-event':
          return new Response(
            streamed(
              state,
              `data: ${chunk('first ')}\n\ndata: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"`,
              total,
              '"},"finish_reason":null}]}\n\ndata: [DONE]\n\n',
            ),
            { headers: sse },
          );
        default: {
          const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
          if (body.stream)
            return new Response(
              `data: ${chunk('fine')}\n\ndata: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage })}\n\ndata: [DONE]\n\n`,
              { headers: sse },
            );
          return Response.json({
            id: 'ok',
            object: 'chat.completion',
            created: 1,
            model: 'm',
            choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }],
            usage,
          });
        }
      }
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, state, stop: () => server.stop(true) };
};

/** The hostile MCP server (Streamable HTTP, stateless); `total` bytes per hostile tool result, `manyTools` tools listed. */
export const startHostileMcp = (total: number, manyTools = 0): Hostile => {
  const state: HostileState = { produced: 0, cancelled: 0, completed: 0 };
  const rpc = (id: unknown, result: unknown) => Response.json({ jsonrpc: '2.0', id, result });
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      if (req.method !== 'POST') return new Response(null, { status: 405 });
      const m = (await req.json()) as { id?: number | string; method?: string; params?: { name?: string } };
      const id = JSON.stringify(m.id ?? null);
      switch (m.method) {
        case 'initialize':
          return rpc(m.id, { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1' } });
        case 'tools/list': {
          if (manyTools === 0)
            return rpc(m.id, { tools: ['big_json', 'big_sse', 'small'].map((name) => ({ name, inputSchema: { type: 'object' } })) });
          const one =
            ',{"name":"tool_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","description":"a tool of a list far too long for anyone","inputSchema":{"type":"object"}}';
          return new Response(
            streamed(
              state,
              `{"jsonrpc":"2.0","id":${id},"result":{"tools":[{"name":"t0","inputSchema":{"type":"object"}}`,
              (manyTools - 1) * one.length,
              ']}}',
              one,
            ),
            {
              headers: { 'content-type': 'application/json' },
            },
          );
        }
        case 'tools/call': {
          const head = `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`;
          if (m.params?.name === 'big_json')
            return new Response(streamed(state, head, total, '"}]}}'), { headers: { 'content-type': 'application/json' } });
          if (m.params?.name === 'big_sse')
            return new Response(streamed(state, `event: message\ndata: ${head}`, total, '"}]}}\n\n'), {
              headers: { 'content-type': 'text/event-stream' },
            });
          return rpc(m.id, { content: [{ type: 'text', text: 'small' }] });
        }
        default:
          return m.id === undefined ? new Response(null, { status: 202 }) : rpc(m.id, {});
      }
    },
  });
  return { url: `http://127.0.0.1:${server.port}/mcp`, state, stop: () => server.stop(true) };
};
