/**
 * OpenAI Responses SSE events → canonical stream events, for the record of a stream passed through
 * natively (the client gets the upstream's own events). Text and function-call arguments as they
 * come; finish reason and usage from the terminal `response.completed` / `response.incomplete`;
 * `response.failed` and `error` events fail the stream.
 */
import type { StreamEvent } from '../../canonical/types.ts';
import { asNumber, asRecord, asString, parseJson } from '../json.ts';
import type { StreamDecoder, UpstreamFrame } from '../types.ts';
import { badGateway, mapInStreamError, streamEndedEarly } from '../upstream-error.ts';
import { throwIfErrorPayload } from '../openai-compatible/response.ts';
import { parseResponsesUsage, responsesFinish, throwIfFailed } from './response.ts';

export const createResponsesStreamDecoder = (provider: string): StreamDecoder => {
  let started = false;
  let ended = false;
  let toolCount = 0;
  /** Output index of a function_call item → its canonical tool index. */
  const tools = new Map<number, number>();

  const start = (id: string, model: string, out: StreamEvent[]): void => {
    if (started) return;
    started = true;
    out.push({ type: 'start', id, model });
  };

  return {
    push(frame: UpstreamFrame): StreamEvent[] {
      if (frame.data === '' || frame.data === '[DONE]') return [];
      const parsed = parseJson(frame.data);
      const ev = parsed.ok ? asRecord(parsed.value) : undefined;
      if (!ev) throw badGateway(provider, 'sent a stream event that is not a JSON object.', frame.data);
      const type = asString(ev['type']) ?? frame.event ?? '';
      // An error in the Chat Completions shape (`{"error": {…}}`), as some proxies send it.
      if (type === '' && ev['error'] !== undefined) throwIfErrorPayload(provider, ev, frame.data);
      const out: StreamEvent[] = [];
      const response = asRecord(ev['response']);
      switch (type) {
        case 'response.created':
        case 'response.in_progress':
        case 'response.queued':
          start(asString(response?.['id']) ?? '', asString(response?.['model']) ?? '', out);
          return out;
        case 'response.output_text.delta': {
          const delta = asString(ev['delta']) ?? '';
          start('', '', out);
          if (delta !== '') out.push({ type: 'text', text: delta });
          return out;
        }
        case 'response.output_item.added': {
          const item = asRecord(ev['item']);
          if (asString(item?.['type']) !== 'function_call') return out;
          const index = toolCount++;
          tools.set(asNumber(ev['output_index']) ?? index, index);
          start('', '', out);
          out.push({ type: 'tool_call_start', index, id: asString(item?.['call_id']) ?? '', name: asString(item?.['name']) ?? '' });
          const args = asString(item?.['arguments']) ?? '';
          if (args !== '') out.push({ type: 'tool_call_delta', index, arguments: args });
          return out;
        }
        case 'response.function_call_arguments.delta': {
          const index = tools.get(asNumber(ev['output_index']) ?? -1);
          const delta = asString(ev['delta']) ?? '';
          if (index !== undefined && delta !== '') out.push({ type: 'tool_call_delta', index, arguments: delta });
          return out;
        }
        case 'response.completed':
        case 'response.incomplete': {
          if (!response) throw badGateway(provider, `sent ${type} without its response.`, frame.data);
          start(asString(response['id']) ?? '', asString(response['model']) ?? '', out);
          ended = true;
          out.push({ type: 'finish', reason: responsesFinish(response, toolCount) });
          const usage = parseResponsesUsage(response['usage']);
          if (usage) out.push({ type: 'usage', usage });
          return out;
        }
        case 'response.failed':
          if (response) throwIfFailed(provider, response, frame.data);
          throw mapInStreamError(provider, frame.data, undefined, undefined);
        case 'error':
          throw mapInStreamError(provider, frame.data, asString(ev['message']), asString(ev['code']) ?? asString(ev['type']));
        default:
          return out;
      }
    },
    end(): StreamEvent[] {
      if (!ended) throw streamEndedEarly(provider);
      return [];
    },
  };
};
