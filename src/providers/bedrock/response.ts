/** Bedrock Converse response body → CanonicalResponse (plus the shared field readers). */
import type { CanonicalResponse, FinishReason, ToolCall, Usage } from '../../canonical/types.ts';
import { asArray, asNumber, asRecord, asString, isRecord, parseJson } from '../json.ts';
import { mapStopReason, stopReasons } from '../stop-reason.ts';
import { badGateway } from '../upstream-error.ts';
import { JSON_TOOL } from './request.ts';

/** Converse `stopReason`s; end_turn, stop_sequence, malformed_* and anything new mean `stop`. */
export const CONVERSE_STOP_REASONS = stopReasons({
  length: ['max_tokens', 'model_context_window_exceeded'],
  tool_calls: ['tool_use'],
  content_filter: ['guardrail_intervened', 'content_filtered'],
});

/**
 * Converse `TokenUsage` → canonical. `inputTokens` excludes cache reads and writes (as on
 * Anthropic), so the canonical input is their sum.
 */
export const parseConverseUsage = (u: unknown): Usage | undefined => {
  const o = asRecord(u);
  if (!o) return undefined;
  const input = asNumber(o['inputTokens']);
  const output = asNumber(o['outputTokens']);
  if (input === undefined && output === undefined) return undefined;
  const cacheRead = asNumber(o['cacheReadInputTokens']);
  const cacheWrite = asNumber(o['cacheWriteInputTokens']);
  const usage: Usage = { inputTokens: (input ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0), outputTokens: output ?? 0 };
  if (cacheRead !== undefined) usage.cachedInputTokens = cacheRead;
  if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite;
  return usage;
};

export const parseConverseResponse = (provider: string, body: string): CanonicalResponse => {
  const parsed = parseJson(body);
  if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'returned a response that is not JSON.', body);
  const o = parsed.value;
  const content = asArray(asRecord(asRecord(o['output'])?.['message'])?.['content']);
  if (!content) throw badGateway(provider, 'returned a response without output.message.content.', body);
  let text = '';
  let reasoning = '';
  let jsonMode = false;
  const toolCalls: ToolCall[] = [];
  for (const item of content) {
    const b = asRecord(item);
    if (!b) continue;
    const t = asString(b['text']);
    if (t !== undefined) text += t;
    const r = asRecord(asRecord(b['reasoningContent'])?.['reasoningText']);
    if (r) reasoning += asString(r['text']) ?? '';
    const use = asRecord(b['toolUse']);
    if (use) {
      const name = asString(use['name']) ?? '';
      const args = JSON.stringify(use['input'] ?? {});
      if (name === JSON_TOOL) {
        jsonMode = true;
        text += args;
      } else {
        toolCalls.push({ id: asString(use['toolUseId']) ?? `tooluse_${toolCalls.length}`, name, arguments: args });
      }
    }
  }
  const stop = asString(o['stopReason']);
  let finishReason: FinishReason =
    stop !== undefined ? mapStopReason(CONVERSE_STOP_REASONS, stop) : toolCalls.length > 0 ? 'tool_calls' : 'stop';
  if (jsonMode && finishReason === 'tool_calls' && toolCalls.length === 0) finishReason = 'stop';
  const response: CanonicalResponse = {
    id: '',
    model: '',
    created: Math.floor(Date.now() / 1000),
    text,
    toolCalls,
    finishReason,
    usage: parseConverseUsage(o['usage']) ?? { inputTokens: 0, outputTokens: 0 },
  };
  if (reasoning !== '') response.reasoning = reasoning;
  return response;
};
