/** Canonical response → OpenAI Responses `response` object (shared with the stream's lifecycle events). */
import type { CanonicalResponse, FinishReason, JsonObject, JsonValue, ToolCall, Usage } from '../../canonical/types.ts';
import { cachedTokens, idSuffix, prefixedId, reasoningTokens, sealThinking } from '../shared.ts';
import type { EncodeContext } from '../types.ts';

export const responsesUsage = (u: Usage): JsonObject => ({
  input_tokens: u.inputTokens,
  output_tokens: u.outputTokens,
  total_tokens: u.inputTokens + u.outputTokens,
  input_tokens_details: { cached_tokens: cachedTokens(u) },
  output_tokens_details: { reasoning_tokens: reasoningTokens(u) },
});

export const responseId = (id: string, ctx: EncodeContext): string => prefixedId(id, 'resp_', ctx);

/** Output item ids: `msg_<hex>` (then `msg_<hex>_1`…) and `fc_<hex>_<tool index>`. */
export const messageItemId = (ctx: EncodeContext, n: number): string => `msg_${idSuffix(ctx)}${n === 0 ? '' : `_${n}`}`;
export const functionItemId = (ctx: EncodeContext, toolIndex: number): string => `fc_${idSuffix(ctx)}_${toolIndex}`;
export const reasoningItemId = (ctx: EncodeContext, n: number): string => `rs_${idSuffix(ctx)}${n === 0 ? '' : `_${n}`}`;

export const summaryTextPart = (text: string): JsonObject => ({ type: 'summary_text', text });

/**
 * The upstream's reasoning as a reasoning item: its text as the summary (what clients display;
 * Claude's thinking is itself a summary), and, when the upstream signed it, the signed thinking in
 * `encrypted_content` (shared.ts sealThinking) so that replaying the item sends it back.
 */
export const reasoningItem = (
  id: string,
  text: string,
  signature: string | undefined,
  status: 'in_progress' | 'completed',
): JsonObject => ({
  id,
  type: 'reasoning',
  summary: status === 'completed' && text !== '' ? [summaryTextPart(text)] : [],
  ...(status === 'completed' && signature !== undefined && signature !== ''
    ? { encrypted_content: sealThinking({ text, signature }) }
    : {}),
});

export const outputTextPart = (text: string): JsonObject => ({ type: 'output_text', text, annotations: [] });

export const messageItem = (id: string, text: string, status: 'in_progress' | 'completed'): JsonObject => ({
  id,
  type: 'message',
  status,
  role: 'assistant',
  content: status === 'completed' ? [outputTextPart(text)] : [],
});

export const functionCallItem = (id: string, call: ToolCall, status: 'in_progress' | 'completed'): JsonObject => ({
  id,
  type: 'function_call',
  status,
  call_id: call.id,
  name: call.name,
  arguments: call.arguments,
});

export interface ResponseObjectInit {
  id: string;
  createdAt: number;
  model: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  finishReason?: FinishReason;
  output: JsonObject[];
  /** Aggregated text; omitted from the object when undefined (in-progress snapshots). */
  outputText?: string;
  usage: Usage | null;
  /** Members set as given (EncodeContext.responseFields). */
  fields?: JsonObject;
}

/** `length` and `content_filter` end a response as `incomplete`; everything else `completed`. */
export const finalStatus = (reason: FinishReason): { status: 'completed' | 'incomplete'; incomplete: JsonValue } => {
  if (reason === 'length') return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
  if (reason === 'content_filter') return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
  return { status: 'completed', incomplete: null };
};

/** The full `response` object with the defaults the official SDK expects. */
export const responseObject = (init: ResponseObjectInit): JsonObject => {
  const incomplete = init.finishReason && init.status !== 'in_progress' ? finalStatus(init.finishReason).incomplete : null;
  const obj: JsonObject = {
    id: init.id,
    object: 'response',
    created_at: init.createdAt,
    status: init.status,
    background: false,
    error: null,
    incomplete_details: incomplete,
    instructions: null,
    max_output_tokens: null,
    metadata: {},
    model: init.model,
    output: init.output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: init.usage ? responsesUsage(init.usage) : null,
    user: null,
  };
  if (init.outputText !== undefined) obj.output_text = init.outputText;
  if (init.fields) Object.assign(obj, init.fields);
  return obj;
};

export const encodeResponsesResponse = (res: CanonicalResponse, ctx: EncodeContext): JsonObject => {
  const output: JsonObject[] = [];
  if (res.reasoning !== undefined && res.reasoning !== '')
    output.push(reasoningItem(reasoningItemId(ctx, 0), res.reasoning, res.reasoningSignature, 'completed'));
  if (res.text !== '') output.push(messageItem(messageItemId(ctx, 0), res.text, 'completed'));
  for (const [i, call] of res.toolCalls.entries()) output.push(functionCallItem(functionItemId(ctx, i), call, 'completed'));
  return responseObject({
    id: responseId(res.id, ctx),
    createdAt: res.created,
    model: ctx.model,
    status: finalStatus(res.finishReason).status,
    finishReason: res.finishReason,
    output,
    outputText: res.text,
    usage: res.usage,
    ...(ctx.responseFields ? { fields: ctx.responseFields } : {}),
  });
};
