import { describe, expect, test } from 'bun:test';
import { GatewayError } from '../../core/errors.ts';
import { createCohereStreamEncoder, decodeCohereRequest, encodeCohereResponse } from './index.ts';

const ctx = { model: 'm', requestId: '5d2c9a1e-7f3b-4c6d-9e8f-a1b2c3d4e5f6', includeUsage: true };
const types = (sse: string): string[] =>
  sse
    .split('\n\n')
    .filter((f) => f !== '')
    .map((f) => (JSON.parse(String(f.split('\n')[1]).slice('data: '.length)) as { type: string }).type);

describe('Cohere v2', () => {
  test('request: p/k, tool_choice, json_schema, a tool result document read as its text; unknown fields refused', () => {
    const r = decodeCohereRequest({
      model: 'm',
      p: 0.5,
      k: 3,
      tool_choice: 'REQUIRED',
      response_format: { type: 'json_object', json_schema: { type: 'object' } },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      messages: [{ role: 'tool', tool_call_id: 'c1', content: [{ type: 'document', document: { data: { temp: 21 } } }] }],
    });
    expect(r).toMatchObject({
      topP: 0.5,
      topK: 3,
      toolChoice: 'required',
      responseFormat: { type: 'json_schema', schema: { type: 'object' } },
    });
    expect(r.messages).toEqual([{ role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: '{"temp":21}' }] }]);
    expect(() => decodeCohereRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], top_p: 1 })).toThrow(
      "Unknown parameter: 'top_p'.",
    );
  });

  test('response: tool calls without content, TOOL_CALL, usage in tokens and billed_units', () => {
    expect(
      encodeCohereResponse(
        {
          id: 'r',
          model: '',
          created: 0,
          text: '',
          toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }],
          finishReason: 'tool_calls',
          usage: { inputTokens: 4, outputTokens: 1 },
        },
        ctx,
      ),
    ).toEqual({
      id: 'r',
      finish_reason: 'TOOL_CALL',
      message: { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      usage: { billed_units: { input_tokens: 4, output_tokens: 1 }, tokens: { input_tokens: 4, output_tokens: 1 } },
    });
  });

  test('stream: content and tool-call events in order, message-end last; an error ends with finish reason ERROR', () => {
    const enc = createCohereStreamEncoder(ctx);
    const out = [
      enc.push({ type: 'start', id: 'r', model: '' }),
      enc.push({ type: 'text', text: 'a' }),
      enc.push({ type: 'tool_call_start', index: 0, id: 'c', name: 'f' }),
      enc.push({ type: 'tool_call_delta', index: 0, arguments: '{}' }),
      enc.push({ type: 'finish', reason: 'tool_calls' }),
      enc.end(),
    ].join('');
    expect(types(out)).toEqual([
      'message-start',
      'content-start',
      'content-delta',
      'content-end',
      'tool-call-start',
      'tool-call-delta',
      'tool-call-end',
      'message-end',
    ]);
    const failed = createCohereStreamEncoder(ctx);
    const err = failed.push({ type: 'text', text: 'a' }) + failed.error(new GatewayError({ kind: 'timeout', message: 'Too slow.' }));
    expect(types(err).at(-1)).toBe('message-end');
    expect(err).toContain('"finish_reason":"ERROR","error":"Too slow."');
  });
});
