/** OpenAI Chat Completions SSE chunks → canonical stream events. */
import type { StreamEvent } from '../../canonical/types.ts';
import { asArray, asNumber, asRecord, asString, isRecord, parseJson, type UnknownRecord } from '../json.ts';
import { mapStopReason } from '../stop-reason.ts';
import type { StreamDecoder, UpstreamFrame } from '../types.ts';
import { badGateway, streamEndedEarly } from '../upstream-error.ts';
import { type DeltaTemplate, learnDeltaTemplate, templateText } from '../delta-template.ts';
import { argumentsText, OPENAI_FINISH_REASONS, parseUsage, throwIfErrorPayload } from './response.ts';

interface OpenCall {
  index: number;
  id: string;
}

export const createChatCompletionsStreamDecoder = (provider: string): StreamDecoder => {
  let started = false;
  let finished = false;
  let done = false;
  /** Upstream tool-call slot (`delta.tool_calls[].index`) → the call currently open there. */
  const slots = new Map<number, OpenCall>();
  let toolCount = 0;
  /** The per-token chunk's template, learnt from the first one decoded in full (delta-template.ts). */
  let template: DeltaTemplate | undefined;
  let learnt = false;

  const start = (chunk: UnknownRecord, out: StreamEvent[]): void => {
    if (started) return;
    started = true;
    out.push({ type: 'start', id: asString(chunk['id']) ?? '', model: asString(chunk['model']) ?? '' });
  };

  const toolDeltas = (chunk: UnknownRecord, calls: unknown[], out: StreamEvent[]): void => {
    for (const [pos, item] of calls.entries()) {
      const c = asRecord(item);
      if (!c) continue;
      const fn = asRecord(c['function']);
      const slot = asNumber(c['index']) ?? pos;
      const id = asString(c['id']);
      const name = asString(fn?.['name']);
      let open = slots.get(slot);
      // A new call opens when the slot is new or a different id arrives in it.
      if (!open || (id !== undefined && id !== '' && id !== open.id)) {
        const index = toolCount++;
        open = { index, id: id !== undefined && id !== '' ? id : `call_${index}` };
        slots.set(slot, open);
        start(chunk, out);
        out.push({ type: 'tool_call_start', index: open.index, id: open.id, name: name ?? '' });
      }
      const args = argumentsText(fn?.['arguments']);
      if (args !== '') {
        start(chunk, out);
        out.push({ type: 'tool_call_delta', index: open.index, arguments: args });
      }
    }
  };

  const chunkEvents = (chunk: UnknownRecord): StreamEvent[] => {
    const out: StreamEvent[] = [];
    const choices = asArray(chunk['choices']) ?? [];
    // Azure's first chunk (empty choices, prompt_filter_results, blank id) carries nothing.
    if (choices.length > 0 || asString(chunk['id'])) start(chunk, out);
    for (const item of choices) {
      const choice = asRecord(item);
      if (!choice) continue;
      const idx = asNumber(choice['index']) ?? 0;
      if (idx !== 0) continue; // the canonical stream carries one choice
      const delta = asRecord(choice['delta']) ?? {};
      const reasoning = asString(delta['reasoning_content']) ?? asString(delta['reasoning']);
      if (reasoning !== undefined && reasoning !== '') out.push({ type: 'reasoning', text: reasoning });
      const content = asString(delta['content']);
      if (content !== undefined && content !== '') out.push({ type: 'text', text: content });
      const calls = asArray(delta['tool_calls']);
      if (calls) toolDeltas(chunk, calls, out);
      const legacy = asRecord(delta['function_call']);
      if (legacy) toolDeltas(chunk, [{ index: 0, id: asString(legacy['id']), function: legacy }], out);
      const finish = asString(choice['finish_reason']);
      if (finish !== undefined && finish !== '' && !finished) {
        finished = true;
        out.push({ type: 'finish', reason: mapStopReason(OPENAI_FINISH_REASONS, finish) });
      }
    }
    const usage = parseUsage(chunk['usage']) ?? parseUsage(asRecord(chunk['x_groq'])?.['usage']);
    if (usage) {
      start(chunk, out);
      out.push({ type: 'usage', usage });
    }
    return out;
  };

  return {
    push(frame: UpstreamFrame): StreamEvent[] {
      const data = frame.data.trim();
      if (done || data === '') return [];
      if (data === '[DONE]') {
        done = true;
        return [];
      }
      if (template !== undefined) {
        const text = templateText(template, data);
        if (text !== undefined) return text === '' ? [] : [{ type: 'text', text }];
      }
      const parsed = parseJson(data);
      if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'sent a stream event that is not JSON.', data);
      throwIfErrorPayload(provider, parsed.value, data);
      const wasStarted = started;
      const out = chunkEvents(parsed.value);
      // Learnt once per stream, from a chunk after the start whose only event is its text.
      if (!learnt && wasStarted && (out.length === 0 || (out.length === 1 && out[0]?.type === 'text'))) {
        template = learnDeltaTemplate(data, parsed.value);
        learnt = template !== undefined;
      }
      return out;
    },
    end(): StreamEvent[] {
      if (!finished) throw streamEndedEarly(provider);
      return [];
    },
  };
};
