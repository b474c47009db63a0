import { describe, expect, test } from 'bun:test';
import { GatewayError } from '../../core/errors.ts';
import { createConverseStreamEncoder, decodeConverseRequest, encodeConverseError, encodeConverseResponse } from './index.ts';

const ctx = { model: 'm', requestId: '5d2c9a1e-7f3b-4c6d-9e8f-a1b2c3d4e5f6', includeUsage: true };

const frames = (sse: string): [string, unknown][] =>
  sse
    .split('\n\n')
    .filter((f) => f !== '')
    .map((f) => {
      const [event, data] = f.split('\n');
      return [String(event).slice('event: '.length), JSON.parse(String(data).slice('data: '.length))];
    });

describe('Converse', () => {
  test('request: images and documents from bytes, toolUse / toolResult (JSON content), signed reasoning', () => {
    const r = decodeConverseRequest(
      {
        messages: [
          { role: 'user', content: [{ text: 'see' }, { image: { format: 'png', source: { bytes: 'AAAA' } } }] },
          {
            role: 'assistant',
            content: [
              { reasoningContent: { reasoningText: { text: 'think', signature: 'sig' } } },
              { toolUse: { toolUseId: 't1', name: 'f', input: { a: 1 } } },
            ],
          },
          { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ json: { ok: true } }], status: 'error' } }] },
        ],
      },
      { model: 'm', stream: false },
    );
    expect(r.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'see' },
          { type: 'image', url: 'data:image/png;base64,AAAA' },
        ],
      },
      {
        role: 'assistant',
        content: [],
        toolCalls: [{ id: 't1', name: 'f', arguments: '{"a":1}' }],
        reasoning: { text: 'think', signature: 'sig' },
      },
      { role: 'tool', toolCallId: 't1', content: [{ type: 'text', text: '{"ok":true}' }], isError: true },
    ]);
  });

  test('response usage: inputTokens without cache reads and writes, totalTokens with them', () => {
    const body = encodeConverseResponse(
      {
        id: '',
        model: '',
        created: 0,
        text: 'x',
        toolCalls: [],
        finishReason: 'length',
        usage: { inputTokens: 10, outputTokens: 2, cachedInputTokens: 3, cacheWriteTokens: 1 },
      },
      ctx,
    );
    expect(body).toMatchObject({
      stopReason: 'max_tokens',
      usage: { inputTokens: 6, outputTokens: 2, totalTokens: 12, cacheReadInputTokens: 3, cacheWriteInputTokens: 1 },
    });
  });

  test('response metrics.latencyMs: milliseconds since the request arrived', () => {
    const res = {
      id: '',
      model: '',
      created: 0,
      text: 'x',
      toolCalls: [],
      finishReason: 'stop' as const,
      usage: { inputTokens: 1, outputTokens: 1 },
    };
    const latency = encodeConverseResponse(res, { ...ctx, receivedAt: Date.now() - 250 }).metrics;
    expect(latency).toEqual({ latencyMs: expect.any(Number) });
    expect(JSON.stringify(latency)).toMatch(/"latencyMs":(2[5-9]\d|[3-9]\d\d|\d{4})\b/);
  });

  test('stream: block indexes, a tool block with its start and argument deltas, messageStop then metadata', () => {
    const enc = createConverseStreamEncoder({ ...ctx, receivedAt: Date.now() - 250 });
    const out = [
      enc.push({ type: 'start', id: '', model: '' }),
      enc.push({ type: 'text', text: 'a' }),
      enc.push({ type: 'tool_call_start', index: 0, id: 't1', name: 'f' }),
      enc.push({ type: 'tool_call_delta', index: 0, arguments: '{}' }),
      enc.push({ type: 'finish', reason: 'tool_calls' }),
      enc.push({ type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } }),
      enc.end(),
    ].join('');
    expect(frames(out)).toEqual([
      ['messageStart', { role: 'assistant' }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'a' } }],
      ['contentBlockStop', { contentBlockIndex: 0 }],
      ['contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't1', name: 'f' } } }],
      ['contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{}' } } }],
      ['contentBlockStop', { contentBlockIndex: 1 }],
      ['messageStop', { stopReason: 'tool_use' }],
      ['metadata', { usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 }, metrics: { latencyMs: expect.any(Number) } }],
    ]);
    // The latency counts from the request's arrival (250 ms before the encoder began), not 0.
    const latency = /"latencyMs":(\d+)/.exec(out)?.[1];
    expect(Number(latency)).toBeGreaterThanOrEqual(250);
    expect(Number(latency)).toBeLessThan(60_000);
  });

  test('errors: ValidationException with the field named; a stream error is an exception event', () => {
    const err = new GatewayError({ kind: 'invalid_request', message: 'Bad.', param: 'inferenceConfig.topP' });
    expect(encodeConverseError(err)).toEqual({ __type: 'ValidationException', message: 'Bad. (field: inferenceConfig.topP)' });
    expect(frames(createConverseStreamEncoder(ctx).error(new GatewayError({ kind: 'rate_limit', message: 'Slow.' })))).toEqual([
      ['throttlingException', { message: 'Slow.' }],
    ]);
  });
});
