/** Canonical stream events → Chat Completions `chat.completion.chunk` SSE (data-only frames). */
import { type FinishReason, type StreamEvent, type Usage, emptyUsage } from '../../canonical/types.ts';
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
  // Every chunk is `data: {"id":…,"object":…,"created":…,"model":…,"choices":[CHOICE](,"usage":null)}`:
  // the fixed parts are serialised once per stream, only the delta per event.
  let head = '';
  const tail = `]${ctx.includeUsage ? ',"usage":null' : ''}}\n\n`;

  const chunk = (choice: string): string => `${head}${choice}${tail}`;
  const choice = (delta: string, finishReason: FinishReason | null = null): string =>
    `{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finishReason === null ? 'null' : JSON.stringify(finishReason)}}`;

  /** The first chunk announces the assistant role; emitted lazily if `start` never came. */
  const start = (upstreamId = ''): string => {
    if (started) return '';
    started = true;
    id = chatId(upstreamId, ctx);
    head = `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${JSON.stringify(created)},"model":${JSON.stringify(ctx.model)},"choices":[`;
    return chunk(choice('{"role":"assistant","content":""}'));
  };

  const finish = (reason: FinishReason): string => {
    if (finished) return '';
    finished = true;
    return chunk(choice('{}', reason));
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
          return start() + chunk(choice(`{"content":${JSON.stringify(event.text)}}`));
        case 'reasoning':
          // The non-standard `reasoning_content` delta (DeepSeek's; what OpenAI-compatible clients read).
          if (event.text === '') return start();
          return start() + chunk(choice(`{"reasoning_content":${JSON.stringify(event.text)}}`));
        case 'reasoning_signature':
          return start();
        case 'tool_call_start':
          return (
            start() +
            chunk(
              choice(
                JSON.stringify({
                  tool_calls: [{ index: event.index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }],
                }),
              ),
            )
          );
        case 'tool_call_delta':
          if (event.arguments === '') return start();
          return (
            start() + chunk(choice(JSON.stringify({ tool_calls: [{ index: event.index, function: { arguments: event.arguments } }] })))
          );
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
      if (ctx.includeUsage)
        out += sseData({
          id,
          object: 'chat.completion.chunk',
          created,
          model: ctx.model,
          choices: [],
          usage: chatUsage(usage ?? emptyUsage()),
        });
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
