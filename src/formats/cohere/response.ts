/** Canonical response → Cohere v2 chat response, and Cohere's error body. */
import type { CanonicalResponse, FinishReason, JsonObject, ToolCall, Usage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import type { EncodeContext } from '../types.ts';

/** Cohere has no content-filter finish reason: a filtered answer ends with ERROR. */
const FINISH: Record<FinishReason, string> = { stop: 'COMPLETE', length: 'MAX_TOKENS', tool_calls: 'TOOL_CALL', content_filter: 'ERROR' };

export const cohereFinishReason = (r: FinishReason): string => FINISH[r];

/** `usage.tokens` and `usage.billed_units` (the same counts: the gateway bills what was used); cached input apart. */
export const cohereUsage = (u: Usage): JsonObject => {
  const counts = { input_tokens: u.inputTokens, output_tokens: u.outputTokens };
  return { billed_units: counts, tokens: counts, ...(u.cachedInputTokens ? { cached_tokens: u.cachedInputTokens } : {}) };
};

export const cohereToolCall = (c: ToolCall): JsonObject => ({
  id: c.id,
  type: 'function',
  function: { name: c.name, arguments: c.arguments },
});

export const cohereId = (id: string, ctx: EncodeContext): string => (id !== '' ? id : ctx.requestId);

export const encodeCohereResponse = (res: CanonicalResponse, ctx: EncodeContext): JsonObject => {
  const content: JsonObject[] = [];
  if (res.reasoning !== undefined && res.reasoning !== '') content.push({ type: 'thinking', thinking: res.reasoning });
  if (res.text !== '') content.push({ type: 'text', text: res.text });
  const message: JsonObject = { role: 'assistant' };
  if (content.length > 0) message['content'] = content;
  if (res.toolCalls.length > 0) message['tool_calls'] = res.toolCalls.map(cohereToolCall);
  return { id: cohereId(res.id, ctx), finish_reason: cohereFinishReason(res.finishReason), message, usage: cohereUsage(res.usage) };
};

/** `{message}`, as Cohere answers a refused request (the SDK names the error after the HTTP status). */
export const encodeCohereError = (error: GatewayError): JsonObject => ({
  message: error.param && !error.message.includes(error.param) ? `${error.message} (field: ${error.param})` : error.message,
});
