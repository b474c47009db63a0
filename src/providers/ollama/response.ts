/** Ollama native `/api/chat` answers (one object, or NDJSON lines) and `{error}` bodies. */
import type { CanonicalResponse, FinishReason, StreamEvent, ToolCall, Usage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import { asArray, asNumber, asRecord, asString, isRecord, parseJson, type UnknownRecord } from '../json.ts';
import { unixSeconds } from '../mapping.ts';
import { argumentsText } from '../openai-compatible/response.ts';
import { mapStopReason, stopReasons } from '../stop-reason.ts';
import type { StreamDecoder, UpstreamFrame } from '../types.ts';
import { badGateway, mapInStreamError, mapUpstreamError, streamEndedEarly } from '../upstream-error.ts';

/** Ollama `done_reason`s; any other (stop, load, unload, anything new, none) is `tool_calls` after tool calls, else `stop`. */
const OLLAMA_DONE_REASONS = stopReasons({ length: ['length'] });
const mapDoneReason = (r: string | undefined, hasTools: boolean): FinishReason =>
  mapStopReason(OLLAMA_DONE_REASONS, r, hasTools ? 'tool_calls' : 'stop');

const usageOf = (o: UnknownRecord): Usage | undefined => {
  const input = asNumber(o['prompt_eval_count']);
  const output = asNumber(o['eval_count']);
  return input === undefined && output === undefined ? undefined : { inputTokens: input ?? 0, outputTokens: output ?? 0 };
};

/** `tool_calls[].function.arguments` is an object; ids are generated when Ollama sends none. */
const toolCallsOf = (message: UnknownRecord, first: number): ToolCall[] =>
  (asArray(message['tool_calls']) ?? []).flatMap((item, i) => {
    const c = asRecord(item);
    const fn = asRecord(c?.['function']);
    if (!c || !fn) return [];
    return [
      { id: asString(c['id']) ?? `call_${first + i}`, name: asString(fn['name']) ?? '', arguments: argumentsText(fn['arguments'] ?? {}) },
    ];
  });

const parseObject = (provider: string, text: string): UnknownRecord => {
  const parsed = parseJson(text);
  if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'sent a response that is not JSON.', text);
  const o = parsed.value;
  const err = asString(o['error']);
  if (err !== undefined) throw mapInStreamError(provider, text, err, undefined);
  return o;
};

export const parseOllamaResponse = (provider: string, body: string): CanonicalResponse => {
  const o = parseObject(provider, body);
  const message = asRecord(o['message']);
  if (!message) throw badGateway(provider, 'returned a response without a message.', body);
  const toolCalls = toolCallsOf(message, 0);
  const thinking = asString(message['thinking']) ?? '';
  const response: CanonicalResponse = {
    id: '',
    model: asString(o['model']) ?? '',
    created: unixSeconds(asString(o['created_at'])),
    text: asString(message['content']) ?? '',
    toolCalls,
    finishReason: mapDoneReason(asString(o['done_reason']), toolCalls.length > 0),
    usage: usageOf(o) ?? { inputTokens: 0, outputTokens: 0 },
  };
  if (thinking !== '') response.reasoning = thinking;
  return response;
};

export const createOllamaStreamDecoder = (provider: string): StreamDecoder => {
  let started = false;
  let finished = false;
  let tools = 0;
  return {
    push(frame: UpstreamFrame): StreamEvent[] {
      const data = frame.data.trim();
      if (finished || data === '') return [];
      const o = parseObject(provider, data);
      const out: StreamEvent[] = [];
      if (!started) {
        started = true;
        out.push({ type: 'start', id: '', model: asString(o['model']) ?? '' });
      }
      const message = asRecord(o['message']) ?? {};
      const thinking = asString(message['thinking']);
      if (thinking !== undefined && thinking !== '') out.push({ type: 'reasoning', text: thinking });
      const content = asString(message['content']);
      if (content !== undefined && content !== '') out.push({ type: 'text', text: content });
      for (const call of toolCallsOf(message, tools)) {
        const index = tools++;
        out.push({ type: 'tool_call_start', index, id: call.id, name: call.name });
        out.push({ type: 'tool_call_delta', index, arguments: call.arguments });
      }
      if (o['done'] === true) {
        finished = true;
        out.push({ type: 'finish', reason: mapDoneReason(asString(o['done_reason']), tools > 0) });
        const usage = usageOf(o);
        if (usage) out.push({ type: 'usage', usage });
      }
      return out;
    },
    end(): StreamEvent[] {
      if (!finished) throw streamEndedEarly(provider);
      return [];
    },
  };
};

export const parseOllamaError = (provider: string, status: number, body: string, headers: Headers): GatewayError => {
  const parsed = parseJson(body);
  const message = asString(asRecord(parsed.ok ? parsed.value : undefined)?.['error']);
  const notFound = status === 404 && message !== undefined && /model/i.test(message);
  return mapUpstreamError({ provider, status, body, headers, message, code: notFound ? 'model_not_found' : undefined });
};
