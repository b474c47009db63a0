import { describe, expect, test } from 'bun:test';
import { errorFields } from '../golden.ts';
import { goldenSuite, thrown } from '../golden-suite.ts';
import { cohereAdapter } from './index.ts';

await goldenSuite({
  family: 'cohere',
  adapter: cohereAdapter,
  responses: ['response-text', 'response-tool-call', 'response-max-tokens'],
  streams: ['stream-text.sse', 'stream-tool-call.sse', 'stream-error.sse', 'stream-truncated.sse'],
});

describe('cohere specifics', () => {
  test('frames after message-end or [DONE] are ignored', () => {
    const d = cohereAdapter.createStreamDecoder();
    d.push({ data: '{"type":"message-start","id":"x"}' });
    d.push({ data: '{"type":"message-end","delta":{"finish_reason":"COMPLETE"}}' });
    expect(d.push({ data: 'garbage' })).toEqual([]);
    expect(d.end()).toEqual([]);
  });

  test('a 200 body with finish_reason ERROR is an upstream error; malformed bodies are bad_gateway', async () => {
    const e = await thrown(() =>
      cohereAdapter.parseResponse('{"id":"e","message":{"role":"assistant","content":[]},"finish_reason":"ERROR"}'),
    );
    expect(errorFields(e)).toMatchObject({ kind: 'upstream_error', status: 502 });
    for (const body of ['x', '{"id":"1"}']) {
      expect(errorFields(await thrown(() => cohereAdapter.parseResponse(body)))).toMatchObject({ kind: 'bad_gateway' });
    }
  });
});
