/** Small helpers shared by the three client formats. */
import type { ContentPart, FinishReason, JsonObject, Reasoning, StreamEvent, Usage } from '../canonical/types.ts';
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

/** What a block-structured encoder (Messages, Responses) holds until end(). */
export interface HeldState {
  /** OpenAI-style upstreams send usage after the finish reason, so both wait for end(). */
  finishReason: FinishReason;
  usage: Usage | undefined;
}

/** The encoder-specific parts of a block-structured stream encoder. */
export interface BlockHooks {
  start(upstreamId?: string): string;
  text(text: string): string;
  toolStart(index: number, id: string, name: string): string;
  toolDelta(index: number, fragment: string): string;
  reasoning(text: string): string;
  reasoningSignature(signature: string): string;
}

/** Routes one canonical event to the hooks; finish and usage are held. */
export const pushBlockEvent = (event: StreamEvent, hooks: BlockHooks, held: HeldState): string => {
  switch (event.type) {
    case 'start':
      if (event.usage) held.usage = event.usage;
      return hooks.start(event.id);
    case 'text':
      return event.text === '' ? hooks.start() : hooks.text(event.text);
    case 'reasoning':
      return event.text === '' ? hooks.start() : hooks.reasoning(event.text);
    case 'reasoning_signature':
      return hooks.reasoningSignature(event.signature);
    case 'tool_call_start':
      return hooks.toolStart(event.index, event.id, event.name);
    case 'tool_call_delta':
      return event.arguments === '' ? hooks.start() : hooks.toolDelta(event.index, event.arguments);
    case 'finish':
      held.finishReason = event.reason;
      return hooks.start();
    case 'usage':
      held.usage = event.usage;
      return hooks.start();
  }
};

/**
 * Signed reasoning (Anthropic thinking) carried through a Responses reasoning item's
 * `encrypted_content`, so that a client replaying the item (or `previous_response_id`) sends the
 * thinking back signed, as Anthropic requires on tool-use turns. Marked, so that OpenAI's own
 * encrypted reasoning is never mistaken for it.
 */
const THINKING_MARK = 'gw-thinking.';

export const sealThinking = (r: Reasoning): string =>
  THINKING_MARK + Buffer.from(JSON.stringify([r.text, r.signature])).toString('base64url');

export const openThinking = (sealed: string): Reasoning | undefined => {
  if (!sealed.startsWith(THINKING_MARK)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(sealed.slice(THINKING_MARK.length), 'base64url').toString('utf8'));
    if (Array.isArray(v) && typeof v[0] === 'string' && typeof v[1] === 'string') return { text: v[0], signature: v[1] };
  } catch {
    // not ours after all: ignored like any other opaque reasoning
  }
  return undefined;
};
