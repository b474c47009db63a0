/**
 * Cohere v2 SSE → canonical stream events. Dispatch is on the JSON `type` (kebab-case); `event:`
 * lines are ignored; any data line containing `[DONE]` ends the stream (as the Cohere SDK does).
 * In deltas `tool_calls` is one object, located by the event's `index`. `tool-plan-delta` is
 * narration before tool calls and goes to reasoning.
 */
import type { StreamEvent } from '../../canonical/types.ts';
import { asNumber, asRecord, asString, isRecord, parseJson, type UnknownRecord } from '../json.ts';
import { mapStopReason } from '../stop-reason.ts';
import type { StreamDecoder, UpstreamFrame } from '../types.ts';
import { argumentsText } from '../openai-compatible/response.ts';
import { badGateway, streamEndedEarly } from '../upstream-error.ts';
import { COHERE_FINISH_REASONS, cohereFinishError, parseCohereUsage } from './response.ts';

const deltaMessage = (o: UnknownRecord): UnknownRecord => asRecord(asRecord(o['delta'])?.['message']) ?? {};

export const createCohereStreamDecoder = (provider: string): StreamDecoder => {
  let started = false;
  let finished = false;
  let done = false;
  /** Cohere tool-call index → canonical tool index. */
  const tools = new Map<number, number>();

  const start = (o: UnknownRecord, out: StreamEvent[]): void => {
    if (started) return;
    started = true;
    out.push({ type: 'start', id: asString(o['id']) ?? '', model: '' });
  };

  const onEvent = (o: UnknownRecord, raw: string): StreamEvent[] => {
    const out: StreamEvent[] = [];
    const type = asString(o['type']);
    if (type !== undefined) start(o, out);
    switch (type) {
      case 'content-start':
      case 'content-delta': {
        const c = asRecord(deltaMessage(o)['content']) ?? {};
        const text = asString(c['text']);
        if (text !== undefined && text !== '') out.push({ type: 'text', text });
        const thinking = asString(c['thinking']);
        if (thinking !== undefined && thinking !== '') out.push({ type: 'reasoning', text: thinking });
        return out;
      }
      case 'tool-plan-delta': {
        const plan = asString(deltaMessage(o)['tool_plan']);
        if (plan !== undefined && plan !== '') out.push({ type: 'reasoning', text: plan });
        return out;
      }
      case 'tool-call-start': {
        const call = asRecord(deltaMessage(o)['tool_calls']) ?? {};
        const fn = asRecord(call['function']) ?? {};
        const index = tools.size;
        tools.set(asNumber(o['index']) ?? index, index);
        out.push({ type: 'tool_call_start', index, id: asString(call['id']) ?? `call_${index}`, name: asString(fn['name']) ?? '' });
        const args = argumentsText(fn['arguments']);
        if (args !== '') out.push({ type: 'tool_call_delta', index, arguments: args });
        return out;
      }
      case 'tool-call-delta': {
        const fn = asRecord(asRecord(deltaMessage(o)['tool_calls'])?.['function']) ?? {};
        const index = tools.get(asNumber(o['index']) ?? 0);
        const args = argumentsText(fn['arguments']);
        if (index !== undefined && args !== '') out.push({ type: 'tool_call_delta', index, arguments: args });
        return out;
      }
      case 'message-end': {
        const d = asRecord(o['delta']) ?? {};
        const finish = asString(d['finish_reason']);
        if (finish === 'ERROR') throw cohereFinishError(provider, raw, asString(d['error']));
        if (!finished) {
          finished = true;
          out.push({
            type: 'finish',
            reason: finish !== undefined ? mapStopReason(COHERE_FINISH_REASONS, finish) : tools.size > 0 ? 'tool_calls' : 'stop',
          });
        }
        const usage = parseCohereUsage(d['usage']);
        if (usage) out.push({ type: 'usage', usage });
        done = true;
        return out;
      }
      default:
        return out; // message-start, content-end, tool-call-end, citation-*, debug, anything new
    }
  };

  return {
    push(frame: UpstreamFrame): StreamEvent[] {
      const data = frame.data.trim();
      if (done || data === '') return [];
      if (data.includes('[DONE]')) {
        done = true;
        return [];
      }
      const parsed = parseJson(data);
      if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'sent a stream event that is not JSON.', data);
      return onEvent(parsed.value, data);
    },
    end(): StreamEvent[] {
      if (!finished) throw streamEndedEarly(provider);
      return [];
    },
  };
};
