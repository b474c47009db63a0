import { describe, expect, test } from 'bun:test';
import { GatewayError } from '../../core/errors.ts';
import { expectInvalid, goldenCtx } from '../test-support.ts';
import { responsesCodec as codec } from './index.ts';

const ok = { model: 'm', input: 'hi' };
const item = (i: unknown) => ({ model: 'm', input: [i] });

describe('responses decodeRequest validation', () => {
  const cases: [string, unknown, string | null][] = [
    ['array body', [1], null],
    ['number body', 5, null],
    ['missing model', { input: 'hi' }, 'model'],
    ['empty model', { model: '', input: 'hi' }, 'model'],
    ['missing input', { model: 'm' }, 'input'],
    ['null input', { model: 'm', input: null }, 'input'],
    ['numeric input', { model: 'm', input: 5 }, 'input'],
    ['object input', { model: 'm', input: { role: 'user' } }, 'input'],
    ['item not object', item('hi'), 'input.0'],
    ['message without role', item({ type: 'message', content: 'x' }), 'input.0.role'],
    ['unknown role', item({ role: 'tool', content: 'x' }), 'input.0.role'],
    ['message without content', item({ role: 'user' }), 'input.0.content'],
    ['content number', item({ role: 'user', content: 1 }), 'input.0.content'],
    ['text part without text', item({ role: 'user', content: [{ type: 'input_text' }] }), 'input.0.content.0.text'],
    ['function_call without call_id', item({ type: 'function_call', name: 'f', arguments: '{}' }), 'input.0.call_id'],
    ['function_call without name', item({ type: 'function_call', call_id: 'c', arguments: '{}' }), 'input.0.name'],
    ['function_call arguments object', item({ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }), 'input.0.arguments'],
    ['function_call_output without output', item({ type: 'function_call_output', call_id: 'c' }), 'input.0.output'],
    ['function_call_output without call_id', item({ type: 'function_call_output', output: 'x' }), 'input.0.call_id'],
    ['instructions number', { ...ok, instructions: 1 }, 'instructions'],
    ['max_output_tokens zero', { ...ok, max_output_tokens: 0 }, 'max_output_tokens'],
    ['max_output_tokens string', { ...ok, max_output_tokens: '5' }, 'max_output_tokens'],
    ['temperature string', { ...ok, temperature: 'x' }, 'temperature'],
    ['stream string', { ...ok, stream: 1 }, 'stream'],
    ['tools not array', { ...ok, tools: {} }, 'tools'],
    ['function tool without name', { ...ok, tools: [{ type: 'function', parameters: {} }] }, 'tools.0.name'],
    ['tool_choice string', { ...ok, tool_choice: 'any' }, 'tool_choice'],
    ['tool_choice without name', { ...ok, tool_choice: { type: 'function' } }, 'tool_choice.name'],
    ['text not object', { ...ok, text: 'json' }, 'text'],
    ['text.format type', { ...ok, text: { format: { type: 'yaml' } } }, 'text.format.type'],
    ['json_schema without name', { ...ok, text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name'],
    ['reasoning effort', { ...ok, reasoning: { effort: 'max' } }, 'reasoning.effort'],
    ['metadata value', { ...ok, metadata: { k: true } }, 'metadata.k'],
    ['previous_response_id', { ...ok, previous_response_id: 'resp_1' }, 'previous_response_id'],
    ['conversation', { ...ok, conversation: 'conv_1' }, 'conversation'],
  ];
  for (const [name, body, param] of cases) {
    test(name, () => {
      expectInvalid(() => codec.decodeRequest(body), param);
    });
  }

  // What has no canonical form is noted, not refused: a Responses-native upstream takes it as sent.
  const nativeOnly: [string, unknown, string][] = [
    ['input_file by file_id', item({ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }), 'input.0.content.0.file_id'],
    [
      'input_file detail',
      item({ role: 'user', content: [{ type: 'input_file', file_url: 'https://x.test/a.pdf', detail: 'high' }] }),
      'input.0.content.0.detail',
    ],
    [
      'input_file outside a user message',
      item({ role: 'assistant', content: [{ type: 'input_file', file_url: 'https://x.test/a.pdf' }] }),
      'input.0.content.0.type',
    ],
    ['file_id image', item({ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }), 'input.0.content.0.image_url'],
    ['other item type', item({ type: 'web_search_call', id: 'ws_1' }), 'input.0.type'],
    ['built-in tool', { ...ok, tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }] }, 'tools.1.type'],
    ['hosted tool_choice', { ...ok, tool_choice: { type: 'file_search' } }, 'tool_choice.type'],
  ];
  for (const [name, body, param] of nativeOnly) {
    test(`native only: ${name}`, () => {
      const r = codec.decodeRequest(body);
      expect(r.nativeOnly?.param).toBe(param);
    });
  }
  test('a plain request is not native only; function tools stay', () => {
    const r = codec.decodeRequest({ ...ok, tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }] });
    expect(r.tools?.map((t) => t.name)).toEqual(['f']);
    expect(codec.decodeRequest(ok).nativeOnly).toBeUndefined();
  });

  test('includeUsage is always false', () => {
    expect(codec.decodeRequest({ ...ok, stream: true, stream_options: { include_usage: true } }).includeUsage).toBe(false);
  });

  test('empty instructions add no system message', () => {
    expect(codec.decodeRequest({ ...ok, instructions: '' }).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });
});

describe('responses encodeError', () => {
  test('uses the seed error body', () => {
    const e = new GatewayError({ kind: 'invalid_request', message: 'Bad.', param: 'input' });
    expect(codec.encodeError(e)).toEqual({
      error: { message: 'Bad.', type: 'invalid_request_error', param: 'input', code: 'invalid_request' },
    });
  });
});

describe('responses stream encoder edge cases', () => {
  const frames = (sse: string) =>
    sse
      .split('\n\n')
      .filter((f) => f !== '')
      .map((f) => JSON.parse(f.split('\n')[1]?.slice(6) ?? '') as { type: string; response?: { output: { arguments?: string }[] } });

  test('a late fragment for a closed call reaches response.completed without a stray delta', () => {
    const enc = codec.createStreamEncoder(goldenCtx());
    let out = enc.push({ type: 'tool_call_start', index: 0, id: 'c0', name: 'f' });
    out += enc.push({ type: 'tool_call_delta', index: 0, arguments: '{"a":' });
    out += enc.push({ type: 'tool_call_start', index: 1, id: 'c1', name: 'g' });
    const late = enc.push({ type: 'tool_call_delta', index: 0, arguments: '1}' });
    out += late + enc.end();
    expect(late).toBe('');
    const completed = frames(out).at(-1);
    expect(completed?.type).toBe('response.completed');
    expect(completed?.response?.output.map((o) => o.arguments)).toEqual(['{"a":1}', '']);
  });

  test('a delta for an unknown tool index is dropped', () => {
    const enc = codec.createStreamEncoder(goldenCtx());
    enc.push({ type: 'start', id: 'x', model: 'm' });
    expect(enc.push({ type: 'tool_call_delta', index: 3, arguments: '{}' })).toBe('');
  });

  test('end() without any event still produces a complete lifecycle', () => {
    const types = frames(codec.createStreamEncoder(goldenCtx()).end()).map((f) => f.type);
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.completed']);
  });
});
