/** The official `openai` 7.x client (Chat Completions and Responses) against the codecs. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { canonicalResponse, startServer, state, streamScript } from './sdk-harness.ts';

const weatherTool = {
  type: 'function' as const,
  function: { name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
};

let server: ReturnType<typeof startServer>;
let openai: OpenAI;

beforeAll(() => {
  server = startServer();
  openai = new OpenAI({ baseURL: `http://localhost:${server.port}/v1`, apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(() => {
  server.stop(true);
});

describe('openai SDK — Chat Completions', () => {
  test('non-streaming create: text, tool calls and usage', async () => {
    state.script = { response: canonicalResponse('text-and-tool') };
    const res = await openai.chat.completions.create({
      model: 'gw-model',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [weatherTool],
    });
    expect(state.lastRequest?.tools?.[0]?.name).toBe('lookup');
    expect(res.choices[0]?.message.content).toBe('Let me check the weather.');
    expect(res.choices[0]?.message.tool_calls?.[0]).toEqual({
      id: 'toolu_01A',
      type: 'function',
      function: { name: 'get_weather', arguments: 'not json' },
    });
    expect(res.choices[0]?.finish_reason).toBe('tool_calls');
    expect(res.usage?.prompt_tokens).toBe(1000);
    expect(res.usage?.prompt_tokens_details?.cached_tokens).toBe(700);
  });

  test('create({stream:true}) with include_usage yields content, tool calls and the usage chunk', async () => {
    state.script = streamScript('text-and-tools');
    const stream = await openai.chat.completions.create({
      model: 'gw-model',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(state.lastRequest?.includeUsage).toBe(true);
    let text = '';
    const args: string[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      text += choice?.delta.content ?? '';
      for (const tc of choice?.delta.tool_calls ?? []) args[tc.index] = (args[tc.index] ?? '') + (tc.function?.arguments ?? '');
      finish = choice?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Checking. And also');
    expect(args).toEqual(['{"q":"a"}', '{"q":"b"}']);
    expect(finish).toBe('tool_calls');
    expect(usage).toEqual({
      prompt_tokens: 30,
      completion_tokens: 25,
      total_tokens: 55,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 5 },
    });
  });

  test('chat.completions.stream() helper reconstructs the final completion', async () => {
    state.script = streamScript('tool-calls');
    const runner = openai.chat.completions.stream({
      model: 'gw-model',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [weatherTool],
      stream_options: { include_usage: true },
    });
    const final = await runner.finalChatCompletion();
    const msg = final.choices[0]?.message;
    expect(msg?.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : []))).toEqual([
      ['call_a', 'get_weather', '{"city":"Paris"}'],
      ['call_b', 'get_time', '{}'],
    ]);
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
    expect(final.usage?.total_tokens).toBe(70);
    expect(final.model).toBe('gw-model');
  });

  test('stream helper with plain text', async () => {
    state.script = streamScript('text');
    const content = await openai.chat.completions.stream({ model: 'gw-model', messages: [{ role: 'user', content: 'hi' }] }).finalContent();
    expect(content).toBe('Hello');
  });

  test('a mid-stream error event throws APIError', async () => {
    state.script = streamScript('error');
    const stream = await openai.chat.completions.create({ model: 'gw-model', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const run = async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    };
    const err = await run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain('Upstream connection lost.');
    expect(text).toBe('Par');
  });

  test('a 400 from decodeRequest surfaces as BadRequestError with param', async () => {
    const err = await openai.chat.completions.create({ model: 'gw-model', messages: [] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.param).toBe('messages');
    expect(e.type).toBe('invalid_request_error');
  });
});

describe('openai SDK — Responses', () => {
  test('non-streaming create: output_text, function calls and usage', async () => {
    state.script = { response: canonicalResponse('text-and-tool') };
    const res = await openai.responses.create({ model: 'gw-model', input: 'hi', instructions: 'Be brief.' });
    expect(state.lastRequest?.messages[0]).toEqual({ role: 'system', content: [{ type: 'text', text: 'Be brief.' }] });
    expect(res.id).toBe('resp_5d2c9a1e7f3b4c6d9e8fa1b2c3d4e5f6');
    expect(res.output_text).toBe('Let me check the weather.');
    expect(res.output[1]).toMatchObject({ type: 'function_call', call_id: 'toolu_01A', name: 'get_weather' });
    expect(res.usage?.input_tokens).toBe(1000);
    expect(res.status).toBe('completed');
  });

  test('responses.stream() reconstructs text and function calls; usage in response.completed', async () => {
    state.script = streamScript('text-and-tools');
    const deltas: string[] = [];
    const stream = openai.responses.stream({
      model: 'gw-model',
      input: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false }],
    });
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(['Checking.', ' And also']);
    expect(final.output_text).toBe('Checking. And also');
    const calls = final.output.filter((o) => o.type === 'function_call');
    expect(calls.map((c) => (c.type === 'function_call' ? [c.call_id, c.name, c.arguments] : []))).toEqual([
      ['toolu_1', 'lookup', '{"q":"a"}'],
      ['toolu_2', 'lookup', '{"q":"b"}'],
    ]);
    expect(final.usage).toMatchObject({ input_tokens: 30, output_tokens: 25, total_tokens: 55 });
    expect(final.status).toBe('completed');
  });

  test('create({stream:true}) yields the lifecycle events in order', async () => {
    state.script = streamScript('text');
    const stream = await openai.responses.create({ model: 'gw-model', input: 'hi', stream: true });
    const types: string[] = [];
    let completedUsage: OpenAI.Responses.ResponseUsage | null | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.completed') completedUsage = event.response.usage;
    }
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(completedUsage).toMatchObject({ input_tokens: 12, output_tokens: 2, input_tokens_details: { cached_tokens: 4 } });
  });

  test('a length-limited stream ends incomplete with max_output_tokens', async () => {
    state.script = streamScript('usage-before-finish');
    const final = await openai.responses.stream({ model: 'gw-model', input: 'hi' }).finalResponse();
    expect(final.status).toBe('incomplete');
    expect(final.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(final.output_text).toBe('Hi there');
    expect(final.usage?.input_tokens).toBe(325);
  });

  test('a mid-stream error event makes the stream helper throw', async () => {
    state.script = streamScript('error');
    const err = await openai.responses
      .stream({ model: 'gw-model', input: 'hi' })
      .finalResponse()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toContain('Upstream connection lost.');
  });

  test('a mid-stream error event makes create({stream:true}) iteration throw', async () => {
    state.script = streamScript('error');
    const stream = await openai.responses.create({ model: 'gw-model', input: 'hi', stream: true });
    const run = async () => {
      for await (const _ of stream) void _;
    };
    expect(
      await run().then(
        () => undefined,
        (e: unknown) => e,
      ),
    ).toBeInstanceOf(OpenAI.APIError);
  });

  test('an HTTP error body is read by the SDK', async () => {
    state.script = { error: { kind: 'rate_limit', message: 'Too many requests.' } };
    const err = await openai.responses.create({ model: 'gw-model', input: 'hi' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded');
  });
});
