/** The official `@anthropic-ai/sdk` 1.x client (Messages) against the codecs. */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { canonicalResponse, startServer, state, streamScript } from './sdk-harness.ts';

let server: ReturnType<typeof startServer>;
let anthropic: Anthropic;

beforeAll(() => {
  server = startServer();
  anthropic = new Anthropic({ baseURL: `http://localhost:${server.port}`, apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(() => {
  server.stop(true);
});

describe('@anthropic-ai/sdk — Messages', () => {
  test('non-streaming create: text, tool_use input and usage', async () => {
    state.script = { response: canonicalResponse('text-and-tool') };
    const res = await anthropic.messages.create({ model: 'gw-model', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(state.lastRequest?.maxTokens).toBe(64);
    expect<unknown>(res.content[0]).toEqual({ type: 'text', text: 'Let me check the weather.' });
    expect<unknown>(res.content[1]).toEqual({ type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: {} });
    expect(res.stop_reason).toBe('tool_use');
    expect(res.usage).toMatchObject({
      input_tokens: 100,
      output_tokens: 40,
      cache_creation_input_tokens: 200,
      cache_read_input_tokens: 700,
    });
  });

  test('messages.stream().finalMessage() reconstructs text and tool_use blocks with cumulative usage', async () => {
    state.script = streamScript('text-and-tools');
    const texts: string[] = [];
    const stream = anthropic.messages.stream({ model: 'gw-model', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    stream.on('text', (t) => texts.push(t));
    const msg = await stream.finalMessage();
    expect(texts).toEqual(['Checking.', ' And also']);
    expect<unknown>(msg.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'a' } },
      { type: 'text', text: ' And also' },
      { type: 'tool_use', id: 'toolu_2', name: 'lookup', input: { q: 'b' } },
    ]);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.usage).toMatchObject({ input_tokens: 30, output_tokens: 25 });
    expect(msg.id).toBe('msg_5d2c9a1e7f3b4c6d9e8fa1b2c3d4e5f6');
    expect(msg.model).toBe('gw-model');
  });

  test('Anthropic-style usage: input tokens on start, cache fields preserved', async () => {
    state.script = streamScript('usage-before-finish');
    const msg = await anthropic.messages
      .stream({ model: 'gw-model', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    expect(msg.usage).toMatchObject({
      input_tokens: 25,
      output_tokens: 15,
      cache_creation_input_tokens: 100,
      cache_read_input_tokens: 200,
    });
    expect(msg.stop_reason).toBe('max_tokens');
    // The upstream's reasoning comes back as a thinking block (unsigned: this upstream gives no signature).
    expect<unknown>(msg.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: '' },
      { type: 'text', text: 'Hi there' },
    ]);
  });

  test('OpenAI-style usage after finish still reaches message_delta', async () => {
    state.script = streamScript('tool-calls');
    const msg = await anthropic.messages
      .stream({ model: 'gw-model', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    expect(msg.usage).toMatchObject({ input_tokens: 50, output_tokens: 20 });
    expect<unknown>(msg.content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} },
    ]);
  });

  test('create({stream:true}) yields the raw events in order', async () => {
    state.script = streamScript('zero-text');
    const stream = await anthropic.messages.create({
      model: 'gw-model',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(['message_start', 'message_delta', 'message_stop']);
  });

  test('a mid-stream error event throws APIError', async () => {
    state.script = streamScript('error');
    const err = await anthropic.messages
      .stream({ model: 'gw-model', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as Error).message).toContain('Upstream connection lost.');
  });

  test('a 400 from decodeRequest is read as an Anthropic error', async () => {
    const err = await anthropic.messages.create({ model: 'gw-model', max_tokens: 0, messages: [{ role: 'user', content: 'hi' }] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const e = err as InstanceType<typeof Anthropic.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.message).toContain('max_tokens');
    expect(e.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', param: 'max_tokens' } });
  });

  test('the SDK request body (system, tools, tool results) decodes', async () => {
    state.script = { response: canonicalResponse('text') };
    await anthropic.messages.create({
      model: 'gw-model',
      max_tokens: 64,
      system: 'sys',
      tools: [{ name: 'lookup', input_schema: { type: 'object', properties: {} } }],
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'lookup', input: { q: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
      ],
    });
    expect(state.lastRequest?.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(state.lastRequest?.messages[3]).toEqual({
      role: 'tool',
      toolCallId: 't1',
      name: 'lookup',
      content: [{ type: 'text', text: 'ok' }],
    });
  });
});
