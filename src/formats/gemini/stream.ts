/**
 * Canonical stream events → Gemini `streamGenerateContent?alt=sse`: one `data:` frame per chunk,
 * each a whole GenerateContentResponse with the new parts. Gemini sends a function call whole: a
 * call's streamed arguments are gathered and sent in one part when the call is complete (the
 * next call starts, or the stream ends). The finish reason and usage arrive in any order from
 * the upstream (OpenAI-style upstreams send usage after the finish), so both go in the last chunk.
 */
import type { FinishReason, JsonObject, StreamEvent, ToolCall, Usage } from '../../canonical/types.ts';
import { emptyUsage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import { sseData } from '../sse.ts';
import type { EncodeContext, StreamEncoder } from '../types.ts';
import { encodeGeminiError, functionCallPart, geminiFinishReason, geminiUsage, responseIdOf } from './response.ts';

export const createGeminiStreamEncoder = (ctx: EncodeContext): StreamEncoder => {
  let id = '';
  let finish: FinishReason = 'stop';
  let usage: Usage | undefined;
  let call: ToolCall | undefined;
  let ended = false;

  const chunk = (parts: JsonObject[], last = false): string => {
    const candidate: JsonObject = { content: { role: 'model', parts }, index: 0 };
    if (last) candidate['finishReason'] = geminiFinishReason(finish);
    const out: JsonObject = { candidates: [candidate] };
    if (last) out['usageMetadata'] = geminiUsage(usage ?? emptyUsage());
    out['modelVersion'] = ctx.model;
    out['responseId'] = responseIdOf(id, ctx);
    return sseData(out);
  };
  const flushCall = (): string => {
    if (!call) return '';
    const part = functionCallPart(call);
    call = undefined;
    return chunk([part]);
  };

  const push = (ev: StreamEvent): string => {
    switch (ev.type) {
      case 'start':
        id = ev.id;
        if (ev.usage) usage = ev.usage;
        return '';
      case 'text':
        return ev.text === '' ? '' : flushCall() + chunk([{ text: ev.text }]);
      case 'reasoning':
        return ev.text === '' ? '' : flushCall() + chunk([{ text: ev.text, thought: true }]);
      case 'reasoning_signature':
        return '';
      case 'tool_call_start': {
        const before = flushCall();
        call = { id: ev.id, name: ev.name, arguments: '' };
        return before;
      }
      case 'tool_call_delta':
        if (call) call.arguments += ev.arguments;
        return '';
      case 'finish':
        finish = ev.reason;
        return '';
      case 'usage':
        usage = ev.usage;
        return '';
    }
  };

  return {
    push,
    end() {
      if (ended) return '';
      ended = true;
      if (!call) return chunk([], true);
      const part = functionCallPart(call);
      call = undefined;
      return chunk([part], true);
    },
    error: (error: GatewayError) => {
      ended = true;
      return sseData(encodeGeminiError(error));
    },
  };
};
