/**
 * An OpenAI Responses answer (`{object: "response", output: [...], usage}`) → CanonicalResponse,
 * for the record of a request passed through natively (usage, finish reason, text, tool calls).
 */
import type { CanonicalResponse, FinishReason, ToolCall, Usage } from '../../canonical/types.ts';
import { asArray, asNumber, asRecord, asString, parseJson, type UnknownRecord } from '../json.ts';
import { argumentsText, throwIfErrorPayload } from '../openai-compatible/response.ts';
import { badGateway, mapInStreamError } from '../upstream-error.ts';

/** Responses `usage` → canonical usage; undefined when absent. */
export const parseResponsesUsage = (u: unknown): Usage | undefined => {
  const o = asRecord(u);
  if (!o) return undefined;
  const input = asNumber(o['input_tokens']);
  const output = asNumber(o['output_tokens']);
  if (input === undefined && output === undefined) return undefined;
  const usage: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const cached = asNumber(asRecord(o['input_tokens_details'])?.['cached_tokens']);
  if (cached !== undefined) usage.cachedInputTokens = cached;
  const reasoning = asNumber(asRecord(o['output_tokens_details'])?.['reasoning_tokens']);
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
};

/** `incomplete` with `max_output_tokens` → length, `content_filter` → content_filter; else tool_calls or stop. */
export const responsesFinish = (response: UnknownRecord, toolCalls: number): FinishReason => {
  if (asString(response['status']) === 'incomplete') {
    const reason = asString(asRecord(response['incomplete_details'])?.['reason']);
    if (reason === 'content_filter') return 'content_filter';
    return 'length';
  }
  return toolCalls > 0 ? 'tool_calls' : 'stop';
};

/** A `failed` response (or one carrying `error`) as the in-stream error it is. */
export const throwIfFailed = (provider: string, response: UnknownRecord, raw: string): void => {
  if (asString(response['status']) !== 'failed') return;
  const e = asRecord(response['error']);
  throw mapInStreamError(provider, raw, asString(e?.['message']), asString(e?.['code']));
};

export const responsesToolCalls = (output: unknown[]): ToolCall[] => {
  const calls: ToolCall[] = [];
  for (const raw of output) {
    const item = asRecord(raw);
    if (asString(item?.['type']) !== 'function_call' || !item) continue;
    calls.push({
      id: asString(item['call_id']) ?? asString(item['id']) ?? '',
      name: asString(item['name']) ?? '',
      arguments: argumentsText(item['arguments']),
    });
  }
  return calls;
};

const outputText = (output: unknown[]): string => {
  let text = '';
  for (const raw of output) {
    const item = asRecord(raw);
    if (asString(item?.['type']) !== 'message') continue;
    for (const p of asArray(item?.['content']) ?? []) {
      const part = asRecord(p);
      if (asString(part?.['type']) === 'output_text') text += asString(part?.['text']) ?? '';
    }
  }
  return text;
};

export const parseResponsesAnswer = (provider: string, body: string): CanonicalResponse => {
  const parsed = parseJson(body);
  const o = parsed.ok ? asRecord(parsed.value) : undefined;
  if (!o) throw badGateway(provider, 'returned a body that is not a JSON object.', body);
  throwIfErrorPayload(provider, o, body);
  const output = asArray(o['output']);
  if (!output) throw badGateway(provider, 'returned a response without output.', body);
  throwIfFailed(provider, o, body);
  const toolCalls = responsesToolCalls(output);
  return {
    id: asString(o['id']) ?? '',
    model: asString(o['model']) ?? '',
    created: asNumber(o['created_at']) ?? Math.floor(Date.now() / 1000),
    text: outputText(output),
    toolCalls,
    finishReason: responsesFinish(o, toolCalls.length),
    usage: parseResponsesUsage(o['usage']) ?? { inputTokens: 0, outputTokens: 0 },
  };
};
