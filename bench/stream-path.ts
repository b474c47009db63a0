#!/usr/bin/env bun
/**
 * In-process A/B of the streamed answer's JavaScript path between two source trees: the SSE reader
 * (relay.ts), the OpenAI Chat Completions decoder, and either the same-format relay (`chat`) or the
 * Messages encoder (`messages`, the cross-format path), or an Anthropic upstream's stream through
 * the Anthropic decoder and the Messages relay (`anthropic`), over a 21-event stream in one
 * chunk (what a local upstream delivers). Both trees run interleaved in one process; prints the
 * median µs per stream of each and the median of the paired differences. Checks that both trees
 * give the same bytes.
 *   bun bench/stream-path.ts --a=/path/to/tree-a --b=/path/to/tree-b [--kind=chat|messages|anthropic] [--rounds=30] [--n=1000]
 */
import { resolve } from 'node:path';
import type { StreamEvent } from '../src/canonical/types.ts';
import { median } from './lib/stats.ts';

const value = (name: string): string | undefined =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);
const kind = value('kind') ?? 'chat';
const rounds = Number(value('rounds') ?? 30);
const n = Number(value('n') ?? 1000);

type Read = () => Promise<StreamEvent[] | null>;
interface RelayLike {
  take(): string;
}
interface Tree {
  reader(body: ReadableStream<Uint8Array>, relay: RelayLike | undefined): Read;
  relay(): RelayLike;
  anthropic(body: ReadableStream<Uint8Array>, relay: RelayLike): Read;
  messagesRelay(): RelayLike;
  encoder(): { push(e: StreamEvent): string; end(): string };
}
const load = async (root: string): Promise<Tree> => {
  const r = (await import(`${root}/src/data-plane/relay.ts`)) as typeof import('../src/data-plane/relay.ts');
  const d = (await import(
    `${root}/src/providers/openai-compatible/stream.ts`
  )) as typeof import('../src/providers/openai-compatible/stream.ts');
  const m = (await import(`${root}/src/formats/messages/stream.ts`)) as typeof import('../src/formats/messages/stream.ts');
  const an = (await import(`${root}/src/providers/anthropic/stream.ts`)) as typeof import('../src/providers/anthropic/stream.ts');
  const signal = new AbortController().signal;
  return {
    reader: (body, relay) =>
      r.sseReader(d.createChatCompletionsStreamDecoder('openai'), body, signal, relay as InstanceType<typeof r.Relay> | undefined),
    relay: () => new r.Relay('chat', 'gpt-4o-mini', 'gpt-bench', true),
    anthropic: (body, relay) =>
      r.sseReader(an.createMessagesStreamDecoder('anthropic'), body, signal, relay as InstanceType<typeof r.Relay>),
    messagesRelay: () => new r.Relay('messages', 'claude-haiku-4-5', 'claude-bench', true),
    encoder: () => m.createMessagesStreamEncoder({ model: 'gpt-bench', requestId: 'req1', includeUsage: false }),
  };
};

const base = {
  id: 'chatcmpl-bench0000000000000000000001',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  system_fingerprint: 'fp_bench',
};
const frame = (delta: Record<string, unknown>, finish: string | null) =>
  `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null })}\n\n`;
const events = [frame({ role: 'assistant', content: '', refusal: null }, null)];
for (let i = 0; i < 17; i++) events.push(frame({ content: ` lorem ${i}` }, null));
events.push(
  frame({}, 'stop'),
  `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 30, completion_tokens: 17, total_tokens: 47 } })}\n\n`,
  'data: [DONE]\n\n',
);
const msg = (type: string, o: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
const anthropicEvents = [
  msg('message_start', {
    message: {
      id: 'msg_bench1',
      type: 'message',
      role: 'assistant',
      model: 'claude-haiku-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 30, output_tokens: 1 },
    },
  }),
  msg('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  ...Array.from({ length: 16 }, (_, i) => msg('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ` lorem ${i}` } })),
  msg('content_block_stop', { index: 0 }),
  msg('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 16 } }),
  msg('message_stop', {}),
];
const bytes = new TextEncoder().encode((kind === 'anthropic' ? anthropicEvents : events).join(''));

const run = async (t: Tree): Promise<string> => {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes);
      c.close();
    },
  });
  const relay = kind === 'chat' ? t.relay() : kind === 'anthropic' ? t.messagesRelay() : undefined;
  const enc = relay ? undefined : t.encoder();
  const read = kind === 'anthropic' ? t.anthropic(body, relay as RelayLike) : t.reader(body, relay);
  let out = '';
  for (let evs = await read(); evs !== null; evs = await read()) {
    if (enc) for (const e of evs) out += enc.push(e);
    if (relay) out += relay.take();
  }
  return out + (enc ? enc.end() : '');
};

const [a, b] = [await load(resolve(value('a') ?? '.')), await load(resolve(value('b') ?? '.'))] as [Tree, Tree];
if ((await run(a)) !== (await run(b))) throw new Error('the two trees give different bytes');
for (let i = 0; i < 3000; i++) await Promise.all([run(a), run(b)]);
const time = async (t: Tree): Promise<number> => {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await run(t);
  return ((performance.now() - t0) * 1000) / n;
};
const ta: number[] = [];
const tb: number[] = [];
for (let r = 0; r < rounds; r++) {
  ta.push(await time(a));
  tb.push(await time(b));
}
const diffs = tb.map((x, i) => x - (ta[i] as number));
console.log(
  `${kind}: A ${median(ta).toFixed(2)} µs  B ${median(tb).toFixed(2)} µs  paired Δ ${median(diffs).toFixed(2)} µs per stream (${rounds} rounds of ${n})`,
);
