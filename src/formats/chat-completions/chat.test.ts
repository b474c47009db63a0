import { describe, expect, test } from 'bun:test';
import { GatewayError } from '../../core/errors.ts';
import { expectInvalid, goldenCtx } from '../test-support.ts';
import { chatCompletionsCodec as codec } from './index.ts';

interface Chunk {
  id: string;
  choices: { delta: unknown; finish_reason: string | null }[];
}

const ok = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const msg = (m: unknown) => ({ model: 'm', messages: [m] });

describe('chat decodeRequest validation', () => {
  const cases: [string, unknown, string | null][] = [
    ['array body', [], null],
    ['string body', 'hello', null],
    ['null body', null, null],
    ['missing model', { messages: ok.messages }, 'model'],
    ['empty model', { ...ok, model: '' }, 'model'],
    ['numeric model', { ...ok, model: 5 }, 'model'],
    ['missing messages', { model: 'm' }, 'messages'],
    ['empty messages', { model: 'm', messages: [] }, 'messages'],
    ['messages not array', { model: 'm', messages: 'hi' }, 'messages'],
    ['message not object', msg('hi'), 'messages.0'],
    ['missing role', msg({ content: 'hi' }), 'messages.0.role'],
    ['unknown role', msg({ role: 'wizard', content: 'hi' }), 'messages.0.role'],
    ['missing user content', msg({ role: 'user' }), 'messages.0.content'],
    ['numeric content', msg({ role: 'user', content: 5 }), 'messages.0.content'],
    ['part without type', msg({ role: 'user', content: [{ text: 'x' }] }), 'messages.0.content.0.type'],
    ['text part without text', msg({ role: 'user', content: [{ type: 'text' }] }), 'messages.0.content.0.text'],
    ['image without url', msg({ role: 'user', content: [{ type: 'image_url', image_url: {} }] }), 'messages.0.content.0.image_url.url'],
    [
      'bad image detail',
      msg({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'u', detail: 'x' } }] }),
      'messages.0.content.0.image_url.detail',
    ],
    ['tool without id', msg({ role: 'tool', content: 'r' }), 'messages.0.tool_call_id'],
    [
      'tool call without name',
      msg({ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { arguments: '{}' } }] }),
      'messages.0.tool_calls.0.function.name',
    ],
    [
      'tool call without id',
      msg({ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }),
      'messages.0.tool_calls.0.id',
    ],
    ['tool calls not array', msg({ role: 'assistant', tool_calls: {} }), 'messages.0.tool_calls'],
    ['max_tokens zero', { ...ok, max_tokens: 0 }, 'max_tokens'],
    ['max_tokens string', { ...ok, max_tokens: '10' }, 'max_tokens'],
    ['max_tokens fraction', { ...ok, max_tokens: 1.5 }, 'max_tokens'],
    ['max_completion_tokens negative', { ...ok, max_completion_tokens: -1 }, 'max_completion_tokens'],
    ['temperature string', { ...ok, temperature: 'hot' }, 'temperature'],
    ['top_p string', { ...ok, top_p: '1' }, 'top_p'],
    ['seed fraction', { ...ok, seed: 1.2 }, 'seed'],
    ['n zero', { ...ok, n: 0 }, 'n'],
    ['stop number', { ...ok, stop: 5 }, 'stop'],
    ['stop element', { ...ok, stop: ['a', 1] }, 'stop.1'],
    ['stream string', { ...ok, stream: 'yes' }, 'stream'],
    ['include_usage string', { ...ok, stream_options: { include_usage: 'yes' } }, 'stream_options.include_usage'],
    ['stream_options array', { ...ok, stream_options: [] }, 'stream_options'],
    ['user number', { ...ok, user: 1 }, 'user'],
    ['tools object', { ...ok, tools: {} }, 'tools'],
    ['tool without function', { ...ok, tools: [{ type: 'function' }] }, 'tools.0.function'],
    ['tool without name', { ...ok, tools: [{ type: 'function', function: { parameters: {} } }] }, 'tools.0.function.name'],
    [
      'tool parameters array',
      { ...ok, tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] },
      'tools.0.function.parameters',
    ],
    ['tool_choice unknown string', { ...ok, tool_choice: 'any' }, 'tool_choice'],
    ['tool_choice without function', { ...ok, tool_choice: { type: 'function' } }, 'tool_choice.function'],
    ['tool_choice number', { ...ok, tool_choice: 3 }, 'tool_choice'],
    ['parallel_tool_calls string', { ...ok, parallel_tool_calls: 'no' }, 'parallel_tool_calls'],
    ['response_format type', { ...ok, response_format: { type: 'xml' } }, 'response_format.type'],
    ['response_format no type', { ...ok, response_format: {} }, 'response_format.type'],
    ['json_schema missing', { ...ok, response_format: { type: 'json_schema' } }, 'response_format.json_schema'],
    [
      'json_schema no name',
      { ...ok, response_format: { type: 'json_schema', json_schema: { schema: {} } } },
      'response_format.json_schema.name',
    ],
    ['reasoning_effort', { ...ok, reasoning_effort: 'extreme' }, 'reasoning_effort'],
    ['metadata value', { ...ok, metadata: { a: 1 } }, 'metadata.a'],
  ];
  for (const [name, body, param] of cases) {
    test(name, () => {
      expectInvalid(() => codec.decodeRequest(body), param);
    });
  }

  // What has no canonical form is noted, not refused: OpenAI takes it as sent.
  const nativeOnly: [string, unknown, string][] = [
    ['unsupported part', msg({ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }), 'messages.0.content.0.type'],
    ['tool type custom', { ...ok, tools: [{ type: 'custom', custom: { name: 'x' } }] }, 'tools.0.type'],
    [
      'allowed_tools choice',
      { ...ok, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } },
      'tool_choice.type',
    ],
  ];
  for (const [name, body, param] of nativeOnly) {
    test(`native only: ${name}`, () => {
      expect(codec.decodeRequest(body).nativeOnly?.param).toBe(param);
    });
  }

  test('body error message', () => {
    expect(expectInvalid(() => codec.decodeRequest([]), null).message).toBe('Request body must be a JSON object');
  });

  test('missing field message names the field', () => {
    expect(expectInvalid(() => codec.decodeRequest({ model: 'm' }), 'messages').message).toContain("'messages'");
  });

  test('file parts: a PDF data URL is a document, plain text becomes text, a file_id or a non-user file is native only', () => {
    const pdf = codec.decodeRequest(
      msg({ role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } }] }),
    );
    expect(pdf.messages[0]?.content).toEqual([
      {
        type: 'document',
        source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBE' },
        filename: 'a.pdf',
        param: 'messages.0.content.0',
      },
    ]);
    const text = codec.decodeRequest(
      msg({ role: 'user', content: [{ type: 'file', file: { file_data: `data:text/plain;base64,${btoa('hello')}` } }] }),
    );
    expect(text.messages[0]?.content).toEqual([{ type: 'text', text: 'hello' }]);
    expect(codec.decodeRequest(msg({ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] })).nativeOnly?.param).toBe(
      'messages.0.content.0.file.file_id',
    );
    expect(
      codec.decodeRequest(msg({ role: 'system', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE' } }] }))
        .nativeOnly?.param,
    ).toBe('messages.0.content.0.type');
    expectInvalid(
      () => codec.decodeRequest(msg({ role: 'user', content: [{ type: 'file', file: {} }] })),
      'messages.0.content.0.file.file_data',
    );
  });

  test('assistant tool call arguments given as an object are serialised', () => {
    const req = codec.decodeRequest(
      msg({ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: { a: 1 } } }] }),
    );
    expect(req.messages[0]).toEqual({ role: 'assistant', content: [], toolCalls: [{ id: 'c', name: 'f', arguments: '{"a":1}' }] });
  });
});

describe('chat encodeError', () => {
  test('uses the seed error body', () => {
    const e = new GatewayError({ kind: 'rate_limit', message: 'Slow down.' });
    expect(codec.encodeError(e)).toEqual({
      error: { message: 'Slow down.', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
    });
  });
});

describe('chat stream encoder edge cases', () => {
  test('events before start still open with the role chunk and a derived id', () => {
    const enc = codec.createStreamEncoder(goldenCtx());
    const out = enc.push({ type: 'text', text: 'x' }) + enc.end();
    const chunks = out
      .split('\n\n')
      .filter((f) => f.startsWith('data: {'))
      .map((f) => JSON.parse(f.slice(6)) as Chunk);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks[0]?.id).toBe('chatcmpl-0f8e2a4c1b3d4e5f8a9b0c1d2e3f4a5b');
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  test('include_usage without any usage event still ends with a zero usage chunk', () => {
    const enc = codec.createStreamEncoder(goldenCtx(true));
    const out = enc.push({ type: 'start', id: 'a', model: 'm' }) + enc.end();
    expect(out).toContain('"choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0');
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  test('a second finish is ignored', () => {
    const enc = codec.createStreamEncoder(goldenCtx());
    enc.push({ type: 'finish', reason: 'length' });
    expect(enc.push({ type: 'finish', reason: 'stop' })).toBe('');
    expect(enc.end()).toBe('data: [DONE]\n\n');
  });

  test('error emits no [DONE]', () => {
    const enc = codec.createStreamEncoder(goldenCtx(true));
    const out = enc.error(new GatewayError({ kind: 'timeout', message: 'Too slow.' }));
    expect(out).toBe('data: {"error":{"message":"Too slow.","type":"timeout_error","param":null,"code":"timeout"}}\n\n');
  });
});
