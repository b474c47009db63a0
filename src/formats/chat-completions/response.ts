/** Canonical response → OpenAI Chat Completions `chat.completion` body (and the shared usage shape). */
import type { CanonicalResponse, JsonObject, ToolCall, Usage } from '../../canonical/types.ts';
import { cachedTokens, idSuffix, reasoningTokens } from '../shared.ts';
import type { EncodeContext } from '../types.ts';

export const chatUsage = (u: Usage): JsonObject => ({
  prompt_tokens: u.inputTokens,
  completion_tokens: u.outputTokens,
  total_tokens: u.inputTokens + u.outputTokens,
  prompt_tokens_details: { cached_tokens: cachedTokens(u) },
  completion_tokens_details: { reasoning_tokens: reasoningTokens(u) },
});

/** The upstream id as-is (whatever its prefix), or one derived from the request id. */
export const chatId = (id: string, ctx: EncodeContext): string => (id !== '' ? id : `chatcmpl-${idSuffix(ctx)}`);

const toolCallJson = (c: ToolCall): JsonObject => ({
  id: c.id,
  type: 'function',
  function: { name: c.name, arguments: c.arguments },
});

export const encodeChatResponse = (res: CanonicalResponse, ctx: EncodeContext): JsonObject => {
  const message: JsonObject = {
    role: 'assistant',
    content: res.text === '' && res.toolCalls.length > 0 ? null : res.text,
    refusal: null,
  };
  // The model's reasoning as the non-standard `reasoning_content` (DeepSeek's; what OpenAI-compatible clients read).
  if (res.reasoning !== undefined && res.reasoning !== '') message.reasoning_content = res.reasoning;
  if (res.toolCalls.length > 0) message.tool_calls = res.toolCalls.map(toolCallJson);
  return {
    id: chatId(res.id, ctx),
    object: 'chat.completion',
    created: res.created,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: res.finishReason }],
    usage: chatUsage(res.usage),
  };
};
