/** The mock upstream's answers (bench/mock-upstream.ts): real wire-format bodies and SSE events of a given size. */

const FILLER = 'The quick brown fox jumps over the lazy dog while the gateway forwards every token it is given. ';
const PROMPT_TOKENS = 24;

const fill = (n: number): string => {
  let s = '';
  while (s.length < n) s += FILLER;
  return s.slice(0, Math.max(0, n));
};

/** Splits `text` into `n` non-empty pieces of similar size. */
const pieces = (text: string, n: number): string[] => {
  const count = Math.max(1, n);
  const size = Math.max(1, Math.ceil(text.length / count));
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(text.slice(i * size, (i + 1) * size) || '.');
  return out;
};

// ---- OpenAI Chat Completions -------------------------------------------------------------------

const openaiJson = (model: string, text: string, completionTokens: number): string =>
  JSON.stringify({
    id: 'chatcmpl-bench0000000000000000000001',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: PROMPT_TOKENS,
      completion_tokens: completionTokens,
      total_tokens: PROMPT_TOKENS + completionTokens,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
    system_fingerprint: 'fp_bench',
  });

/** A body of exactly `bytes` bytes (or the minimum possible when smaller). */
export const openaiBody = (model: string, bytes: number): string => {
  const base = openaiJson(model, '', 0).length;
  const text = fill(bytes - base);
  const tokens = Math.max(1, Math.round(text.length / 4));
  let body = openaiJson(model, text, tokens);
  // The token count's digits may shift the size by a character or two.
  if (body.length !== bytes) body = openaiJson(model, fill(text.length + bytes - body.length), tokens);
  return body;
};

/** `chunks` events: role, content deltas, finish, usage (when asked for), [DONE]. */
export const openaiEvents = (model: string, chunks: number, includeUsage: boolean): string[] => {
  const base = {
    id: 'chatcmpl-bench0000000000000000000001',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    system_fingerprint: 'fp_bench',
  };
  const frame = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) })}\n\n`;
  const deltas = Math.max(1, chunks - (includeUsage ? 4 : 3));
  const out = [frame({ role: 'assistant', content: '', refusal: null }, null)];
  for (const p of pieces(fill(deltas * 6), deltas)) out.push(frame({ content: p }, null));
  out.push(frame({}, 'stop'));
  if (includeUsage) {
    out.push(
      `data: ${JSON.stringify({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: PROMPT_TOKENS,
          completion_tokens: deltas,
          total_tokens: PROMPT_TOKENS + deltas,
          prompt_tokens_details: { cached_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0 },
        },
      })}\n\n`,
    );
  }
  out.push('data: [DONE]\n\n');
  return out;
};

// ---- Anthropic Messages ------------------------------------------------------------------------

const anthropicJson = (model: string, text: string, outputTokens: number): string =>
  JSON.stringify({
    id: 'msg_bench000000000000000001',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: PROMPT_TOKENS, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: outputTokens },
  });

export const anthropicBody = (model: string, bytes: number): string => {
  const base = anthropicJson(model, '', 0).length;
  const text = fill(bytes - base);
  const tokens = Math.max(1, Math.round(text.length / 4));
  let body = anthropicJson(model, text, tokens);
  if (body.length !== bytes) body = anthropicJson(model, fill(text.length + bytes - body.length), tokens);
  return body;
};

/** `chunks` events: message_start, content_block_start, deltas, content_block_stop, message_delta, message_stop. */
export const anthropicEvents = (model: string, chunks: number): string[] => {
  const ev = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
  const deltas = Math.max(1, chunks - 5);
  const out = [
    ev({
      type: 'message_start',
      message: {
        id: 'msg_bench000000000000000001',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: PROMPT_TOKENS, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
      },
    }),
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  ];
  for (const p of pieces(fill(deltas * 6), deltas))
    out.push(ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: p } }));
  out.push(ev({ type: 'content_block_stop', index: 0 }));
  out.push(ev({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: deltas } }));
  out.push(ev({ type: 'message_stop' }));
  return out;
};

// ---- OpenAI Responses --------------------------------------------------------------------------

const responsesObject = (model: string, status: string, output: unknown[], outputTokens: number | null): Record<string, unknown> => ({
  id: 'resp_bench00000000000000000000000001',
  object: 'response',
  created_at: 1_700_000_000,
  status,
  error: null,
  incomplete_details: null,
  model,
  output,
  store: false,
  usage:
    outputTokens === null
      ? null
      : {
          input_tokens: PROMPT_TOKENS,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: PROMPT_TOKENS + outputTokens,
        },
});

const responsesMessage = (text: string) => ({
  id: 'msg_bench0001',
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
});

export const responsesBody = (model: string, bytes: number): string => {
  const text = fill(Math.max(1, bytes - JSON.stringify(responsesObject(model, 'completed', [responsesMessage('')], 1)).length));
  return JSON.stringify(responsesObject(model, 'completed', [responsesMessage(text)], Math.max(1, Math.round(text.length / 4))));
};

/** `chunks` events: created, in_progress, item added, deltas, text done, item done, completed. */
export const responsesEvents = (model: string, chunks: number): string[] => {
  let seq = 0;
  const ev = (data: Record<string, unknown>) =>
    `event: ${String(data.type)}\ndata: ${JSON.stringify({ ...data, sequence_number: seq++ })}\n\n`;
  const deltas = Math.max(1, chunks - 6);
  const text = pieces(fill(deltas * 6), deltas);
  const where = { item_id: 'msg_bench0001', output_index: 0, content_index: 0 };
  const out = [
    ev({ type: 'response.created', response: responsesObject(model, 'in_progress', [], null) }),
    ev({ type: 'response.in_progress', response: responsesObject(model, 'in_progress', [], null) }),
    ev({ type: 'response.output_item.added', output_index: 0, item: { ...responsesMessage(''), status: 'in_progress', content: [] } }),
  ];
  for (const p of text) out.push(ev({ type: 'response.output_text.delta', ...where, delta: p }));
  out.push(ev({ type: 'response.output_text.done', ...where, text: text.join('') }));
  out.push(ev({ type: 'response.output_item.done', output_index: 0, item: responsesMessage(text.join('')) }));
  out.push(ev({ type: 'response.completed', response: responsesObject(model, 'completed', [responsesMessage(text.join(''))], deltas) }));
  return out;
};
