import { describe, expect, test } from 'bun:test';
import { GatewayError } from '../../core/errors.ts';
import { createGeminiStreamEncoder, decodeGeminiRequest, encodeGeminiError, encodeGeminiResponse } from './index.ts';

const ctx = { model: 'my-model', requestId: '5d2c9a1e-7f3b-4c6d-9e8f-a1b2c3d4e5f6', includeUsage: true };
const url = { model: 'my-model', stream: false };

describe('Gemini request decoding', () => {
  test('responseSchema (OpenAPI subset) becomes JSON Schema: lower-case types, nullable as a null type, no propertyOrdering', () => {
    const r = decodeGeminiRequest(
      {
        contents: [{ role: 'user', parts: [{ text: 'x' }] }],
        generationConfig: {
          responseMimeType: 'application/json',
          responseSchema: {
            type: 'OBJECT',
            properties: { a: { type: 'STRING', nullable: true }, b: { type: 'ARRAY', items: { type: 'INTEGER' } } },
            propertyOrdering: ['a', 'b'],
          },
        },
      },
      url,
    );
    expect(r.responseFormat).toEqual({
      type: 'json_schema',
      name: 'response',
      schema: { type: 'object', properties: { a: { type: ['string', 'null'] }, b: { type: 'array', items: { type: 'integer' } } } },
      param: 'generationConfig.responseSchema',
    });
  });

  test('function calls without ids: a response answers the earliest open call of its name; a thought signature rides in the id', () => {
    const r = decodeGeminiRequest(
      {
        contents: [
          { role: 'user', parts: [{ text: 'go' }] },
          {
            role: 'model',
            parts: [
              { functionCall: { name: 'f', args: { n: 1 } }, thoughtSignature: 'sig' },
              { functionCall: { name: 'f', args: { n: 2 } } },
            ],
          },
          {
            role: 'user',
            parts: [{ functionResponse: { name: 'f', response: { r: 1 } } }, { functionResponse: { name: 'f', response: { r: 2 } } }],
          },
        ],
      },
      url,
    );
    expect(r.messages[1]).toMatchObject({
      role: 'assistant',
      toolCalls: [
        { id: 'call_0__thought__sig', name: 'f', arguments: '{"n":1}' },
        { id: 'call_1', name: 'f', arguments: '{"n":2}' },
      ],
    });
    expect(r.messages.slice(2).map((m) => (m.role === 'tool' ? m.toolCallId : m.role))).toEqual(['call_0__thought__sig', 'call_1']);
  });

  test('unknown members are refused; native-only ones are noted, not refused', () => {
    expect(() => decodeGeminiRequest({ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { foo: 1 } }, url)).toThrow(
      "Unknown parameter: 'generationConfig.foo'.",
    );
    const r = decodeGeminiRequest({ contents: [{ parts: [{ text: 'x' }] }], tools: [{ codeExecution: {} }] }, url);
    expect(r.nativeOnly?.param).toBe('tools.0.codeExecution');
  });
});

describe('Gemini encoding', () => {
  test('a response: thoughts, text, calls (signature apart), usage without thinking in candidatesTokenCount', () => {
    const body = encodeGeminiResponse(
      {
        id: 'r1',
        model: 'up',
        created: 0,
        text: 'hi',
        reasoning: 'hmm',
        toolCalls: [{ id: 'c1__thought__s', name: 'f', arguments: '{"a":1}' }],
        finishReason: 'tool_calls',
        usage: { inputTokens: 10, outputTokens: 8, reasoningTokens: 3, cachedInputTokens: 4 },
      },
      ctx,
    );
    expect(body).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'hmm', thought: true },
              { text: 'hi' },
              { functionCall: { id: 'c1', name: 'f', args: { a: 1 } }, thoughtSignature: 's' },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: 10,
        candidatesTokenCount: 5,
        totalTokenCount: 18,
        thoughtsTokenCount: 3,
        cachedContentTokenCount: 4,
      },
      modelVersion: 'my-model',
      responseId: 'r1',
    });
  });

  test('a stream: a call is sent whole once complete; finish and usage (arriving after the finish) in the last chunk', () => {
    const enc = createGeminiStreamEncoder(ctx);
    const out = [
      enc.push({ type: 'start', id: 'r1', model: 'up' }),
      enc.push({ type: 'text', text: 'a' }),
      enc.push({ type: 'tool_call_start', index: 0, id: 'c1', name: 'f' }),
      enc.push({ type: 'tool_call_delta', index: 0, arguments: '{"a"' }),
      enc.push({ type: 'tool_call_delta', index: 0, arguments: ':1}' }),
      enc.push({ type: 'finish', reason: 'tool_calls' }),
      enc.push({ type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } }),
      enc.end(),
    ].join('');
    const chunks = out
      .split('\n\n')
      .filter((f) => f !== '')
      .map(
        (f) =>
          JSON.parse(f.slice('data: '.length)) as {
            candidates: { content: { parts: unknown[] }; finishReason?: string }[];
            usageMetadata?: unknown;
          },
      );
    expect(chunks.map((c) => c.candidates[0]?.content.parts)).toEqual([
      [{ text: 'a' }],
      [{ functionCall: { id: 'c1', name: 'f', args: { a: 1 } } }],
    ]);
    expect(chunks[1]?.candidates[0]?.finishReason).toBe('STOP');
    expect(chunks[1]?.usageMetadata).toEqual({ promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 });
  });

  test("errors in Google's shape, the field named in the message", () => {
    expect(encodeGeminiError(new GatewayError({ kind: 'invalid_request', message: 'Bad value.', param: 'generationConfig.topK' }))).toEqual(
      {
        error: { code: 400, message: 'Bad value. (field: generationConfig.topK)', status: 'INVALID_ARGUMENT' },
      },
    );
    expect(encodeGeminiError(new GatewayError({ kind: 'rate_limit', message: 'Slow down.' }))).toEqual({
      error: { code: 429, message: 'Slow down.', status: 'RESOURCE_EXHAUSTED' },
    });
  });
});
