/**
 * Canonical stream events → ConverseStream events. Each event is written as an SSE frame
 * (`event: <type>\ndata: <json>\n\n`); the Converse endpoint turns every frame into one AWS
 * event-stream message (data-plane/converse.ts), as it does for a Bedrock upstream's relayed
 * frames. An error is an exception frame (`validationException`, `throttlingException`…).
 * Finish and usage are held until the end (OpenAI-style upstreams send usage after the finish):
 * `messageStop` then `metadata` close the stream.
 */
import type { FinishReason, JsonObject, StreamEvent, Usage } from '../../canonical/types.ts';
import { emptyUsage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import { sseEvent } from '../sse.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import { converseStopReason, converseUsage } from './response.ts';

const EXCEPTIONS: Record<number, string> = {
  400: 'validationException',
  429: 'throttlingException',
  503: 'serviceUnavailableException',
  424: 'modelStreamErrorException',
  502: 'modelStreamErrorException',
};

type Block = 'text' | 'reasoning' | number;

export const createConverseStreamEncoder = (ctx: EncodeContext): StreamEncoder => {
  const receivedAt = ctx.receivedAt ?? Date.now();
  let started = false;
  let ended = false;
  let index = -1;
  let open: Block | undefined;
  let finish: FinishReason = 'stop';
  let usage: Usage | undefined;

  const start = (): string => {
    if (started) return '';
    started = true;
    return sseEvent('messageStart', { role: 'assistant' });
  };
  const close = (): string => {
    if (open === undefined) return '';
    open = undefined;
    return sseEvent('contentBlockStop', { contentBlockIndex: index });
  };
  /** Opens `block` unless it is the open one; a tool block starts with its id and name. */
  const enter = (block: Block, startOf?: JsonObject): string => {
    if (open === block) return '';
    let out = close();
    index++;
    open = block;
    if (startOf) out += sseEvent('contentBlockStart', { contentBlockIndex: index, start: startOf });
    return out;
  };
  const delta = (d: JsonObject): string => sseEvent('contentBlockDelta', { contentBlockIndex: index, delta: d });

  const push = (ev: StreamEvent): string => {
    const head = start();
    switch (ev.type) {
      case 'start':
        if (ev.usage) usage = ev.usage;
        return head;
      case 'text':
        return ev.text === '' ? head : head + enter('text') + delta({ text: ev.text });
      case 'reasoning':
        return ev.text === '' ? head : head + enter('reasoning') + delta({ reasoningContent: { text: ev.text } });
      case 'reasoning_signature':
        return head + enter('reasoning') + delta({ reasoningContent: { signature: ev.signature } });
      case 'tool_call_start':
        return head + enter(ev.index, { toolUse: { toolUseId: ev.id, name: ev.name } });
      case 'tool_call_delta':
        return ev.arguments === '' || open !== ev.index ? head : head + delta({ toolUse: { input: ev.arguments } });
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
        sseEvent('messageStop', { stopReason: converseStopReason(finish) }) +
        sseEvent('metadata', { usage: converseUsage(usage ?? emptyUsage()), metrics: { latencyMs: Math.max(0, Date.now() - receivedAt) } })
      );
    },
    error(error: GatewayError) {
      ended = true;
      return sseEvent(EXCEPTIONS[error.status] ?? 'internalServerException', { message: error.message });
    },
  };
};
