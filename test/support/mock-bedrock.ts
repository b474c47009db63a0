/**
 * A mock Bedrock runtime speaking the real Converse wire: `/model/{id}/converse` (JSON) and
 * `/converse-stream` (AWS event-stream). It records what the gateway sent and answers
 * `bedrock says: <last user text>`, or a `toolUse` for "call NAME ARGS" (its input streamed in two pieces).
 */
import { concatBytes } from '../../src/core/bytes.ts';
import { encodeEventStreamMessage } from '../../src/providers/eventstream.ts';
import type { Recorded } from './mock-upstreams.ts';

export interface MockBedrock {
  url: string;
  requests: Recorded[];
  stop(): void;
}

type Json = Record<string, unknown>;

const lastUserText = (body: Json): string => {
  const messages = (body.messages as { role?: string; content?: Json[] }[] | undefined) ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    const text = (m.content ?? []).map((b) => (typeof b.text === 'string' ? b.text : '')).join('');
    if (text !== '') return text;
  }
  return '';
};

const USAGE = { inputTokens: 12, outputTokens: 7, totalTokens: 19 };

const event = (type: string, payload: Json): Uint8Array =>
  encodeEventStreamMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify(payload));

export const startMockBedrock = (): MockBedrock => {
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
      if (path.endsWith('/converse')) {
        const content = call
          ? [{ toolUse: { toolUseId: 'tooluse_1', name: call[1], input: JSON.parse(call[2] ?? '{}') } }]
          : [{ text: `bedrock says: ${text}` }];
        return Response.json({
          output: { message: { role: 'assistant', content } },
          stopReason: call ? 'tool_use' : 'end_turn',
          usage: USAGE,
          metrics: { latencyMs: 5 },
        });
      }
      const frames: Uint8Array[] = [event('messageStart', { role: 'assistant' })];
      if (call) {
        const args = call[2] ?? '{}';
        const half = Math.floor(args.length / 2);
        frames.push(
          event('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_1', name: call[1] } } }),
          event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: args.slice(0, half) } } }),
          event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: args.slice(half) } } }),
        );
      } else {
        for (const w of `bedrock says: ${text}`.split(/(?<= )/))
          frames.push(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: w } }));
      }
      frames.push(
        event('contentBlockStop', { contentBlockIndex: 0 }),
        event('messageStop', { stopReason: call ? 'tool_use' : 'end_turn' }),
        event('metadata', { usage: USAGE, metrics: { latencyMs: 5 } }),
      );
      return new Response(concatBytes(frames), { headers: { 'content-type': 'application/vnd.amazon.eventstream' } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
};
