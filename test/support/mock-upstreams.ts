/**
 * Mock upstream providers that speak the real OpenAI Chat Completions and Anthropic Messages wire
 * formats, record what the gateway sent, and answer as scripted. Only upstreams are simulated.
 */

import { anthropicContentRefusal, chatContentRefusal } from './mock-content.ts';
import { isResponsesPath, responsesBody, responsesEvents, responsesRefusal, responsesView } from './mock-responses.ts';
import {
  anthropicThinking,
  anthropicThinkingRefusal,
  mockSignature,
  openaiReasoningRefusal,
  openaiReasoningTokens,
} from './mock-thinking.ts';

export interface Recorded {
  path: string;
  /** The query string (`?api-version=…`), empty when none. */
  search?: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export interface Scripted {
  text?: string;
  /** Stream: the text in exactly these deltas (default: one delta per word of `text`). */
  textChunks?: string[];
  toolCall?: { id: string; name: string; arguments: string };
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  /** OpenAI: `reasoning_content` in the answer (as DeepSeek sends); Anthropic: the thinking text when thinking is enabled. */
  reasoning?: string;
  /** Non-2xx answer with this raw body. */
  status?: number;
  errorBody?: string;
  headers?: Record<string, string>;
  /** Delay before the response headers (ms). */
  delayMs?: number;
  /** Delay between stream chunks (ms). */
  chunkDelayMs?: number;
  /** Raw response body to send as is (malformed-upstream tests). */
  raw?: string;
  /** Stream: stop sending after this many chunks and close the connection. */
  cutAfter?: number;
  /** Stream: send an in-stream error after the first content chunk. */
  midStreamError?: boolean;
}

export type Script = (req: Recorded) => Scripted;

const lastUserText = (body: Record<string, unknown>): string => {
  const messages = (body.messages as { role: string; content: unknown }[] | undefined) ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) {
      return (m.content as { type: string; text?: string }[])
        .filter((p) => p.type === 'text')
        .map((p) => p.text ?? '')
        .join('');
    }
  }
  return '';
};

/** The content of a tool result that ends the conversation (OpenAI `tool` message, Anthropic `tool_result`), if one does. */
const trailingToolResult = (body: Record<string, unknown>): string | undefined => {
  const messages = (body.messages as { role: string; content: unknown }[] | undefined) ?? [];
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  if (last?.role === 'user' && Array.isArray(last.content)) {
    const r = (last.content as { type: string; content?: unknown }[]).find((b) => b.type === 'tool_result');
    if (r) return typeof r.content === 'string' ? r.content : JSON.stringify(r.content);
  }
  return undefined;
};

/**
 * Default behaviour: answer "<provider> says: <last user text>", or call a tool when asked to
 * ("call NAME ARGS"), or "tool said: <result>" after a tool result.
 */
const defaultScript =
  (provider: string): Script =>
  (req) => {
    const result = trailingToolResult(req.body);
    if (result !== undefined) return { text: `tool said: ${result}`, usage: { input: 30, output: 5 } };
    const text = lastUserText(req.body);
    const tools = req.body.tools as unknown[] | undefined;
    const m = /^call (\w+) (.*)$/.exec(text);
    if (tools?.length && m)
      return { toolCall: { id: 'call_abc123', name: m[1] as string, arguments: m[2] as string }, usage: { input: 20, output: 9 } };
    return { text: `${provider} says: ${text}`, usage: { input: 12, output: 7 } };
  };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const split = (text: string): string[] => text.match(/\S+\s*/g) ?? [text];

// ---- OpenAI Chat Completions wire ---------------------------------------------------------------

const openaiBody = (model: string, s: Scripted, body: Record<string, unknown>) => ({
  id: 'chatcmpl-mock1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model,
  // As many choices as `n` asks for (the same answer each time).
  choices: Array.from({ length: typeof body.n === 'number' ? body.n : 1 }, (_, index) => ({
    index,
    message: {
      role: 'assistant',
      content: s.toolCall ? null : (s.text ?? ''),
      ...(s.reasoning !== undefined ? { reasoning_content: s.reasoning } : {}),
      ...(s.toolCall
        ? { tool_calls: [{ id: s.toolCall.id, type: 'function', function: { name: s.toolCall.name, arguments: s.toolCall.arguments } }] }
        : {}),
      refusal: null,
    },
    logprobs: null,
    finish_reason: s.toolCall ? 'tool_calls' : 'stop',
  })),
  usage: {
    prompt_tokens: s.usage?.input ?? 0,
    completion_tokens: s.usage?.output ?? 0,
    total_tokens: (s.usage?.input ?? 0) + (s.usage?.output ?? 0),
    prompt_tokens_details: { cached_tokens: s.usage?.cacheRead ?? 0 },
    completion_tokens_details: { reasoning_tokens: openaiReasoningTokens(body) },
  },
});

const openaiChunks = (model: string, s: Scripted, includeUsage: boolean, body: Record<string, unknown>): string[] => {
  const base = { id: 'chatcmpl-mock1', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) })}\n\n`;
  const out = [chunk({ role: 'assistant', content: '' })];
  if (s.reasoning !== undefined) for (const w of split(s.reasoning)) out.push(chunk({ reasoning_content: w }));
  if (s.toolCall) {
    out.push(
      chunk({ tool_calls: [{ index: 0, id: s.toolCall.id, type: 'function', function: { name: s.toolCall.name, arguments: '' } }] }),
    );
    const a = s.toolCall.arguments;
    const mid = Math.floor(a.length / 2);
    for (const part of [a.slice(0, mid), a.slice(mid)]) out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] }));
    out.push(chunk({}, 'tool_calls'));
  } else {
    for (const w of s.textChunks ?? split(s.text ?? '')) out.push(chunk({ content: w }));
    out.push(chunk({}, 'stop'));
  }
  if (includeUsage) {
    const u = s.usage ?? { input: 0, output: 0 };
    out.push(
      `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output, prompt_tokens_details: { cached_tokens: u.cacheRead ?? 0 }, completion_tokens_details: { reasoning_tokens: openaiReasoningTokens(body) } } })}\n\n`,
    );
  }
  out.push('data: [DONE]\n\n');
  return out;
};

// ---- Anthropic Messages wire -------------------------------------------------------------------

const anthropicUsage = (s: Scripted) => ({
  input_tokens: (s.usage?.input ?? 0) - (s.usage?.cacheRead ?? 0) - (s.usage?.cacheWrite ?? 0),
  output_tokens: s.usage?.output ?? 0,
  cache_creation_input_tokens: s.usage?.cacheWrite ?? 0,
  cache_read_input_tokens: s.usage?.cacheRead ?? 0,
});

/** Message ids are unique per answer, as Anthropic's are (threads are keyed by them). */
let messageSeq = 0;

const anthropicBody = (model: string, s: Scripted, body: Record<string, unknown>) => ({
  id: `msg_mock${++messageSeq}`,
  type: 'message',
  role: 'assistant',
  model,
  content: [
    ...thinkingBlocks(anthropicThinking(body, s.reasoning)),
    ...(s.toolCall
      ? [{ type: 'tool_use', id: s.toolCall.id, name: s.toolCall.name, input: JSON.parse(s.toolCall.arguments) as unknown }]
      : [{ type: 'text', text: s.text ?? '' }]),
  ],
  stop_reason: s.toolCall ? 'tool_use' : 'end_turn',
  stop_sequence: null,
  usage: anthropicUsage(s),
});

const thinkingBlocks = (text: string | undefined) =>
  text === undefined ? [] : [{ type: 'thinking', thinking: text, signature: mockSignature(text) }];

const anthropicEvents = (model: string, s: Scripted, body: Record<string, unknown>): string[] => {
  const ev = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
  const usage = anthropicUsage(s);
  const out = [
    ev({
      type: 'message_start',
      message: {
        id: `msg_mock${++messageSeq}`,
        type: 'message',
        role: 'assistant',
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
    ev({ type: 'ping' }),
  ];
  const thinking = anthropicThinking(body, s.reasoning);
  if (thinking !== undefined) {
    out.push(ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    for (const w of split(thinking))
      out.push(ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: w } }));
    out.push(ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: mockSignature(thinking) } }));
    out.push(ev({ type: 'content_block_stop', index: 0 }));
  }
  const index = thinking === undefined ? 0 : 1;
  if (s.toolCall) {
    out.push(
      ev({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: s.toolCall.id, name: s.toolCall.name, input: {} } }),
    );
    const a = s.toolCall.arguments;
    const mid = Math.floor(a.length / 2);
    for (const part of [a.slice(0, mid), a.slice(mid)])
      out.push(ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } }));
  } else {
    out.push(ev({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    for (const w of s.textChunks ?? split(s.text ?? ''))
      out.push(ev({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: w } }));
  }
  out.push(ev({ type: 'content_block_stop', index }));
  out.push(
    ev({
      type: 'message_delta',
      delta: { stop_reason: s.toolCall ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
  );
  out.push(ev({ type: 'message_stop' }));
  return out;
};

// ---- extra endpoints (OpenAI wire) -------------------------------------------------------------

const extraAnswer = (path: string, body: Record<string, unknown>): Response => {
  const model = String(body.model ?? 'unknown');
  if (path.endsWith('/embeddings')) {
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    return Response.json({
      object: 'list',
      data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })),
      model,
      usage: { prompt_tokens: 4 * inputs.length, total_tokens: 4 * inputs.length },
    });
  }
  if (path.endsWith('/audio/speech'))
    return new Response(new Uint8Array([0x49, 0x44, 0x33, 1, 2, 3]), { headers: { 'content-type': 'audio/mpeg' } });
  if (path.endsWith('/images/generations'))
    return Response.json({ created: 1_700_000_000, data: [{ url: 'https://example.invalid/cat.png' }] });
  if (path.endsWith('/completions')) {
    return Response.json({
      id: 'cmpl-1',
      object: 'text_completion',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, text: ' world', logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
    });
  }
  if (path.endsWith('/rerank'))
    return Response.json({
      id: 'rr-1',
      results: [
        { index: 1, relevance_score: 0.9 },
        { index: 0, relevance_score: 0.1 },
      ],
    });
  return new Response('{"error":{"message":"not found","type":"invalid_request_error"}}', { status: 404 });
};

// ---- what the real APIs refuse -----------------------------------------------------------------

/** The mock models' output limit (both families), as the real APIs enforce theirs. */
export const MOCK_MAX_OUTPUT_TOKENS = 64000;

const invalid = (kind: 'openai' | 'anthropic', message: string, param: string | null = null): Response =>
  Response.json(
    kind === 'openai'
      ? { error: { message, type: 'invalid_request_error', param, code: null } }
      : { type: 'error', error: { type: 'invalid_request_error', message } },
    { status: 400 },
  );

type Msg = { role?: string; content?: unknown; tool_calls?: { id?: string }[]; tool_call_id?: string };

/** A request the real API answers with 400, or undefined. */
const refusal = (kind: 'openai' | 'anthropic', path: string, body: Record<string, unknown>): Response | undefined => {
  if (!path.endsWith('/chat/completions') && !path.endsWith('/v1/messages')) return undefined;
  const messages = (body.messages as Msg[] | undefined) ?? [];
  if (kind === 'anthropic') {
    if (typeof body.max_tokens !== 'number') return invalid(kind, 'max_tokens: Field required');
    if (body.max_tokens > MOCK_MAX_OUTPUT_TOKENS)
      return invalid(
        kind,
        `max_tokens: ${body.max_tokens} > ${MOCK_MAX_OUTPUT_TOKENS}, which is the maximum allowed number of output tokens for this model`,
      );
    if (body.thread !== undefined) return invalid(kind, 'thread: Extra inputs are not permitted');
    const badBlock = anthropicContentRefusal(messages);
    if (badBlock) return invalid(kind, badBlock);
    const thinkingRefused = anthropicThinkingRefusal(body);
    if (thinkingRefused !== undefined) return invalid(kind, thinkingRefused);
    // With thinking on, an assistant turn that used a tool must start with its (signed) thinking block.
    const thinking = (body.thinking as { type?: string } | undefined)?.type === 'enabled';
    for (let i = 0; thinking && i < messages.length; i++) {
      const m = messages[i];
      const blocks = Array.isArray(m?.content) ? (m.content as { type?: string; signature?: unknown }[]) : [];
      if (m?.role !== 'assistant' || !blocks.some((b) => b.type === 'tool_use')) continue;
      const first = blocks[0];
      if (first?.type === 'thinking' && typeof first.signature !== 'string')
        return invalid(kind, `messages.${i}.content.0.thinking.signature: Field required`);
      if (first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
        return invalid(
          kind,
          `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`,
        );
      }
    }
    for (let i = 0; i < messages.length; i++) {
      const content = messages[i]?.content;
      if (!Array.isArray(content)) continue;
      const prev = messages[i - 1]?.content;
      const uses = new Set(
        Array.isArray(prev) ? (prev as { type?: string; id?: string }[]).filter((b) => b.type === 'tool_use').map((b) => b.id) : [],
      );
      for (const b of content as { type?: string; tool_use_id?: string }[]) {
        if (b.type === 'tool_result' && !uses.has(b.tool_use_id)) {
          return invalid(
            kind,
            `messages.${i}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          );
        }
      }
    }
    return undefined;
  }
  const reasoningRefused = openaiReasoningRefusal(body);
  if (reasoningRefused !== undefined) return invalid(kind, reasoningRefused);
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (typeof max === 'number' && max > MOCK_MAX_OUTPUT_TOKENS)
    return invalid(kind, `max_tokens is too large: ${max}. This model supports at most ${MOCK_MAX_OUTPUT_TOKENS} completion tokens.`);
  const badPart = chatContentRefusal(messages);
  if (badPart) return invalid(kind, badPart[0], badPart[1]);
  const calls = new Set<string | undefined>();
  for (const m of messages) {
    for (const c of m.tool_calls ?? []) calls.add(c.id);
    if (m.role === 'tool' && !calls.has(m.tool_call_id)) {
      return invalid(kind, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.");
    }
  }
  return undefined;
};

// ---- server ------------------------------------------------------------------------------------

export interface MockUpstream {
  url: string;
  requests: Recorded[];
  /** Replace the behaviour (default: echo-like text, tool call on "call NAME ARGS"). */
  script(s: Script | undefined): void;
  /** Requests whose client went away before the stream ended. */
  cancelled: number;
  stop(): void;
}

export const startMockUpstream = (kind: 'openai' | 'anthropic'): MockUpstream => {
  let script: Script = defaultScript(kind);
  const state = { cancelled: 0 };
  const requests: Recorded[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const { pathname: path, search } = new URL(req.url);
      const body = (await req.json().catch(() => ({}))) as Record<string, unknown>;
      const rec: Recorded = { path, search, headers: Object.fromEntries(req.headers.entries()), body };
      requests.push(rec);
      const responses = kind === 'openai' && isResponsesPath(path);
      const s = script(responses ? responsesView(rec) : rec);
      if (s.delayMs) await sleep(s.delayMs);
      const model = String(body.model ?? 'unknown');
      if (kind === 'anthropic' && path.endsWith('/v1/messages/count_tokens')) {
        if (body.max_tokens !== undefined) return invalid(kind, 'max_tokens: Extra inputs are not permitted');
        return Response.json({ input_tokens: 1234 });
      }
      const refused = s.status ? undefined : responses ? responsesRefusal(body, MOCK_MAX_OUTPUT_TOKENS) : refusal(kind, path, body);
      if (refused) return refused;
      if (kind === 'openai' && !responses && !path.endsWith('/chat/completions') && !(s.status && s.status >= 400))
        return extraAnswer(path, body);
      if (s.status && s.status >= 400)
        return new Response(s.errorBody ?? '', { status: s.status, headers: { 'content-type': 'application/json', ...s.headers } });
      if (s.raw !== undefined)
        return new Response(s.raw, { headers: { 'content-type': body.stream ? 'text/event-stream' : 'application/json' } });
      if (!body.stream) {
        const json = responses
          ? responsesBody(model, s, body)
          : kind === 'openai'
            ? openaiBody(model, s, body)
            : anthropicBody(model, s, body);
        return Response.json(json, { headers: s.headers });
      }
      const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      let chunks = responses
        ? responsesEvents(model, s, body, s.midStreamError)
        : kind === 'openai'
          ? openaiChunks(model, s, includeUsage, body)
          : anthropicEvents(model, s, body);
      if (s.midStreamError && !responses) {
        const err =
          kind === 'openai'
            ? `data: ${JSON.stringify({ error: { message: 'upstream exploded', type: 'server_error', param: null, code: null } })}\n\n`
            : `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`;
        chunks = [...chunks.slice(0, 3), err];
      }
      if (s.cutAfter !== undefined) chunks = chunks.slice(0, s.cutAfter);
      const enc = new TextEncoder();
      let i = 0;
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (i >= chunks.length) {
            controller.close();
            return;
          }
          if (s.chunkDelayMs && i > 0) await sleep(s.chunkDelayMs);
          controller.enqueue(enc.encode(chunks[i++] as string));
        },
        cancel() {
          state.cancelled++;
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/event-stream', ...s.headers } });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    script: (s) => {
      script = s ?? defaultScript(kind);
    },
    get cancelled() {
      return state.cancelled;
    },
    stop: () => server.stop(true),
  };
};
