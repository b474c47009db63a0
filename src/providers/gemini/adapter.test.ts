import { describe, expect, test } from 'bun:test';
import { errorFields } from '../golden.ts';
import { goldenSuite, thrown } from '../golden-suite.ts';
import { geminiAdapter } from './index.ts';
import { splitToolCallId } from './request.ts';

await goldenSuite({
  family: 'gemini',
  adapter: geminiAdapter,
  keyHeaders: ['x-goog-api-key'],
  responses: ['response-text', 'response-function-call', 'response-max-tokens', 'response-blocked', 'response-safety'],
  streams: [
    'stream-text.sse',
    'stream-function-call.sse',
    'stream-midstream-error.sse',
    'stream-truncated.sse',
    'stream-blocked.sse',
    'stream-max-tokens-crlf.sse',
  ],
});

describe('gemini specifics', () => {
  test('the key travels in x-goog-api-key only, never in the URL', () => {
    const r = geminiAdapter.buildRequest(
      { model: 'm', stream: false, includeUsage: false, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
      { upstreamModel: 'gemini-2.5-flash', connection: { id: 'c', name: 'n', provider: 'gemini', apiKey: 'AIzaSyKEY', options: {} } },
    );
    expect(r.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    expect(r.headers['x-goog-api-key']).toBe('AIzaSyKEY');
    expect(r.headers['authorization']).toBeUndefined();
  });

  test('a thought signature round-trips through the tool-call id', () => {
    const r = geminiAdapter.parseResponse(
      '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"c2ln+/="}]},"finishReason":"STOP"}]}',
    );
    expect(r.toolCalls[0]?.id).toBe('call_0__thought__c2ln+/=');
    expect(splitToolCallId(r.toolCalls[0]?.id ?? '')).toEqual({ id: 'call_0', signature: 'c2ln+/=' });
    expect(r.finishReason).toBe('tool_calls');
  });

  test('malformed bodies → bad_gateway; a 200 error body → mapped error', async () => {
    for (const body of ['nope', '{"modelVersion":"x"}', '"s"']) {
      expect(errorFields(await thrown(() => geminiAdapter.parseResponse(body)))).toMatchObject({ kind: 'bad_gateway', status: 502 });
    }
    const e = await thrown(() => geminiAdapter.parseResponse('{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}'));
    expect(errorFields(e)).toMatchObject({ kind: 'rate_limit', status: 429, message: 'quota' });
  });

  test('usage after the finish is emitted once more at the end only if it changed', () => {
    const d = geminiAdapter.createStreamDecoder();
    const finish = d.push({
      data: '{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}}',
    });
    expect(finish.map((e) => e.type)).toEqual(['start', 'text', 'finish', 'usage']);
    expect(d.push({ data: '{"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2}}' })).toEqual([
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } },
    ]);
    expect(d.end()).toEqual([]);
  });
});
