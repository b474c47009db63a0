/**
 * `streamGenerateContent?alt=sse` → canonical stream events. Every event is a whole
 * GenerateContentResponse with incremental parts; there is no `[DONE]`. A `functionCall` part
 * arrives complete, so it becomes one start + one delta. `usageMetadata` is a running value: the
 * last one is emitted after the finish (and again at the end if it changed).
 */
import type { StreamEvent, Usage } from '../../canonical/types.ts';
import { asArray, asRecord, asString, isRecord, parseJson } from '../json.ts';
import type { StreamDecoder, UpstreamFrame } from '../types.ts';
import { badGateway, streamEndedEarly } from '../upstream-error.ts';
import { googleInBodyError } from './errors.ts';
import { geminiFinishReason, parseGeminiUsage, readParts } from './response.ts';

export const createGenerateContentStreamDecoder = (provider: string): StreamDecoder => {
  let started = false;
  let finished = false;
  let tools = 0;
  let usage: Usage | undefined;
  let usageSent: string | undefined;

  const sendUsage = (out: StreamEvent[]): void => {
    if (!usage) return;
    const key = JSON.stringify(usage);
    if (key === usageSent) return;
    usageSent = key;
    out.push({ type: 'usage', usage });
  };

  return {
    push(frame: UpstreamFrame): StreamEvent[] {
      const data = frame.data.trim();
      if (data === '' || data === '[DONE]') return [];
      const parsed = parseJson(data);
      if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'sent a stream event that is not JSON.', data);
      const o = parsed.value;
      if (isRecord(o['error'])) throw googleInBodyError(provider, o['error'], data);
      const out: StreamEvent[] = [];
      if (!started) {
        started = true;
        out.push({ type: 'start', id: asString(o['responseId']) ?? '', model: asString(o['modelVersion']) ?? '' });
      }
      usage = parseGeminiUsage(o['usageMetadata']) ?? usage;
      const candidate = asRecord(asArray(o['candidates'])?.[0]);
      const parts = readParts(candidate, tools);
      if (parts.reasoning !== '') out.push({ type: 'reasoning', text: parts.reasoning });
      if (parts.text !== '') out.push({ type: 'text', text: parts.text });
      for (const call of parts.toolCalls) {
        const index = tools++;
        out.push({ type: 'tool_call_start', index, id: call.id, name: call.name });
        out.push({ type: 'tool_call_delta', index, arguments: call.arguments });
      }
      const finish = asString(candidate?.['finishReason']);
      const blocked = !candidate && asString(asRecord(o['promptFeedback'])?.['blockReason']) !== undefined;
      if (!finished && (finish !== undefined || blocked)) {
        finished = true;
        out.push({ type: 'finish', reason: blocked ? 'content_filter' : geminiFinishReason(finish, tools > 0) });
      }
      if (finished) sendUsage(out);
      return out;
    },
    end(): StreamEvent[] {
      if (!finished) throw streamEndedEarly(provider);
      const out: StreamEvent[] = [];
      sendUsage(out);
      return out;
    },
  };
};
