/** Canonical stream events → OpenAI Responses SSE (`event:` + `data:` with a `sequence_number`). */
import type { JsonObject, StreamEvent, ToolCall } from '../../canonical/types.ts';
import { emptyUsage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import { type HeldState, nowSeconds, pushBlockEvent } from '../shared.ts';
import { sseEvent } from '../sse.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import {
  finalStatus,
  functionCallItem,
  functionItemId,
  messageItem,
  messageItemId,
  outputTextPart,
  reasoningItem,
  reasoningItemId,
  responseId,
  responseObject,
  summaryTextPart,
} from './response.ts';

type Item =
  | { kind: 'message'; id: string; text: string; open: boolean }
  | { kind: 'function_call'; id: string; call: ToolCall; open: boolean }
  | { kind: 'reasoning'; id: string; text: string; signature?: string; open: boolean };

const itemJson = (item: Item, status: 'in_progress' | 'completed'): JsonObject =>
  item.kind === 'message'
    ? messageItem(item.id, item.text, status)
    : item.kind === 'function_call'
      ? functionCallItem(item.id, item.call, status)
      : reasoningItem(item.id, item.text, item.signature, status);

export const createResponsesStreamEncoder = (ctx: EncodeContext): StreamEncoder => {
  const createdAt = nowSeconds(ctx);
  let seq = 0;
  let id = '';
  let started = false;
  let closed = false;
  let messageCount = 0;
  let reasoningCount = 0;
  let final: JsonObject | undefined;
  const fields = ctx.responseFields ? { fields: ctx.responseFields } : {};
  const held: HeldState = { finishReason: 'stop', usage: undefined };
  const items: Item[] = [];
  /** Canonical tool index → output index. */
  const toolItems = new Map<number, number>();

  const emit = (type: string, payload: JsonObject): string => sseEvent(type, { type, sequence_number: seq++, ...payload });

  const start = (upstreamId = ''): string => {
    if (started) return '';
    started = true;
    id = responseId(upstreamId, ctx);
    const snapshot = responseObject({ id, createdAt, model: ctx.model, status: 'in_progress', output: [], usage: null, ...fields });
    return emit('response.created', { response: snapshot }) + emit('response.in_progress', { response: snapshot });
  };

  const current = (): Item | undefined => {
    const last = items[items.length - 1];
    return last?.open ? last : undefined;
  };

  const closeCurrent = (): string => {
    const item = current();
    if (!item) return '';
    item.open = false;
    const outputIndex = items.length - 1;
    if (item.kind === 'reasoning') {
      const where = { item_id: item.id, output_index: outputIndex, summary_index: 0 };
      return (
        emit('response.reasoning_summary_text.done', { ...where, text: item.text }) +
        emit('response.reasoning_summary_part.done', { ...where, part: summaryTextPart(item.text) }) +
        emit('response.output_item.done', { output_index: outputIndex, item: itemJson(item, 'completed') })
      );
    }
    if (item.kind === 'message') {
      const where = { item_id: item.id, output_index: outputIndex, content_index: 0 };
      return (
        emit('response.output_text.done', { ...where, text: item.text, logprobs: [] }) +
        emit('response.content_part.done', { ...where, part: outputTextPart(item.text) }) +
        emit('response.output_item.done', { output_index: outputIndex, item: messageItem(item.id, item.text, 'completed') })
      );
    }
    return (
      emit('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, arguments: item.call.arguments }) +
      emit('response.output_item.done', { output_index: outputIndex, item: functionCallItem(item.id, item.call, 'completed') })
    );
  };

  const text = (delta: string): string => {
    let out = start();
    let item = current();
    if (item?.kind !== 'message') {
      out += closeCurrent();
      item = { kind: 'message', id: messageItemId(ctx, messageCount++), text: '', open: true };
      items.push(item);
      const outputIndex = items.length - 1;
      out +=
        emit('response.output_item.added', { output_index: outputIndex, item: messageItem(item.id, '', 'in_progress') }) +
        emit('response.content_part.added', { item_id: item.id, output_index: outputIndex, content_index: 0, part: outputTextPart('') });
    }
    item.text += delta;
    // The per-token frame, written directly (same bytes as emit(), without building the object).
    return `${out}event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":${seq++},"item_id":${JSON.stringify(item.id)},"output_index":${items.length - 1},"content_index":0,"delta":${JSON.stringify(delta)},"logprobs":[]}\n\n`;
  };

  const reasoning = (delta: string): string => {
    let out = start();
    let item = current();
    if (item?.kind !== 'reasoning') {
      out += closeCurrent();
      item = { kind: 'reasoning', id: reasoningItemId(ctx, reasoningCount++), text: '', open: true };
      items.push(item);
      const outputIndex = items.length - 1;
      out +=
        emit('response.output_item.added', { output_index: outputIndex, item: itemJson(item, 'in_progress') }) +
        emit('response.reasoning_summary_part.added', {
          item_id: item.id,
          output_index: outputIndex,
          summary_index: 0,
          part: summaryTextPart(''),
        });
    }
    item.text += delta;
    return (
      out + emit('response.reasoning_summary_text.delta', { item_id: item.id, output_index: items.length - 1, summary_index: 0, delta })
    );
  };

  const reasoningSignature = (signature: string): string => {
    const item = current();
    if (item?.kind === 'reasoning') item.signature = (item.signature ?? '') + signature;
    return start();
  };

  const toolStart = (index: number, callId: string, name: string): string => {
    const out = start() + closeCurrent();
    const item: Item = { kind: 'function_call', id: functionItemId(ctx, index), call: { id: callId, name, arguments: '' }, open: true };
    items.push(item);
    toolItems.set(index, items.length - 1);
    return (
      out +
      emit('response.output_item.added', { output_index: items.length - 1, item: functionCallItem(item.id, item.call, 'in_progress') })
    );
  };

  const toolDelta = (index: number, delta: string): string => {
    const outputIndex = toolItems.get(index);
    const item = outputIndex === undefined ? undefined : items[outputIndex];
    if (item?.kind !== 'function_call' || outputIndex === undefined) return start();
    item.call.arguments += delta;
    // A late fragment for an already-closed call still reaches the final response.completed.
    if (!item.open) return start();
    return start() + emit('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta });
  };

  return {
    push(event: StreamEvent): string {
      return closed ? '' : pushBlockEvent(event, { start, text, toolStart, toolDelta, reasoning, reasoningSignature }, held);
    },

    end(): string {
      if (closed) return '';
      closed = true;
      const out = start() + closeCurrent();
      const output = items.map((item) => itemJson(item, 'completed'));
      const outputText = items.map((item) => (item.kind === 'message' ? item.text : '')).join('');
      const response = responseObject({
        id,
        createdAt,
        model: ctx.model,
        status: finalStatus(held.finishReason).status,
        finishReason: held.finishReason,
        output,
        outputText,
        usage: held.usage ?? emptyUsage(),
        ...fields,
      });
      final = response;
      return out + emit('response.completed', { response });
    },

    final: () => final,

    error(error: GatewayError): string {
      if (closed) return '';
      closed = true;
      return emit('error', { code: error.errorCode, message: error.message, param: error.param });
    },
  };
};
