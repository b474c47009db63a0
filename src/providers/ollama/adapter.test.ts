import { describe, expect, test } from 'bun:test';
import { errorFields } from '../golden.ts';
import { goldenSuite, thrown } from '../golden-suite.ts';
import { ollamaAdapter } from './index.ts';

await goldenSuite({
  family: 'ollama',
  adapter: ollamaAdapter,
  responses: ['response-text', 'response-tool-call', 'response-length'],
  streams: ['stream-text.ndjson', 'stream-tool-call.ndjson', 'stream-error.ndjson', 'stream-truncated.ndjson'],
});

describe('ollama specifics', () => {
  test('no key, no authorization header; stream is always explicit', () => {
    const r = ollamaAdapter.buildRequest(
      { model: 'm', stream: false, includeUsage: false, messages: [] },
      { upstreamModel: 'llama3.2', connection: { id: 'c', name: 'n', provider: 'ollama', options: {} } },
    );
    expect(r.url).toBe('http://localhost:11434/api/chat');
    expect(r.headers['authorization']).toBeUndefined();
    expect(JSON.parse(r.body)).toMatchObject({ stream: false });
  });

  test('http image URLs are rejected (Ollama takes base64 only)', async () => {
    const e = await thrown(() =>
      ollamaAdapter.buildRequest(
        {
          model: 'm',
          stream: false,
          includeUsage: false,
          messages: [{ role: 'user', content: [{ type: 'image', url: 'https://x.test/a.png' }] }],
        },
        { upstreamModel: 'llava', connection: { id: 'c', name: 'n', provider: 'ollama', options: {} } },
      ),
    );
    expect(errorFields(e)).toMatchObject({ kind: 'invalid_request', param: 'messages' });
  });

  test('a 200 body with an error, and malformed bodies', async () => {
    expect(errorFields(await thrown(() => ollamaAdapter.parseResponse('{"error":"boom"}')))).toMatchObject({
      kind: 'upstream_error',
      message: 'boom',
    });
    expect(errorFields(await thrown(() => ollamaAdapter.parseResponse('{"model":"x"}')))).toMatchObject({ kind: 'bad_gateway' });
  });
});
