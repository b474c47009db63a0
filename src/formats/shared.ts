/** Small helpers shared by the three client formats. */
import type { ContentPart, JsonObject, Usage } from '../canonical/types.ts';
import type { EncodeContext } from './types.ts';

/** The request id without dashes, for ids like `resp_<hex>`. */
export const idSuffix = (ctx: EncodeContext): string => ctx.requestId.replace(/-/g, '');

/** Keeps `id` when it already carries the format's prefix, else derives one from the request id. */
export const prefixedId = (id: string, prefix: string, ctx: EncodeContext): string =>
  id.startsWith(prefix) ? id : `${prefix}${idSuffix(ctx)}`;

export const nowSeconds = (ctx: EncodeContext): number => ctx.created ?? Math.floor(Date.now() / 1000);

/** One text part, or none for the empty string. */
export const textParts = (text: string): ContentPart[] => (text === '' ? [] : [{ type: 'text', text }]);

/** Tool-call arguments as an object (Messages `tool_use.input`); `{}` when not a JSON object. */
export const argumentsObject = (args: string): JsonObject => {
  try {
    const v: unknown = JSON.parse(args);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as JsonObject;
  } catch {
    // fall through: partial or invalid JSON from the model
  }
  return {};
};

/** OpenAI-family usage details: cached input and reasoning output, zero when unknown. */
export const cachedTokens = (u: Usage): number => u.cachedInputTokens ?? 0;
export const reasoningTokens = (u: Usage): number => u.reasoningTokens ?? 0;

/** Anthropic `input_tokens` excludes cache reads and writes; never below zero. */
export const uncachedInputTokens = (u: Usage): number =>
  Math.max(0, u.inputTokens - (u.cachedInputTokens ?? 0) - (u.cacheWriteTokens ?? 0));
