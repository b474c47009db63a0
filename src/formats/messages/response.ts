/** Canonical response → Anthropic Messages `message` body. */
import type { CanonicalResponse, FinishReason, JsonObject, Usage } from '../../canonical/types.ts';
import { argumentsObject, prefixedId, uncachedInputTokens } from '../shared.ts';
import type { EncodeContext } from '../types.ts';

const STOP_REASONS: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

export const stopReason = (reason: FinishReason): string => STOP_REASONS[reason];

export const messageId = (id: string, ctx: EncodeContext): string => prefixedId(id, 'msg_', ctx);

/** Anthropic usage: `input_tokens` excludes cache reads and writes, which are reported apart. */
export const messagesUsage = (u: Usage): JsonObject => ({
  input_tokens: uncachedInputTokens(u),
  output_tokens: u.outputTokens,
  cache_creation_input_tokens: u.cacheWriteTokens ?? 0,
  cache_read_input_tokens: u.cachedInputTokens ?? 0,
});

export const encodeMessagesResponse = (res: CanonicalResponse, ctx: EncodeContext): JsonObject => {
  const content: JsonObject[] = [];
  if (res.reasoning !== undefined && res.reasoning !== '')
    content.push({ type: 'thinking', thinking: res.reasoning, signature: res.reasoningSignature ?? '' });
  if (res.text !== '') content.push({ type: 'text', text: res.text });
  for (const call of res.toolCalls) {
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsObject(call.arguments) });
  }
  return {
    id: messageId(res.id, ctx),
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: stopReason(res.finishReason),
    stop_sequence: null,
    usage: messagesUsage(res.usage),
  };
};
