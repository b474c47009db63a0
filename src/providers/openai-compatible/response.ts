/** OpenAI Chat Completions non-stream body → CanonicalResponse (plus shared field readers). */
import type { CanonicalResponse, ToolCall, Usage } from '../../canonical/types.ts';
import { asArray, asNumber, asRecord, asString, isRecord, parseJson, type UnknownRecord } from '../json.ts';
import { mapStopReason, stopReasons } from '../stop-reason.ts';
import { badGateway, mapInStreamError } from '../upstream-error.ts';

/** OpenAI `finish_reason`s; `stop` and anything new mean `stop`. */
export const OPENAI_FINISH_REASONS = stopReasons({
  length: ['length'],
  tool_calls: ['tool_calls', 'function_call'],
  content_filter: ['content_filter'],
});

/** OpenAI `usage` (DeepSeek cache fields tolerated). Undefined when it is not a usage object. */
export const parseUsage = (u: unknown): Usage | undefined => {
  const o = asRecord(u);
  if (!o) return undefined;
  const input = asNumber(o['prompt_tokens']);
  const output = asNumber(o['completion_tokens']);
  if (input === undefined && output === undefined) return undefined;
  const usage: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const cached = asNumber(asRecord(o['prompt_tokens_details'])?.['cached_tokens']) ?? asNumber(o['prompt_cache_hit_tokens']);
  if (cached !== undefined) usage.cachedInputTokens = cached;
  const reasoning = asNumber(asRecord(o['completion_tokens_details'])?.['reasoning_tokens']);
  if (reasoning !== undefined) {
    usage.reasoningTokens = reasoning;
    // xAI counts reasoning outside completion_tokens (total = prompt + completion + reasoning);
    // canonical outputTokens always include reasoning.
    const total = asNumber(o['total_tokens']);
    if (reasoning > 0 && total !== undefined && total === usage.inputTokens + usage.outputTokens + reasoning) {
      usage.outputTokens += reasoning;
    }
  }
  return usage;
};

/** An `error` member on a 200 body or stream chunk (OpenRouter, vLLM, OpenAI mid-stream). */
export const throwIfErrorPayload = (provider: string, o: UnknownRecord, raw: string): void => {
  const e = o['error'];
  if (e === undefined || e === null) return;
  const er = asRecord(e);
  const message = er ? asString(er['message']) : asString(e);
  const type = er ? (asString(er['type']) ?? asString(er['code'])) : undefined;
  throw mapInStreamError(provider, raw, message, type);
};

/** Tool-call arguments are a JSON string; a few servers send an object. */
export const argumentsText = (a: unknown): string => {
  if (typeof a === 'string') return a;
  if (a === undefined || a === null) return '';
  return JSON.stringify(a);
};

const parseToolCalls = (v: unknown): ToolCall[] => {
  const out: ToolCall[] = [];
  for (const [i, item] of (asArray(v) ?? []).entries()) {
    const c = asRecord(item);
    const fn = asRecord(c?.['function']);
    if (!c || !fn) continue;
    out.push({
      id: asString(c['id']) ?? `call_${i}`,
      name: asString(fn['name']) ?? '',
      arguments: argumentsText(fn['arguments']),
    });
  }
  return out;
};

/** `content` as a string or as an array of `{type:'text'|'thinking', …}` parts (Mistral). */
const readContent = (content: unknown): { text: string; reasoning: string } => {
  if (typeof content === 'string') return { text: content, reasoning: '' };
  let text = '';
  let reasoning = '';
  for (const p of asArray(content) ?? []) {
    const part = asRecord(p);
    if (!part) continue;
    if (part['type'] === 'text') text += asString(part['text']) ?? '';
    else if (part['type'] === 'thinking') {
      for (const t of asArray(part['thinking']) ?? []) reasoning += asString(asRecord(t)?.['text']) ?? '';
      reasoning += asString(part['thinking']) ?? '';
    }
  }
  return { text, reasoning };
};

export const parseChatCompletion = (provider: string, body: string): CanonicalResponse => {
  const parsed = parseJson(body);
  if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'returned a response that is not JSON.', body);
  const o = parsed.value;
  throwIfErrorPayload(provider, o, body);
  const choice = asRecord(asArray(o['choices'])?.[0]);
  const message = asRecord(choice?.['message']);
  if (!choice || !message) throw badGateway(provider, 'returned a response without choices.', body);

  const { text, reasoning: partsReasoning } = readContent(message['content']);
  const toolCalls = parseToolCalls(message['tool_calls']);
  const legacy = asRecord(message['function_call']);
  if (toolCalls.length === 0 && legacy) {
    toolCalls.push({ id: 'call_0', name: asString(legacy['name']) ?? '', arguments: argumentsText(legacy['arguments']) });
  }
  const reasoning = asString(message['reasoning_content']) ?? asString(message['reasoning']) ?? partsReasoning;
  const finish = asString(choice['finish_reason']);

  const response: CanonicalResponse = {
    id: asString(o['id']) ?? '',
    model: asString(o['model']) ?? '',
    created: asNumber(o['created']) ?? Math.floor(Date.now() / 1000),
    text,
    toolCalls,
    finishReason: finish !== undefined ? mapStopReason(OPENAI_FINISH_REASONS, finish) : toolCalls.length > 0 ? 'tool_calls' : 'stop',
    usage: parseUsage(o['usage']) ?? parseUsage(asRecord(o['x_groq'])?.['usage']) ?? { inputTokens: 0, outputTokens: 0 },
  };
  if (reasoning !== '') response.reasoning = reasoning;
  return response;
};
