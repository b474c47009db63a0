/**
 * A mock Cohere v2 upstream speaking the real `/v2/chat` wire (JSON, and SSE with `event:` lines
 * and typed `data:`). It records what the gateway sent and answers `cohere says: <last user
 * text>`, or a tool call for "call NAME ARGS" (its arguments streamed in two pieces).
 */
import type { Recorded } from './mock-upstreams.ts';

export interface MockCohere {
  url: string;
  requests: Recorded[];
  stop(): void;
}

type Json = Record<string, unknown>;

const lastUserText = (body: Json): string => {
  const messages = (body.messages as { role?: string; content?: unknown }[] | undefined) ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return (m.content as Json[]).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
  }
  return '';
};

const USAGE = { billed_units: { input_tokens: 12, output_tokens: 7 }, tokens: { input_tokens: 12, output_tokens: 7 } };
const sse = (type: string, payload: Json): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

export const startMockCohere = (): MockCohere => {
  const requests: Recorded[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const { pathname: path, search } = new URL(req.url);
      const body = (await req.json().catch(() => ({}))) as Json;
      requests.push({ path, search, headers: Object.fromEntries(req.headers.entries()), body });
      const text = lastUserText(body);
      const call = /^call (\w+) (\{.*\})$/.exec(text);
      const toolCall = call ? { id: 'cohere_call_1', type: 'function', function: { name: call[1], arguments: call[2] } } : undefined;
      if (body.stream !== true)
        return Response.json({
          id: 'cohere-resp-1',
          finish_reason: call ? 'TOOL_CALL' : 'COMPLETE',
          message: call
            ? { role: 'assistant', tool_plan: 'I will call it.', tool_calls: [toolCall] }
            : { role: 'assistant', content: [{ type: 'text', text: `cohere says: ${text}` }] },
          usage: USAGE,
        });
      let out = sse('message-start', { id: 'cohere-resp-1', delta: { message: { role: 'assistant' } } });
      if (call) {
        const args = call[2] ?? '{}';
        const half = Math.floor(args.length / 2);
        out += sse('tool-call-start', {
          index: 0,
          delta: {
            message: { tool_calls: { id: 'cohere_call_1', type: 'function', function: { name: call[1], arguments: args.slice(0, half) } } },
          },
        });
        out += sse('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: args.slice(half) } } } } });
        out += sse('tool-call-end', { index: 0 });
      } else {
        out += sse('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
        for (const w of `cohere says: ${text}`.split(/(?<= )/))
          out += sse('content-delta', { index: 0, delta: { message: { content: { text: w } } } });
        out += sse('content-end', { index: 0 });
      }
      out += sse('message-end', { delta: { finish_reason: call ? 'TOOL_CALL' : 'COMPLETE', usage: USAGE } });
      return new Response(out, { headers: { 'content-type': 'text/event-stream' } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
};
