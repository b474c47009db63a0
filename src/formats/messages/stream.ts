/** Canonical stream events → Anthropic Messages SSE (every frame has an `event:` line). */
import type { JsonObject, StreamEvent } from '../../canonical/types.ts';
import { emptyUsage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import { type HeldState, pushBlockEvent } from '../shared.ts';
import { sseEvent } from '../sse.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import { messageId, messagesUsage, stopReason } from './response.ts';

type Block = { index: number; kind: 'text' | 'tool_use' | 'thinking' };

export const createMessagesStreamEncoder = (ctx: EncodeContext): StreamEncoder => {
  let started = false;
  let closed = false;
  let nextIndex = 0;
  let open: Block | undefined;
  const held: HeldState = { finishReason: 'stop', usage: undefined };
  /** Canonical tool index → content block index. */
  const toolBlocks = new Map<number, number>();

  const emit = (type: string, payload: JsonObject = {}): string => sseEvent(type, { type, ...payload });

  const start = (upstreamId = ''): string => {
    if (started) return '';
    started = true;
    const u = held.usage ?? emptyUsage();
    const message: JsonObject = {
      id: messageId(upstreamId, ctx),
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: messagesUsage(u),
    };
    return emit('message_start', { message });
  };

  const closeOpen = (): string => {
    if (!open) return '';
    const index = open.index;
    open = undefined;
    return emit('content_block_stop', { index });
  };

  const openBlock = (kind: Block['kind'], contentBlock: JsonObject): string => {
    const out = closeOpen();
    open = { index: nextIndex++, kind };
    return out + emit('content_block_start', { index: open.index, content_block: contentBlock });
  };

  const text = (t: string): string => {
    let out = start();
    if (open?.kind !== 'text') out += openBlock('text', { type: 'text', text: '' });
    const index = open?.index ?? 0;
    // The per-token frame, written directly (same bytes as emit(), without building the object).
    return `${out}event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":${JSON.stringify(t)}}}\n\n`;
  };

  /** Reasoning as a thinking block (signature_delta before it closes, when the upstream signed it). */
  const reasoning = (t: string): string => {
    let out = start();
    if (open?.kind !== 'thinking') out += openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
    return out + emit('content_block_delta', { index: open?.index ?? 0, delta: { type: 'thinking_delta', thinking: t } });
  };

  const reasoningSignature = (signature: string): string => {
    if (open?.kind !== 'thinking') return start();
    return start() + emit('content_block_delta', { index: open.index, delta: { type: 'signature_delta', signature } });
  };

  const toolStart = (toolIndex: number, id: string, name: string): string => {
    const out = start() + openBlock('tool_use', { type: 'tool_use', id, name, input: {} });
    toolBlocks.set(toolIndex, nextIndex - 1);
    return out;
  };

  const toolDelta = (toolIndex: number, partial: string): string => {
    const index = toolBlocks.get(toolIndex);
    if (index === undefined) return start();
    // A fragment for an already-closed block still goes to its index (best effort; not expected in practice).
    return start() + emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: partial } });
  };

  return {
    push(event: StreamEvent): string {
      return closed ? '' : pushBlockEvent(event, { start, text, toolStart, toolDelta, reasoning, reasoningSignature }, held);
    },

    end(): string {
      if (closed) return '';
      closed = true;
      const out = start() + closeOpen();
      const delta = { stop_reason: stopReason(held.finishReason), stop_sequence: null };
      return out + emit('message_delta', { delta, usage: messagesUsage(held.usage ?? emptyUsage()) }) + emit('message_stop');
    },

    error(error: GatewayError): string {
      if (closed) return '';
      closed = true;
      // The seed's error fields ride along (as in the Messages error body): SDKs read type and message.
      return emit('error', { error: { type: error.type, message: error.message, code: error.errorCode } });
    },
  };
};
