/** Anthropic Messages non-stream body → CanonicalResponse (plus shared field readers). */
import type { CanonicalResponse, ToolCall, Usage } from '../../canonical/types.ts';
import { asArray, asNumber, asRecord, asString, isRecord, parseJson } from '../json.ts';
import { mapStopReason, stopReasons } from '../stop-reason.ts';
import { badGateway } from '../upstream-error.ts';
import { anthropicInStreamError } from './errors.ts';

/** Anthropic `stop_reason`s; end_turn, stop_sequence, pause_turn and anything new mean `stop`. */
export const ANTHROPIC_STOP_REASONS = stopReasons({
  length: ['max_tokens', 'model_context_window_exceeded'],
  tool_calls: ['tool_use'],
  content_filter: ['refusal'],
});

/** Raw Anthropic usage numbers; `undefined` where the upstream sent null or nothing. */
export interface RawAnthropicUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  thinking?: number;
}

export const readRawUsage = (u: unknown): RawAnthropicUsage => {
  const o = asRecord(u) ?? {};
  return {
    input: asNumber(o['input_tokens']),
    output: asNumber(o['output_tokens']),
    cacheRead: asNumber(o['cache_read_input_tokens']),
    cacheWrite: asNumber(o['cache_creation_input_tokens']),
    thinking: asNumber(asRecord(o['output_tokens_details'])?.['thinking_tokens']),
  };
};

/** Later non-null values win (message_delta usage is cumulative). */
export const mergeRawUsage = (base: RawAnthropicUsage, next: RawAnthropicUsage): RawAnthropicUsage => ({
  input: next.input ?? base.input,
  output: next.output ?? base.output,
  cacheRead: next.cacheRead ?? base.cacheRead,
  cacheWrite: next.cacheWrite ?? base.cacheWrite,
  thinking: next.thinking ?? base.thinking,
});

/** Canonical usage: input = uncached + cache writes + cache reads (Anthropic's own definition of total input). */
export const toUsage = (r: RawAnthropicUsage): Usage => {
  const usage: Usage = {
    inputTokens: (r.input ?? 0) + (r.cacheWrite ?? 0) + (r.cacheRead ?? 0),
    outputTokens: r.output ?? 0,
  };
  if (r.cacheRead !== undefined) usage.cachedInputTokens = r.cacheRead;
  if (r.cacheWrite !== undefined) usage.cacheWriteTokens = r.cacheWrite;
  if (r.thinking !== undefined) usage.reasoningTokens = r.thinking;
  return usage;
};

export const parseMessagesResponse = (provider: string, body: string): CanonicalResponse => {
  const parsed = parseJson(body);
  if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'returned a response that is not JSON.', body);
  const o = parsed.value;
  if (o['type'] === 'error') {
    const e = asRecord(o['error']);
    throw anthropicInStreamError(provider, body, asString(e?.['message']), asString(e?.['type']));
  }
  const content = asArray(o['content']);
  if (!content) throw badGateway(provider, 'returned a response without content.', body);

  let text = '';
  let reasoning = '';
  let signature = '';
  const toolCalls: ToolCall[] = [];
  for (const item of content) {
    const b = asRecord(item);
    if (!b) continue;
    if (b['type'] === 'text') text += asString(b['text']) ?? '';
    else if (b['type'] === 'thinking') {
      reasoning += asString(b['thinking']) ?? '';
      signature = asString(b['signature']) ?? signature;
    } else if (b['type'] === 'tool_use') {
      toolCalls.push({
        id: asString(b['id']) ?? `toolu_${toolCalls.length}`,
        name: asString(b['name']) ?? '',
        arguments: JSON.stringify(b['input'] ?? {}),
      });
    }
  }
  const stop = asString(o['stop_reason']);
  const response: CanonicalResponse = {
    id: asString(o['id']) ?? '',
    model: asString(o['model']) ?? '',
    created: Math.floor(Date.now() / 1000),
    text,
    toolCalls,
    finishReason: stop !== undefined ? mapStopReason(ANTHROPIC_STOP_REASONS, stop) : toolCalls.length > 0 ? 'tool_calls' : 'stop',
    usage: toUsage(readRawUsage(o['usage'])),
  };
  if (reasoning !== '') response.reasoning = reasoning;
  if (signature !== '') response.reasoningSignature = signature;
  return response;
};
