import { expect, test } from 'bun:test';
import { assembleStream, sseEventData } from '../src/formats/stream-assembly.ts';
import { hasValued, Relay } from '../src/data-plane/relay.ts';
import { responseView } from '../src/records/assemble.ts';

/**
 * A relayed stream is recorded as the client got it and assembled when the record is read: the
 * assemblers per client format, the relay's test of which events may go by undecoded, and the
 * record view.
 */

const data = (o: unknown): string => `data: ${JSON.stringify(o)}\n\n`;
const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  data({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-mini', system_fingerprint: 'fp_1', choices, ...extra });

test('a Chat Completions stream assembles into its chat.completion: choices, content, refusal, tool calls in pieces, log probabilities, usage', () => {
  const sse = [
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: 'Hel' }, logprobs: { content: [{ token: 'Hel', logprob: -0.1 }] }, finish_reason: null }]),
    chunk([{ index: 1, delta: { role: 'assistant', refusal: 'No.' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: 'lo' }, logprobs: { content: [{ token: 'lo', logprob: -0.2 }] }, finish_reason: null }]),
    chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get', arguments: '' } }] }, finish_reason: null }]),
    chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }, finish_reason: null }]),
    chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '1}' } }] }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }, { index: 1, delta: {}, finish_reason: 'stop' }]),
    chunk([], { usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }),
    'data: [DONE]\n\n',
  ].join('');
  expect(assembleStream('chat', sse)).toEqual({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-mini',
    system_fingerprint: 'fp_1',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a":1}' } }] },
        logprobs: { content: [{ token: 'Hel', logprob: -0.1 }, { token: 'lo', logprob: -0.2 }] },
        finish_reason: 'tool_calls',
      },
      { index: 1, message: { role: 'assistant', content: null, refusal: 'No.' }, logprobs: null, finish_reason: 'stop' },
    ],
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
  });
});

test('a Messages stream assembles into its message with every block and the final usage', () => {
  const ev = (o: Record<string, unknown>) => `event: ${String(o.type)}\n${data(o)}`;
  const sse = [
    ev({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-mini', content: [], stop_reason: null, usage: { input_tokens: 9, output_tokens: 1 } } }),
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
    ev({ type: 'content_block_stop', index: 0 }),
    ev({ type: 'ping' }),
    ev({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get', input: {} } }),
    ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a"' } }),
    ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: ':1}' } }),
    ev({ type: 'content_block_stop', index: 1 }),
    ev({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 12 } }),
    ev({ type: 'message_stop' }),
  ].join('');
  expect(assembleStream('messages', sse)).toEqual({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-mini',
    content: [
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'tool_use', id: 'toolu_1', name: 'get', input: { a: 1 } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 9, output_tokens: 12 },
  });
});

test('a Responses stream assembles into its terminal response; one cut before it, into the created response', () => {
  const ev = (o: Record<string, unknown>) => `event: ${String(o.type)}\n${data(o)}`;
  const created = ev({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } });
  const delta = ev({ type: 'response.output_text.delta', delta: 'Hi' });
  const done = ev({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hi' }] }] } });
  expect(assembleStream('responses', created + delta + done)).toMatchObject({ id: 'resp_1', status: 'completed' });
  expect(assembleStream('responses', created + delta)).toMatchObject({ id: 'resp_1', status: 'in_progress' });
  expect(assembleStream('responses', delta)).toBeUndefined();
});

test('SSE text: CR, CRLF and LF line ends, multi-line data, comments and [DONE]', () => {
  expect(sseEventData(': keep-alive\r\n\r\ndata: {"a":1}\r\n\r\ndata: {"b":\ndata: 2}\n\ndata:{"c":3}\r\rdata: [DONE]\n\n')).toEqual(['{"a":1}', '{"b":\n2}', '{"c":3}']);
});

test('a valued member is told from a null one and from text that only looks like one', () => {
  expect(hasValued('{"finish_reason":null,"usage":null}', '"finish_reason"')).toBe(false);
  expect(hasValued('{"finish_reason" : "stop"}', '"finish_reason"')).toBe(true);
  expect(hasValued('{"usage":{"prompt_tokens":1}}', '"usage"')).toBe(true);
  expect(hasValued('{"content":"\\"usage\\": 1","usage":null}', '"usage"')).toBe(false);
  expect(hasValued('{"content":"usage"}', '"usage"')).toBe(false);
});

test('a lean relay lets content go by undecoded once the stream started, never usage, a finish, an error or anything unknown', () => {
  const chat = new Relay('chat', 'up', 'gpt-mini', false, { lean: true });
  const content = { data: '{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":null}' };
  expect(chat.skips(content)).toBe(false); // not started yet
  chat.started = true;
  expect(chat.skips(content)).toBe(true);
  expect(chat.skips({ data: '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}' })).toBe(false);
  expect(chat.skips({ data: '{"choices":[],"usage":{"prompt_tokens":1}}' })).toBe(false);
  expect(chat.skips({ data: '{"error":{"message":"boom"}}' })).toBe(false);
  expect(chat.skips({ data: '{"choices":[{"delta":{"content":"error"}}]}' })).toBe(false);
  expect(chat.skips({ data: '[DONE]' })).toBe(false);
  expect(new Relay('chat', 'up', 'gpt-mini', false).skips(content)).toBe(false); // not lean

  const messages = new Relay('messages', 'up', 'claude-mini', true, { lean: true });
  messages.started = true;
  expect(messages.skips({ event: 'content_block_delta', data: '{"type":"content_block_delta"}' })).toBe(true);
  expect(messages.skips({ event: 'message_delta', data: '{"type":"message_delta"}' })).toBe(false);
  expect(messages.skips({ event: 'content_block_delta', data: '{"type":"error","error":{}}' })).toBe(false);
  expect(messages.skips({ data: '{"type":"content_block_delta"}' })).toBe(false);

  const responses = new Relay('responses', 'up', 'gpt-mini', true, { lean: true });
  responses.started = true;
  expect(responses.skips({ event: 'response.output_text.delta', data: '{}' })).toBe(true);
  expect(responses.skips({ event: 'response.output_item.added', data: '{}' })).toBe(false);
  expect(responses.skips({ event: 'response.completed', data: '{}' })).toBe(false);
});

test('the relay keeps what the client got for the record, up to its bound', () => {
  const r = new Relay('chat', 'up', 'gpt-mini', true, { lean: true });
  r.verbatim('data: {"model":"up"}\n\n');
  expect(r.take()).toBe('data: {"model":"gpt-mini"}\n\n');
  expect(r.recorded).toBe('data: {"model":"gpt-mini"}\n\n');
  r.verbatim(`data: "${'x'.repeat(200_000)}"\n\n`);
  r.take();
  expect(r.cut).toBe(true);
  expect(r.recorded).toBe('data: {"model":"gpt-mini"}\n\n');
});

test('the record view assembles a relayed stream, keeps the error beside what was streamed, and leaves other bodies alone', () => {
  const sse = chunk([{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }]);
  expect(responseView('/v1/chat/completions', true, { sse })).toEqual({
    responseBody: { id: 'chatcmpl-1', object: 'chat.completion', created: 1_700_000_000, model: 'gpt-mini', system_fingerprint: 'fp_1', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, logprobs: null, finish_reason: 'stop' }] },
    responseStream: sse,
  });
  const failed = responseView('/v1/chat/completions', true, { error: { code: 'upstream_error' }, sse, cut: true });
  expect(failed).toMatchObject({ responseBody: { error: { code: 'upstream_error' }, partial: { object: 'chat.completion' } }, responseStream: sse, responseStreamCut: true });
  expect(responseView('/v1/chat/completions', false, { sse })).toEqual({ responseBody: { sse } });
  expect(responseView('/v1/chat/completions', true, { text: 'summary' })).toEqual({ responseBody: { text: 'summary' } });
  expect(responseView('/v1/chat/completions', true, null)).toEqual({ responseBody: null });
});
