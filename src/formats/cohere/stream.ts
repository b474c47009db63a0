/**
 * Canonical stream events → Cohere v2 chat SSE (`event: <type>` + `data: {type, …}`):
 * `message-start`, `content-start`/`-delta`/`-end` for text and thinking, `tool-call-start`/
 * `-delta`/`-end` with streamed arguments, and `message-end` with the finish reason and usage
 * (both held until the end: OpenAI-style upstreams send usage after the finish). A failure is a
 * `message-end` with finish reason ERROR and the message, as Cohere ends a failed stream.
 */
import type { FinishReason, JsonObject, StreamEvent, Usage } from '../../canonical/types.ts';
import { emptyUsage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import { sseEvent } from '../sse.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import { cohereFinishReason, cohereId, cohereUsage } from './response.ts';

type Open = { kind: 'text' | 'thinking'; index: number } | { kind: 'tool'; index: number; call: number };

export const createCohereStreamEncoder = (ctx: EncodeContext): StreamEncoder => {
  let started = false;
  let ended = false;
  let id = '';
  let contentIndex = 0;
  let toolIndex = 0;
  let open: Open | undefined;
  let finish: FinishReason = 'stop';
  let usage: Usage | undefined;

  const emit = (type: string, payload: JsonObject = {}): string => sseEvent(type, { type, ...payload });
  const start = (): string => {
    if (started) return '';
    started = true;
    return emit('message-start', {
      id: cohereId(id, ctx),
      delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
    });
  };
  const close = (): string => {
    if (!open) return '';
    const o = open;
    open = undefined;
    if (o.kind === 'tool') return emit('tool-call-end', { index: o.index });
    contentIndex++;
    return emit('content-end', { index: o.index });
  };
  const content = (kind: 'text' | 'thinking', text: string): string => {
    let out = '';
    if (open?.kind !== kind) {
      out += close();
      open = { kind, index: contentIndex };
      out += emit('content-start', { index: contentIndex, delta: { message: { content: { type: kind, [kind]: '' } } } });
    }
    return out + emit('content-delta', { index: open.index, delta: { message: { content: { [kind]: text } } } });
  };

  const push = (ev: StreamEvent): string => {
    if (ev.type === 'start') {
      id = ev.id;
      if (ev.usage) usage = ev.usage;
      return start();
    }
    const head = start();
    switch (ev.type) {
      case 'text':
        return ev.text === '' ? head : head + content('text', ev.text);
      case 'reasoning':
        return ev.text === '' ? head : head + content('thinking', ev.text);
      case 'reasoning_signature':
        return head;
      case 'tool_call_start': {
        const out = head + close();
        open = { kind: 'tool', index: toolIndex++, call: ev.index };
        return (
          out +
          emit('tool-call-start', {
            index: open.index,
            delta: { message: { tool_calls: { id: ev.id, type: 'function', function: { name: ev.name, arguments: '' } } } },
          })
        );
      }
      case 'tool_call_delta':
        if (ev.arguments === '' || open?.kind !== 'tool' || open.call !== ev.index) return head;
        return (
          head +
          emit('tool-call-delta', { index: open.index, delta: { message: { tool_calls: { function: { arguments: ev.arguments } } } } })
        );
      case 'finish':
        finish = ev.reason;
        return head;
      case 'usage':
        usage = ev.usage;
        return head;
    }
  };

  return {
    push,
    end() {
      if (ended) return '';
      ended = true;
      return (
        start() +
        close() +
        emit('message-end', { delta: { finish_reason: cohereFinishReason(finish), usage: cohereUsage(usage ?? emptyUsage()) } })
      );
    },
    error(error: GatewayError) {
      ended = true;
      return start() + close() + emit('message-end', { delta: { finish_reason: 'ERROR', error: error.message } });
    },
  };
};
