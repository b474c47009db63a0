import { describe, expect, test } from 'bun:test';
import { GatewayError } from '../../core/errors.ts';
import { expectInvalid, goldenCtx } from '../test-support.ts';
import { messagesCodec as codec } from './index.ts';

const ok = { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
const turn = (content: unknown, role = 'user') => ({ ...ok, messages: [{ role, content }] });

describe('messages decodeRequest validation', () => {
  const cases: [string, unknown, string | null][] = [
    ['array body', [], null],
    ['string body', 'x', null],
    ['missing model', { max_tokens: 10, messages: [] }, 'model'],
    ['empty model', { ...ok, model: '' }, 'model'],
    ['missing max_tokens', { model: 'm', messages: [] }, 'max_tokens'],
    ['max_tokens zero', { ...ok, max_tokens: 0 }, 'max_tokens'],
    ['max_tokens negative', { ...ok, max_tokens: -5 }, 'max_tokens'],
    ['max_tokens string', { ...ok, max_tokens: '10' }, 'max_tokens'],
    ['max_tokens fraction', { ...ok, max_tokens: 2.5 }, 'max_tokens'],
    ['missing messages', { model: 'm', max_tokens: 10 }, 'messages'],
    ['messages object', { ...ok, messages: {} }, 'messages'],
    ['message not object', { ...ok, messages: [1] }, 'messages.0'],
    ['system role in messages', { ...ok, messages: [{ role: 'system', content: 'x' }] }, 'messages.0.role'],
    ['missing role', { ...ok, messages: [{ content: 'x' }] }, 'messages.0.role'],
    ['missing content', { ...ok, messages: [{ role: 'user' }] }, 'messages.0.content'],
    ['content number', turn(5), 'messages.0.content'],
    ['block without type', turn([{ text: 'x' }]), 'messages.0.content.0.type'],
    ['text block without text', turn([{ type: 'text' }]), 'messages.0.content.0.text'],
    ['image without source', turn([{ type: 'image' }]), 'messages.0.content.0.source'],
    [
      'base64 without media_type',
      turn([{ type: 'image', source: { type: 'base64', data: 'x' } }]),
      'messages.0.content.0.source.media_type',
    ],
    ['url image without url', turn([{ type: 'image', source: { type: 'url' } }]), 'messages.0.content.0.source.url'],
    ['tool_use without id', turn([{ type: 'tool_use', name: 'f', input: {} }], 'assistant'), 'messages.0.content.0.id'],
    ['tool_use without name', turn([{ type: 'tool_use', id: 't', input: {} }], 'assistant'), 'messages.0.content.0.name'],
    ['tool_use input array', turn([{ type: 'tool_use', id: 't', name: 'f', input: [] }], 'assistant'), 'messages.0.content.0.input'],
    ['tool_result without id', turn([{ type: 'tool_result', content: 'x' }]), 'messages.0.content.0.tool_use_id'],
    ['tool_result content number', turn([{ type: 'tool_result', tool_use_id: 't', content: 3 }]), 'messages.0.content.0.content'],
    ['tool_result is_error string', turn([{ type: 'tool_result', tool_use_id: 't', is_error: 'yes' }]), 'messages.0.content.0.is_error'],
    ['system number', { ...ok, system: 5 }, 'system'],
    ['system image block', { ...ok, system: [{ type: 'image' }] }, 'system.0.type'],
    ['tools object', { ...ok, tools: {} }, 'tools'],
    ['tool without input_schema', { ...ok, tools: [{ name: 'f' }] }, 'tools.0.input_schema'],
    ['tool without name', { ...ok, tools: [{ input_schema: {} }] }, 'tools.0.name'],
    ['tool_choice string', { ...ok, tool_choice: 'auto' }, 'tool_choice'],
    ['tool_choice type', { ...ok, tool_choice: { type: 'required' } }, 'tool_choice.type'],
    ['tool_choice tool without name', { ...ok, tool_choice: { type: 'tool' } }, 'tool_choice.name'],
    ['stop_sequences string', { ...ok, stop_sequences: 'x' }, 'stop_sequences'],
    ['top_k fraction', { ...ok, top_k: 1.5 }, 'top_k'],
    ['temperature string', { ...ok, temperature: 'x' }, 'temperature'],
    ['stream string', { ...ok, stream: 'true' }, 'stream'],
    ['metadata user_id number', { ...ok, metadata: { user_id: 7 } }, 'metadata.user_id'],
    ['output_config format type', { ...ok, output_config: { format: { type: 'xml' } } }, 'output_config.format.type'],
  ];
  for (const [name, body, param] of cases) {
    test(name, () => {
      expectInvalid(() => codec.decodeRequest(body), param);
    });
  }

  // What has no canonical form is noted, not refused: an Anthropic upstream takes it as sent.
  const nativeOnly: [string, unknown, string][] = [
    ['unsupported block', turn([{ type: 'search_result', source: 'x', title: 't', content: [] }]), 'messages.0.content.0.type'],
    ['document file source', turn([{ type: 'document', source: { type: 'file', file_id: 'file_1' } }]), 'messages.0.content.0.source.type'],
    [
      'document context',
      turn([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' }, context: 'Q3' }]),
      'messages.0.content.0.context',
    ],
    [
      'document citations',
      turn([{ type: 'document', source: { type: 'url', url: 'https://x.test/a.pdf' }, citations: { enabled: true } }]),
      'messages.0.content.0.citations',
    ],
    ['image source type', turn([{ type: 'image', source: { type: 'file', file_id: 'f' } }]), 'messages.0.content.0.source.type'],
    ['tool_result in assistant turn', turn([{ type: 'tool_result', tool_use_id: 't' }], 'assistant'), 'messages.0.content.0.type'],
    [
      'tool_result bad block',
      turn([{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'search_result' }] }]),
      'messages.0.content.0.content.0.type',
    ],
    ['server tool', { ...ok, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools.0.type'],
  ];
  for (const [name, body, param] of nativeOnly) {
    test(`native only: ${name}`, () => {
      expect(codec.decodeRequest(body).nativeOnly?.param).toBe(param);
    });
  }

  test('an empty messages array is accepted', () => {
    expect(codec.decodeRequest({ ...ok, messages: [] }).messages).toEqual([]);
  });

  test('tool_choice variants', () => {
    expect(codec.decodeRequest({ ...ok, tool_choice: { type: 'auto' } }).toolChoice).toBe('auto');
    expect(codec.decodeRequest({ ...ok, tool_choice: { type: 'none' } }).toolChoice).toBe('none');
    const forced = codec.decodeRequest({ ...ok, tool_choice: { type: 'tool', name: 'f', disable_parallel_tool_use: false } });
    expect(forced.toolChoice).toEqual({ name: 'f' });
    expect(forced.parallelToolCalls).toBe(true);
  });

  test('output_config json_schema becomes a response format', () => {
    const req = codec.decodeRequest({ ...ok, output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } });
    // Anthropic's structured output always follows the schema: strict wherever the family has the choice.
    expect(req.responseFormat).toEqual({
      type: 'json_schema',
      name: 'response',
      schema: { type: 'object' },
      strict: true,
      param: 'output_config.format.schema',
    });
  });
});

describe('messages encodeError', () => {
  test('Anthropic envelope that also carries the seed fields', () => {
    const e = new GatewayError({ kind: 'authentication', message: 'Invalid or missing API key.' });
    expect(codec.encodeError(e)).toEqual({
      type: 'error',
      error: { message: 'Invalid or missing API key.', type: 'authentication_error', param: null, code: 'invalid_api_key' },
    });
  });
});

describe('messages stream encoder edge cases', () => {
  test('usage from an OpenAI-style upstream (after finish) lands in message_delta', () => {
    const enc = codec.createStreamEncoder(goldenCtx());
    let out = enc.push({ type: 'start', id: 'chatcmpl-1', model: 'm' });
    out += enc.push({ type: 'text', text: 'hi' });
    out += enc.push({ type: 'finish', reason: 'stop' });
    out += enc.push({ type: 'usage', usage: { inputTokens: 10, outputTokens: 2, cachedInputTokens: 4 } });
    expect(out).not.toContain('message_delta');
    const end = enc.end();
    expect(end).toContain(
      '"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":6,"output_tokens":2,"cache_creation_input_tokens":0,"cache_read_input_tokens":4}',
    );
    expect(end.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
  });

  test('error event shape', () => {
    const out = codec.createStreamEncoder(goldenCtx()).error(new GatewayError({ kind: 'rate_limit', message: 'Slow.' }));
    expect(out).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Slow.","code":"rate_limit_exceeded"}}\n\n',
    );
  });
});
