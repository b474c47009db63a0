import { describe, expect, test } from 'bun:test';
import type { CanonicalRequest, Message } from '../canonical/types.ts';
import { echoAdapter, wordChunks } from './echo.ts';
import type { UpstreamTarget } from './types.ts';

const target: UpstreamTarget = {
  upstreamModel: 'echo-1',
  connection: { id: 'c', name: 'echo', provider: 'echo', options: {} },
};

const req = (messages: Message[], extra: Partial<CanonicalRequest> = {}): CanonicalRequest => ({
  model: 'echo',
  stream: false,
  includeUsage: false,
  messages,
  ...extra,
});

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const system = (text: string): Message => ({ role: 'system', content: [{ type: 'text', text }] });

const weatherTool = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

describe('echo provider', () => {
  test('complete returns the last user message with deterministic usage', () => {
    const r = echoAdapter.complete(req([system('be nice'), user('first one'), user('Hello   there world')]), target);
    expect(r).toMatchObject({
      model: 'echo-1',
      text: 'Hello   there world',
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 7, outputTokens: 3 },
    });
    expect(r.id).toMatch(/^echo-[0-9a-f]{8}$/);
    expect(echoAdapter.complete(req([system('be nice'), user('first one'), user('Hello   there world')]), target).id).toBe(r.id);
  });

  test("no user message → 'echo', usage at least 1", () => {
    expect(echoAdapter.complete(req([]), target)).toMatchObject({ text: 'echo', usage: { inputTokens: 1, outputTokens: 1 } });
  });

  test('stream: start, one text event per word (with trailing space), finish, usage', () => {
    const r = req([user('one two  three')], { stream: true });
    const events = echoAdapter.stream(r, target);
    expect(events).toEqual([
      { type: 'start', id: echoAdapter.complete(r, target).id, model: 'echo-1' },
      { type: 'text', text: 'one ' },
      { type: 'text', text: 'two  ' },
      { type: 'text', text: 'three' },
      { type: 'finish', reason: 'stop' },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 3 } },
    ]);
  });

  test('stream text concatenates to the complete text', () => {
    for (const t of ['  leading', 'trailing  ', 'a', 'émoji 👋 ok', 'multi\nline\ttext']) {
      expect(wordChunks(t).join('')).toBe(t);
      const streamed = echoAdapter
        .stream(req([user(t)]), target)
        .map((e) => (e.type === 'text' ? e.text : ''))
        .join('');
      expect(streamed).toBe(echoAdapter.complete(req([user(t)]), target).text);
    }
  });

  test("'call <name> <json>' with tools → a tool call", () => {
    const r = echoAdapter.complete(req([user('call get_weather {"city":"Paris"}')], { tools: [weatherTool] }), target);
    expect(r.finishReason).toBe('tool_calls');
    expect(r.text).toBe('');
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(r.toolCalls[0]?.id).toMatch(/^call_[0-9a-f]{8}$/);

    const events = echoAdapter.stream(req([user('call get_weather {"city":"Paris"}')], { tools: [weatherTool], stream: true }), target);
    expect(events.map((e) => e.type)).toEqual(['start', 'tool_call_start', 'tool_call_delta', 'finish', 'usage']);
    expect(events[1]).toEqual({ type: 'tool_call_start', index: 0, id: r.toolCalls[0]?.id ?? '', name: 'get_weather' });
    expect(events[2]).toEqual({ type: 'tool_call_delta', index: 0, arguments: '{"city":"Paris"}' });
    expect(events[3]).toEqual({ type: 'finish', reason: 'tool_calls' });
  });

  test("'call' without arguments → '{}'; without tools it is plain text", () => {
    expect(echoAdapter.complete(req([user('call ping')], { tools: [weatherTool] }), target).toolCalls[0]).toMatchObject({
      name: 'ping',
      arguments: '{}',
    });
    expect(echoAdapter.complete(req([user('call get_weather {}')]), target)).toMatchObject({
      text: 'call get_weather {}',
      finishReason: 'stop',
    });
  });
});
