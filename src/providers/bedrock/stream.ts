/**
 * ConverseStream event-stream frames → canonical stream events. Dispatch is on `:event-type`;
 * exception frames (`:message-type: exception`) and generic error frames become GatewayErrors.
 * Usage arrives in `metadata`, after `messageStop`: it is emitted when it comes.
 */
import type { StreamEvent } from '../../canonical/types.ts';
import { asNumber, asRecord, asString, isRecord, parseJson, type UnknownRecord } from '../json.ts';
import { mapStopReason } from '../stop-reason.ts';
import type { StreamDecoder, UpstreamFrame } from '../types.ts';
import { badGateway, streamEndedEarly } from '../upstream-error.ts';
import { bedrockStreamException } from './errors.ts';
import { JSON_TOOL } from './request.ts';
import { CONVERSE_STOP_REASONS, parseConverseUsage } from './response.ts';

export const createConverseStreamDecoder = (provider: string): StreamDecoder => {
  let started = false;
  let finished = false;
  let realTools = 0;
  /** contentBlockIndex → canonical tool index, or 'json' for the JSON-mode tool. */
  const blocks = new Map<number, number | 'json'>();

  const start = (out: StreamEvent[]): void => {
    if (started) return;
    started = true;
    out.push({ type: 'start', id: '', model: '' });
  };

  const onEvent = (name: string | undefined, o: UnknownRecord): StreamEvent[] => {
    const out: StreamEvent[] = [];
    const index = asNumber(o['contentBlockIndex']) ?? 0;
    switch (name) {
      case 'messageStart':
        start(out);
        return out;
      case 'contentBlockStart': {
        start(out);
        const use = asRecord(asRecord(o['start'])?.['toolUse']);
        if (!use) return out;
        const toolName = asString(use['name']) ?? '';
        if (toolName === JSON_TOOL) {
          blocks.set(index, 'json');
          return out;
        }
        const tool = realTools++;
        blocks.set(index, tool);
        out.push({ type: 'tool_call_start', index: tool, id: asString(use['toolUseId']) ?? `tooluse_${tool}`, name: toolName });
        return out;
      }
      case 'contentBlockDelta': {
        start(out);
        const d = asRecord(o['delta']) ?? {};
        const text = asString(d['text']);
        if (text !== undefined && text !== '') out.push({ type: 'text', text });
        const reasoning = asString(asRecord(d['reasoningContent'])?.['text']);
        if (reasoning !== undefined && reasoning !== '') out.push({ type: 'reasoning', text: reasoning });
        const input = asRecord(d['toolUse'])?.['input'];
        const args = typeof input === 'string' ? input : input === undefined ? '' : JSON.stringify(input);
        const block = blocks.get(index);
        if (args !== '' && block === 'json') out.push({ type: 'text', text: args });
        else if (args !== '' && typeof block === 'number') out.push({ type: 'tool_call_delta', index: block, arguments: args });
        return out;
      }
      case 'messageStop': {
        start(out);
        if (finished) return out;
        finished = true;
        let reason = mapStopReason(CONVERSE_STOP_REASONS, asString(o['stopReason']));
        if (reason === 'tool_calls' && realTools === 0 && [...blocks.values()].includes('json')) reason = 'stop';
        out.push({ type: 'finish', reason });
        return out;
      }
      case 'metadata': {
        const usage = parseConverseUsage(o['usage']);
        if (usage) {
          start(out);
          out.push({ type: 'usage', usage });
        }
        return out;
      }
      default:
        return out; // contentBlockStop, anything new
    }
  };

  return {
    push(frame: UpstreamFrame): StreamEvent[] {
      const headers = frame.headers ?? {};
      const kind = headers[':message-type'] ?? 'event';
      if (kind === 'exception') throw bedrockStreamException(provider, headers[':exception-type'], frame.data);
      if (kind === 'error') throw bedrockStreamException(provider, headers[':error-code'], frame.data, headers[':error-message']);
      const data = frame.data.trim();
      if (data === '') return [];
      const parsed = parseJson(data);
      if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'sent a stream event that is not JSON.', data);
      return onEvent(headers[':event-type'] ?? frame.event, parsed.value);
    },
    end(): StreamEvent[] {
      if (!finished) throw streamEndedEarly(provider);
      return [];
    },
  };
};
