/** Anthropic Messages SSE events → canonical stream events. Dispatches on `data.type`, not `event:`. */
import type { StreamEvent } from '../../canonical/types.ts';
import { type DeltaTemplate, learnTemplate, templateText } from '../delta-template.ts';
import { asNumber, asRecord, asString, isRecord, parseJson, type UnknownRecord } from '../json.ts';
import { mapStopReason } from '../stop-reason.ts';
import type { StreamDecoder, UpstreamFrame } from '../types.ts';
import { badGateway, streamEndedEarly } from '../upstream-error.ts';
import { anthropicInStreamError } from './errors.ts';
import { ANTHROPIC_STOP_REASONS, mergeRawUsage, readRawUsage, toUsage, type RawAnthropicUsage } from './response.ts';

/** A text delta's text slot (delta-template.ts): the probe must be a text delta with the marker as its text. */
const TEXT_LOCATOR = '"type":"text_delta","text":"';
const isTextDelta = (o: UnknownRecord, marker: string): boolean => {
  const d = asRecord(o['delta']);
  return o['type'] === 'content_block_delta' && d !== undefined && d['type'] === 'text_delta' && d['text'] === marker;
};
/** Attempts to learn a template per stream at most (one per text block: the block's index is part of it). */
const MAX_LEARNT = 4;

export const createMessagesStreamDecoder = (provider: string): StreamDecoder => {
  let started = false;
  let finished = false;
  let stopped = false;
  let usage: RawAnthropicUsage = {};
  /** Content-block index → tool-call index (tool blocks only, 0, 1, 2…). */
  const toolOf = new Map<number, number>();
  /** The current text block's delta template (delta-template.ts). */
  let template: DeltaTemplate | undefined;
  let learnt = 0;

  const onEvent = (o: Record<string, unknown>, raw: string): StreamEvent[] => {
    switch (o['type']) {
      case 'message_start': {
        const m = asRecord(o['message']) ?? {};
        usage = readRawUsage(m['usage']);
        if (started) return [];
        started = true;
        return [{ type: 'start', id: asString(m['id']) ?? '', model: asString(m['model']) ?? '', usage: toUsage(usage) }];
      }
      case 'content_block_start': {
        const index = asNumber(o['index']) ?? 0;
        const b = asRecord(o['content_block']) ?? {};
        if (b['type'] === 'tool_use') {
          const tool = toolOf.size;
          toolOf.set(index, tool);
          return [{ type: 'tool_call_start', index: tool, id: asString(b['id']) ?? `toolu_${tool}`, name: asString(b['name']) ?? '' }];
        }
        if (b['type'] === 'text') {
          const text = asString(b['text']) ?? '';
          return text === '' ? [] : [{ type: 'text', text }];
        }
        if (b['type'] === 'thinking') {
          const text = asString(b['thinking']) ?? '';
          return text === '' ? [] : [{ type: 'reasoning', text }];
        }
        return [];
      }
      case 'content_block_delta': {
        const d = asRecord(o['delta']) ?? {};
        switch (d['type']) {
          case 'text_delta': {
            const text = asString(d['text']) ?? '';
            return text === '' ? [] : [{ type: 'text', text }];
          }
          case 'thinking_delta': {
            const text = asString(d['thinking']) ?? '';
            return text === '' ? [] : [{ type: 'reasoning', text }];
          }
          case 'input_json_delta': {
            const tool = toolOf.get(asNumber(o['index']) ?? 0);
            const args = asString(d['partial_json']) ?? '';
            return tool === undefined || args === '' ? [] : [{ type: 'tool_call_delta', index: tool, arguments: args }];
          }
          case 'signature_delta': {
            const signature = asString(d['signature']) ?? '';
            return signature === '' ? [] : [{ type: 'reasoning_signature', signature }];
          }
          default:
            return []; // citations_delta, future types
        }
      }
      case 'message_delta': {
        const out: StreamEvent[] = [];
        const stop = asString(asRecord(o['delta'])?.['stop_reason']);
        if (stop !== undefined && !finished) {
          finished = true;
          out.push({ type: 'finish', reason: mapStopReason(ANTHROPIC_STOP_REASONS, stop) });
        }
        if (isRecord(o['usage'])) {
          usage = mergeRawUsage(usage, readRawUsage(o['usage']));
          out.push({ type: 'usage', usage: toUsage(usage) });
        }
        return out;
      }
      case 'message_stop': {
        stopped = true;
        if (finished) return [];
        finished = true;
        return [{ type: 'finish', reason: 'stop' }];
      }
      case 'error': {
        const e = asRecord(o['error']);
        throw anthropicInStreamError(provider, raw, asString(e?.['message']), asString(e?.['type']));
      }
      default:
        return []; // ping, content_block_stop, anything new
    }
  };

  return {
    push(frame: UpstreamFrame): StreamEvent[] {
      const data = frame.data.trim();
      if (stopped || data === '') return [];
      if (template !== undefined) {
        const text = templateText(template, data);
        if (text !== undefined) return text === '' ? [] : [{ type: 'text', text }];
      }
      const parsed = parseJson(data);
      if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'sent a stream event that is not JSON.', data);
      const out = onEvent(parsed.value, data);
      if (
        learnt < MAX_LEARNT &&
        parsed.value['type'] === 'content_block_delta' &&
        asRecord(parsed.value['delta'])?.['type'] === 'text_delta'
      ) {
        learnt++;
        template = learnTemplate(data, TEXT_LOCATOR, isTextDelta) ?? template;
      }
      return out;
    },
    end(): StreamEvent[] {
      if (!finished) throw streamEndedEarly(provider);
      return [];
    },
  };
};
