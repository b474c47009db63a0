/** Canonical stream events → Chat Completions `chat.completion.chunk` SSE (data-only frames). */
import { type FinishReason, type JsonObject, type StreamEvent, type Usage, emptyUsage } from '../../canonical/types.ts';
import { type GatewayError, toInferenceBody } from '../../core/errors.ts';
import { SSE_DONE, sseData } from '../sse.ts';
import { nowSeconds } from '../shared.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import { chatId, chatUsage } from './response.ts';

export const createChatStreamEncoder = (ctx: EncodeContext): StreamEncoder => {
  const created = nowSeconds(ctx);
  let id = '';
  let started = false;
  let finished = false;
  let closed = false;
  let usage: Usage | undefined;

  const chunk = (choices: JsonObject[], extra: JsonObject = {}): string => {
    const body: JsonObject = { id, object: 'chat.completion.chunk', created, model: ctx.model, choices };
    if (ctx.includeUsage) body.usage = null;
    return sseData({ ...body, ...extra });
  };
  const choice = (delta: JsonObject, finishReason: FinishReason | null = null): JsonObject => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finishReason,
  });

  /** The first chunk announces the assistant role; emitted lazily if `start` never came. */
  const start = (upstreamId = ''): string => {
    if (started) return '';
    started = true;
    id = chatId(upstreamId, ctx);
    return chunk([choice({ role: 'assistant', content: '' })]);
  };

  const finish = (reason: FinishReason): string => {
    if (finished) return '';
    finished = true;
    return chunk([choice({}, reason)]);
  };

  return {
    push(event: StreamEvent): string {
      if (closed) return '';
      switch (event.type) {
        case 'start':
          if (event.usage) usage = event.usage;
          return start(event.id);
        case 'text':
          if (event.text === '') return start();
          return start() + chunk([choice({ content: event.text })]);
        case 'reasoning':
          return start();
        case 'tool_call_start':
          return (
            start() +
            chunk([
              choice({
                tool_calls: [{ index: event.index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }],
              }),
            ])
          );
        case 'tool_call_delta':
          if (event.arguments === '') return start();
          return start() + chunk([choice({ tool_calls: [{ index: event.index, function: { arguments: event.arguments } }] })]);
        case 'finish':
          return start() + finish(event.reason);
        case 'usage':
          usage = event.usage;
          return start();
      }
    },

    end(): string {
      if (closed) return '';
      closed = true;
      let out = start() + finish('stop');
      if (ctx.includeUsage) out += sseData({ id, object: 'chat.completion.chunk', created, model: ctx.model, choices: [], usage: chatUsage(usage ?? emptyUsage()) });
      return out + SSE_DONE;
    },

    error(error: GatewayError): string {
      if (closed) return '';
      closed = true;
      const body = toInferenceBody(error);
      return sseData({ error: { ...body.error } });
    },
  };
};
