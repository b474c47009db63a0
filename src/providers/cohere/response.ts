/** Cohere v2 chat response → CanonicalResponse, plus errors (`{message}`; 498 = invalid token). */
import type { CanonicalResponse, ToolCall, Usage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import { asArray, asNumber, asRecord, asString, isRecord, parseJson } from '../json.ts';
import { argumentsText } from '../openai-compatible/response.ts';
import { mapStopReason, stopReasons } from '../stop-reason.ts';
import { badGateway, mapInStreamError, mapUpstreamError, withUpstreamStatus } from '../upstream-error.ts';

/** `ERROR` is not a finish reason: the caller raises it. */
/** Cohere `finish_reason`s; COMPLETE, STOP_SEQUENCE and anything new mean `stop`. */
export const COHERE_FINISH_REASONS = stopReasons({ length: ['MAX_TOKENS'], tool_calls: ['TOOL_CALL'] });

/** `usage.tokens` are the real counts; `billed_units` the fallback. */
export const parseCohereUsage = (u: unknown): Usage | undefined => {
  const o = asRecord(u);
  if (!o) return undefined;
  const tokens = asRecord(o['tokens']) ?? asRecord(o['billed_units']);
  const input = asNumber(tokens?.['input_tokens']);
  const output = asNumber(tokens?.['output_tokens']);
  if (input === undefined && output === undefined) return undefined;
  const usage: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const cached = asNumber(o['cached_tokens']);
  if (cached !== undefined) usage.cachedInputTokens = cached;
  return usage;
};

export const cohereFinishError = (provider: string, raw: string, message: string | undefined): GatewayError =>
  mapInStreamError(provider, raw, message ?? `Upstream provider '${provider}' ended the generation with an error.`, 'error');

export const parseCohereResponse = (provider: string, body: string): CanonicalResponse => {
  const parsed = parseJson(body);
  if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'returned a response that is not JSON.', body);
  const o = parsed.value;
  const message = asRecord(o['message']);
  if (!message) throw badGateway(provider, 'returned a response without a message.', body);
  const finish = asString(o['finish_reason']);
  if (finish === 'ERROR') throw cohereFinishError(provider, body, asString(o['error']));
  let text = '';
  let reasoning = asString(message['tool_plan']) ?? '';
  for (const item of asArray(message['content']) ?? []) {
    const part = asRecord(item);
    if (part?.['type'] === 'text') text += asString(part['text']) ?? '';
    else if (part?.['type'] === 'thinking') reasoning += asString(part['thinking']) ?? '';
  }
  const toolCalls: ToolCall[] = [];
  for (const item of asArray(message['tool_calls']) ?? []) {
    const c = asRecord(item);
    const fn = asRecord(c?.['function']);
    if (!c || !fn) continue;
    toolCalls.push({
      id: asString(c['id']) ?? `call_${toolCalls.length}`,
      name: asString(fn['name']) ?? '',
      arguments: argumentsText(fn['arguments']),
    });
  }
  const response: CanonicalResponse = {
    id: asString(o['id']) ?? '',
    model: '',
    created: Math.floor(Date.now() / 1000),
    text,
    toolCalls,
    finishReason: finish !== undefined ? mapStopReason(COHERE_FINISH_REASONS, finish) : toolCalls.length > 0 ? 'tool_calls' : 'stop',
    usage: parseCohereUsage(o['usage']) ?? { inputTokens: 0, outputTokens: 0 },
  };
  if (reasoning !== '') response.reasoning = reasoning;
  return response;
};

export const parseCohereError = (provider: string, status: number, body: string, headers: Headers): GatewayError => {
  const parsed = parseJson(body);
  const o = parsed.ok ? asRecord(parsed.value) : undefined;
  const message = asString(o?.['message']) ?? asString(o?.['error']);
  const code = status === 404 && message !== undefined && /model/i.test(message) ? 'model_not_found' : undefined;
  // 499 ("client closed") means the upstream gave up on the gateway's connection: a retryable failure.
  if (status === 499) return withUpstreamStatus(mapUpstreamError({ provider, status: 502, body, headers, message }), status);
  // 498 is Cohere's "invalid token": the gateway's credential, like a 401.
  return mapUpstreamError({ provider, status, body, headers, message, code, authFailure: status === 498 });
};
