/**
 * The OpenAI Responses wire (`POST /v1/responses`) for the mock OpenAI upstream: JSON answers and
 * the real SSE event sequence, and the refusals of the real API that matter to a gateway (unknown
 * parameters, server-side state with `store: false`, encrypted reasoning on a non-reasoning model,
 * tool outputs without their call).
 */
import { responsesFileRefusal } from './mock-content.ts';
import type { Recorded, Scripted } from './mock-upstreams.ts';

type Obj = Record<string, unknown>;

/** Every top-level parameter `POST /v1/responses` documents; anything else is refused. */
export const RESPONSES_PARAMS = new Set([
  'background',
  'conversation',
  'include',
  'input',
  'instructions',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'model',
  'parallel_tool_calls',
  'previous_response_id',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_retention',
  'reasoning',
  'safety_identifier',
  'service_tier',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'user',
]);

export const isResponsesPath = (path: string): boolean => path.endsWith('/responses');

/** Reasoning models of the mock (they answer with a reasoning item and accept encrypted reasoning). */
export const isReasoningModel = (model: string): boolean => /^(o\d|gpt-5(?!-chat))/.test(model);

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const err = (status: number, message: string, param: string | null, code: string | null = null): Response =>
  Response.json({ error: { message, type: 'invalid_request_error', param, code } }, { status });

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
};

/** The request as Chat-like messages, so the shared default script can answer it. */
export const responsesView = (rec: Recorded): Recorded => {
  const input = rec.body.input;
  const messages: Obj[] = [];
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  for (const item of Array.isArray(input) ? input : []) {
    if (!isObj(item)) continue;
    const type = item.type ?? 'message';
    if (type === 'message') messages.push({ role: item.role, content: textOf(item.content) });
    else if (type === 'function_call')
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: item.call_id, type: 'function' }] });
    else if (type === 'function_call_output')
      messages.push({
        role: 'tool',
        tool_call_id: item.call_id,
        content: typeof item.output === 'string' ? item.output : JSON.stringify(item.output),
      });
  }
  return { ...rec, body: { ...rec.body, messages } };
};

/** A request the real Responses API refuses, or undefined. */
export const responsesRefusal = (body: Obj, maxOutput: number): Response | undefined => {
  for (const k of Object.keys(body)) if (!RESPONSES_PARAMS.has(k)) return err(400, `Unknown parameter: '${k}'.`, k, 'unknown_parameter');
  const model = String(body.model ?? '');
  const store = body.store !== false;
  if (typeof body.previous_response_id === 'string')
    return err(
      400,
      `Previous response with id '${body.previous_response_id}' not found.`,
      'previous_response_id',
      'previous_response_not_found',
    );
  const include = Array.isArray(body.include) ? body.include : [];
  if (include.includes('reasoning.encrypted_content') && !isReasoningModel(model))
    return err(400, 'Encrypted content is not supported with this model.', 'include');
  if (typeof body.max_output_tokens === 'number' && body.max_output_tokens > maxOutput)
    return err(400, `max_output_tokens is too large: ${body.max_output_tokens}.`, 'max_output_tokens');
  const badFile = responsesFileRefusal(body.input);
  if (badFile) return err(400, badFile[0], badFile[1]);
  const calls = new Set<unknown>();
  const input = Array.isArray(body.input) ? body.input : [];
  for (let i = 0; i < input.length; i++) {
    const item = input[i];
    if (!isObj(item)) continue;
    if (item.type === 'item_reference') return err(404, `Item with id '${String(item.id)}' not found.`, `input[${i}]`);
    if (item.type === 'reasoning' && !store && typeof item.encrypted_content !== 'string') {
      return err(
        404,
        `Item with id '${String(item.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
        'input',
      );
    }
    if (item.type === 'function_call') calls.add(item.call_id);
    if (item.type === 'function_call_output' && !calls.has(item.call_id))
      return err(400, `No tool call found for function call output with call_id ${String(item.call_id)}.`, 'input');
  }
  return undefined;
};

let seq = 0;

const usageOf = (s: Scripted, reasoning: number) => ({
  input_tokens: s.usage?.input ?? 0,
  input_tokens_details: { cached_tokens: s.usage?.cacheRead ?? 0 },
  output_tokens: s.usage?.output ?? 0,
  output_tokens_details: { reasoning_tokens: reasoning },
  total_tokens: (s.usage?.input ?? 0) + (s.usage?.output ?? 0),
});

interface Answer {
  response: (status: 'in_progress' | 'completed', output: Obj[]) => Obj;
  output: Obj[];
}

const answerOf = (requested: string, s: Scripted, body: Obj): Answer => {
  const n = ++seq;
  // OpenAI answers with the dated snapshot of an alias.
  const model = requested === 'o4-mini' ? 'o4-mini-2025-04-16' : requested;
  const reasoning = isReasoningModel(requested);
  const encrypted = Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');
  const output: Obj[] = [];
  if (reasoning)
    output.push({ id: `rs_mock${n}`, type: 'reasoning', summary: [], ...(encrypted ? { encrypted_content: `gAAAAB-mock-${n}` } : {}) });
  if (s.toolCall)
    output.push({
      id: `fc_mock${n}`,
      type: 'function_call',
      status: 'completed',
      arguments: s.toolCall.arguments,
      call_id: s.toolCall.id,
      name: s.toolCall.name,
    });
  else
    output.push({
      id: `msg_mock${n}`,
      type: 'message',
      status: 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: s.text ?? '' }],
      role: 'assistant',
    });
  const response = (status: 'in_progress' | 'completed', out: Obj[]): Obj => ({
    id: `resp_mock${n}`,
    object: 'response',
    created_at: 1_700_000_000,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model,
    output: out,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: reasoning ? 'medium' : null, summary: null },
    service_tier: body.service_tier ?? 'default',
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: status === 'completed' ? usageOf(s, reasoning ? 4 : 0) : null,
    user: null,
  });
  return { response, output };
};

export const responsesBody = (model: string, s: Scripted, body: Obj): Obj => {
  const a = answerOf(model, s, body);
  return a.response('completed', a.output);
};

const split = (text: string): string[] => text.match(/\S+\s*/g) ?? [text];

/** The SSE events of one answer, as the real API sends them (`event:` + `data:` with a sequence number). */
export const responsesEvents = (model: string, s: Scripted, body: Obj, failMidway = false): string[] => {
  const a = answerOf(model, s, body);
  let n = 0;
  const ev = (type: string, data: Obj) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n++, ...data })}\n\n`;
  const out = [
    ev('response.created', { response: a.response('in_progress', []) }),
    ev('response.in_progress', { response: a.response('in_progress', []) }),
  ];
  a.output.forEach((item, i) => {
    if (item.type === 'message') {
      const text = s.text ?? '';
      out.push(ev('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', content: [] } }));
      const where = { item_id: item.id, output_index: i, content_index: 0 };
      out.push(ev('response.content_part.added', { ...where, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } }));
      for (const d of s.textChunks ?? split(text)) out.push(ev('response.output_text.delta', { ...where, delta: d, logprobs: [] }));
      out.push(ev('response.output_text.done', { ...where, text, logprobs: [] }));
      out.push(ev('response.content_part.done', { ...where, part: { type: 'output_text', annotations: [], logprobs: [], text } }));
    } else if (item.type === 'function_call') {
      const args = String(item.arguments);
      out.push(ev('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', arguments: '' } }));
      const mid = Math.floor(args.length / 2);
      for (const d of [args.slice(0, mid), args.slice(mid)])
        out.push(ev('response.function_call_arguments.delta', { item_id: item.id, output_index: i, delta: d }));
      out.push(ev('response.function_call_arguments.done', { item_id: item.id, output_index: i, arguments: args }));
    } else out.push(ev('response.output_item.added', { output_index: i, item }));
    out.push(ev('response.output_item.done', { output_index: i, item }));
  });
  if (failMidway) {
    const failed = { ...a.response('in_progress', []), status: 'failed', error: { code: 'server_error', message: 'upstream exploded' } };
    return [...out.slice(0, 4), ev('response.failed', { response: failed })];
  }
  out.push(ev('response.completed', { response: a.response('completed', a.output) }));
  return out;
};
