import { expect, test } from 'bun:test';
import type { ClientFormat, StreamEvent } from '../src/canonical/types.ts';
import { Relay, sseReader } from '../src/data-plane/relay.ts';
import { createFrameParser } from '../src/providers/framing.ts';
import { getAdapter } from '../src/providers/registry.ts';
import type { HttpProviderAdapter } from '../src/providers/types.ts';
import { mulberry32 } from './support/fuzz-bodies.ts';

/**
 * The SSE reader (relay.ts) slices events directly and, for a same-format relay, relays runs of
 * plain events in one piece. Whatever the upstream's framing and however its bytes are split into
 * chunks, it must give exactly what the generic frame parser and the per-frame relay give (same
 * text, same decoded events, same failure), which is what this compares against over random
 * chunk splits, with and without a relay.
 */

const adapter = (id: string): HttpProviderAdapter => {
  const a = getAdapter(id);
  if (a?.kind !== 'http') throw new Error(`no http adapter ${id}`);
  return a;
};

interface Outcome {
  text: string;
  events: StreamEvent[];
  error: string | undefined;
  done: boolean;
}

/** The per-frame path (the generic frame parser, every frame re-framed): the reference. */
const reference = (a: HttpProviderAdapter, format: ClientFormat, body: string, includeUsage: boolean): Outcome => {
  const relay = new Relay(format, 'up-model', 'client-model', includeUsage);
  const framer = createFrameParser('sse');
  const decoder = a.createStreamDecoder();
  const events: StreamEvent[] = [];
  try {
    for (const f of [...framer.push(new TextEncoder().encode(body)), ...framer.flush()]) {
      const evs = decoder.push(f);
      events.push(...evs);
      relay.frame(f, evs);
    }
    events.push(...decoder.end());
    return { text: relay.take(), events, error: undefined, done: relay.done };
  } catch (e) {
    return { text: '', events: [], error: String(e), done: false };
  }
};

const chunked = (bytes: Uint8Array, rnd: () => number): ReadableStream<Uint8Array> => {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; ) {
    const n = rnd() < 0.3 ? bytes.length : 1 + Math.floor(rnd() * 40);
    parts.push(bytes.slice(i, i + n));
    i += n;
  }
  // Half the time every chunk is queued at once (the reader then takes several in one read).
  if (rnd() < 0.5) {
    return new ReadableStream({
      start(c) {
        for (const p of parts) c.enqueue(p);
        c.close();
      },
    });
  }
  return new ReadableStream({
    pull(c) {
      const p = parts.shift();
      if (p) c.enqueue(p);
      else c.close();
    },
  });
};

const fast = async (
  a: HttpProviderAdapter,
  format: ClientFormat,
  body: string,
  includeUsage: boolean,
  rnd: () => number,
  relayed = true,
): Promise<Outcome> => {
  const relay = new Relay(format, 'up-model', 'client-model', includeUsage);
  const read = sseReader(
    a.createStreamDecoder(),
    chunked(new TextEncoder().encode(body), rnd),
    new AbortController().signal,
    relayed ? relay : undefined,
  );
  const events: StreamEvent[] = [];
  let text = '';
  try {
    for (let evs = await read(); evs !== null; evs = await read()) {
      events.push(...evs);
      text += relay.take();
    }
    return { text: text + relay.take(), events, error: undefined, done: relay.done };
  } catch (e) {
    // On a failure the stream ends with the error event: what matters is the same error.
    return { text: '', events: [], error: String(e), done: false };
  }
};

const chunk = (o: Record<string, unknown>): string =>
  JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'up-model', ...o });
const delta = (content: string) => chunk({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const fin = chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
const usage = chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } });
const chatPlain = `data: ${delta('Hé')}\n\ndata: ${delta('llo ✓ wörld')}\n\ndata: ${fin}\n\ndata: ${usage}\n\ndata: [DONE]\n\n`;

const msg = (type: string, o: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
const messagesPlain =
  msg('message_start', {
    message: { id: 'm1', type: 'message', role: 'assistant', model: 'up-model', content: [], usage: { input_tokens: 4, output_tokens: 1 } },
  }) +
  msg('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
  msg('ping', {}) +
  msg('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Grüße 👋' } }) +
  msg('content_block_stop', { index: 0 }) +
  msg('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 6 } }) +
  msg('message_stop', {});

const cases: { name: string; id: string; format: ClientFormat; body: string; includeUsage?: boolean }[] = [
  { name: 'chat, plain', id: 'openai', format: 'chat', body: chatPlain },
  { name: 'chat, usage withheld', id: 'openai', format: 'chat', body: chatPlain, includeUsage: false },
  { name: 'chat, CRLF', id: 'openai', format: 'chat', body: chatPlain.replaceAll('\n', '\r\n') },
  {
    name: 'chat, CRLF from the middle on',
    id: 'openai',
    format: 'chat',
    body: chatPlain.slice(0, 150) + chatPlain.slice(150).replaceAll('\n', '\r\n'),
  },
  {
    name: 'chat, comments, no space, multi-line data, event lines, extra blank lines',
    id: 'openai',
    format: 'chat',
    body: `: hello\n\ndata:${delta('a')}\n\nevent: x\ndata: ${delta('b')}\n\n\n\ndata: {"id":"c1","model":"up-model",\ndata: "choices":[{"index":0,"delta":{"content":"c"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`,
  },
  { name: 'chat, BOM and no final blank line', id: 'openai', format: 'chat', body: `\ufeffdata: ${delta('x')}\n\ndata: ${fin}` },
  {
    name: 'chat, error event mid-stream',
    id: 'openai',
    format: 'chat',
    body: `data: ${delta('x')}\n\ndata: {"error":{"message":"overloaded","type":"server_error"}}\n\ndata: ${fin}\n\n`,
  },
  {
    name: 'chat, an event that is not JSON',
    id: 'openai',
    format: 'chat',
    body: `data: ${delta('x')}\n\ndata: {not json\n\ndata: ${fin}\n\n`,
  },
  { name: 'chat, ends early', id: 'openai', format: 'chat', body: `data: ${delta('x')}\n\n` },
  { name: 'messages, plain', id: 'anthropic', format: 'messages', body: messagesPlain },
  { name: 'messages, CRLF', id: 'anthropic', format: 'messages', body: messagesPlain.replaceAll('\n', '\r\n') },
  {
    name: 'messages, data without event line, comment',
    id: 'anthropic',
    format: 'messages',
    body: `: c\n\n${messagesPlain.replace('event: ping\n', '')}`,
  },
  {
    name: 'messages, error event',
    id: 'anthropic',
    format: 'messages',
    body:
      messagesPlain.slice(0, messagesPlain.indexOf('event: content_block_delta')) +
      msg('error', { error: { type: 'overloaded_error', message: 'busy' } }),
  },
];

for (const c of cases) {
  test(`relay = per-frame relay over random chunk splits: ${c.name}`, async () => {
    const a = adapter(c.id);
    const want = reference(a, c.format, c.body, c.includeUsage ?? true);
    if (c.name.includes('plain')) expect(want.text).toContain('"model":"client-model"');
    const rnd = mulberry32(c.name.length * 7919);
    for (let i = 0; i < 60; i++) expect(await fast(a, c.format, c.body, c.includeUsage ?? true, rnd)).toEqual(want);
    // Without a relay (a translated stream): the same events, the same failure.
    for (let i = 0; i < 30; i++)
      expect(await fast(a, c.format, c.body, c.includeUsage ?? true, rnd, false)).toEqual({ ...want, text: '', done: false });
  });
}
