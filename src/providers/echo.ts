/**
 * The built-in `echo` provider: answers in-process with the last user message, so the gateway can
 * be tried (and tested) without any upstream. Deterministic text and usage.
 *
 * With tools in the request and a last user message like `call get_weather {"city":"Paris"}`, it
 * answers with that tool call instead (finish `tool_calls`).
 */
import type { CanonicalRequest, CanonicalResponse, StreamEvent, ToolCall, Usage } from '../canonical/types.ts';
import { textOf } from '../canonical/types.ts';
import { echoExtra } from './echo-extra.ts';
import type { LocalProviderAdapter, UpstreamTarget } from './types.ts';

const words = (s: string): number => s.split(/\s+/).filter((w) => w !== '').length;

/** FNV-1a, 32 bit, as 8 hex digits. */
const shortHash = (s: string): string => {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
};

interface EchoAnswer {
  id: string;
  text: string;
  toolCall?: ToolCall;
  usage: Usage;
}

const answer = (request: CanonicalRequest): EchoAnswer => {
  const allText = request.messages.map((m) => textOf(m.content)).join(' ');
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
  const prompt = lastUser ? textOf(lastUser.content) : '';
  const id = `echo-${shortHash(allText)}`;
  const inputTokens = Math.max(1, words(allText));

  const call = /^call\s+(\S+)\s*([\s\S]*)$/.exec(prompt.trim());
  if ((request.tools ?? []).length > 0 && prompt.trimStart().startsWith('call ') && call) {
    const name = call[1] ?? '';
    const args = (call[2] ?? '').trim() || '{}';
    return {
      id,
      text: '',
      toolCall: { id: `call_${shortHash(`${id}:${name}:${args}`)}`, name, arguments: args },
      usage: { inputTokens, outputTokens: Math.max(1, words(`${name} ${args}`)) },
    };
  }
  const text = prompt.trim() === '' ? 'echo' : prompt;
  return { id, text, usage: { inputTokens, outputTokens: Math.max(1, words(text)) } };
};

/** The reply as word chunks, each word with its trailing whitespace; they concatenate to `text`. */
export const wordChunks = (text: string): string[] => text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text]);

export const echoAdapter: LocalProviderAdapter = {
  kind: 'local',
  id: 'echo',
  complete(request: CanonicalRequest, target: UpstreamTarget): CanonicalResponse {
    const a = answer(request);
    return {
      id: a.id,
      model: target.upstreamModel,
      created: Math.floor(Date.now() / 1000),
      text: a.text,
      toolCalls: a.toolCall ? [a.toolCall] : [],
      finishReason: a.toolCall ? 'tool_calls' : 'stop',
      usage: a.usage,
    };
  },
  stream(request: CanonicalRequest, target: UpstreamTarget): StreamEvent[] {
    const a = answer(request);
    const events: StreamEvent[] = [{ type: 'start', id: a.id, model: target.upstreamModel }];
    if (a.toolCall) {
      events.push(
        { type: 'tool_call_start', index: 0, id: a.toolCall.id, name: a.toolCall.name },
        { type: 'tool_call_delta', index: 0, arguments: a.toolCall.arguments },
        { type: 'finish', reason: 'tool_calls' },
      );
    } else {
      for (const text of wordChunks(a.text)) events.push({ type: 'text', text });
      events.push({ type: 'finish', reason: 'stop' });
    }
    events.push({ type: 'usage', usage: a.usage });
    return events;
  },
  extra: echoExtra,
};
