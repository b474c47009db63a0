/**
 * Reasoning in the mock upstreams, as the real APIs behave: Anthropic answers a request with
 * `thinking` enabled with a signed thinking block first (streamed as thinking_delta and
 * signature_delta), and refuses what the real API refuses around it; OpenAI refuses
 * `max_tokens` on a reasoning model, and an OpenAI-compatible answer may carry `reasoning_content` (DeepSeek's) when scripted.
 */
import { isReasoningModel } from './mock-responses.ts';

type Obj = Record<string, unknown>;
type Block = { type?: string; thinking?: unknown; signature?: unknown };

/** The signature the mock gives a thinking text (checked when it comes back: a modified text is refused, as Anthropic does). */
export const mockSignature = (text: string): string => `sig-mock-${Buffer.from(text).toString('base64url')}`;

/** The thinking text of an answer to this request, or undefined when thinking is not enabled. */
export const anthropicThinking = (body: Obj, scripted: string | undefined): string | undefined =>
  (body.thinking as { type?: string } | undefined)?.type === 'enabled' ? (scripted ?? 'Let me think about that.') : undefined;

/** A thinking-related request the real Anthropic API answers with 400: its message, or undefined. */
export const anthropicThinkingRefusal = (body: Obj): string | undefined => {
  const thinking = body.thinking as { type?: string; budget_tokens?: unknown } | undefined;
  if (thinking?.type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (typeof budget !== 'number' || budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (typeof body.max_tokens === 'number' && body.max_tokens <= budget)
      return '`max_tokens` must be greater than `thinking.budget_tokens`.';
    if (body.temperature !== undefined && body.temperature !== 1) return '`temperature` may only be set to 1 when thinking is enabled.';
  }
  const messages = (body.messages as { role?: string; content?: unknown }[] | undefined) ?? [];
  for (const [i, m] of messages.entries()) {
    for (const [j, b] of (Array.isArray(m.content) ? (m.content as Block[]) : []).entries()) {
      if (b.type !== 'thinking' || typeof b.signature !== 'string' || !b.signature.startsWith('sig-mock-')) continue;
      if (b.signature !== mockSignature(String(b.thinking)))
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  return undefined;
};

/** A reasoning-related request the real OpenAI Chat Completions API answers with 400: its message, or undefined. */
export const openaiReasoningRefusal = (body: Obj): string | undefined => {
  const model = String(body.model ?? '');
  if (isReasoningModel(model) && body.max_tokens !== undefined)
    return "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
  return undefined;
};

/** Reasoning tokens an OpenAI reasoning model reports for this request (part of completion_tokens). */
export const openaiReasoningTokens = (body: Obj): number => (isReasoningModel(String(body.model ?? '')) ? 4 : 0);
