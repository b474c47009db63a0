import { describe, expect, test } from 'bun:test';
import { errorFields } from '../golden.ts';
import { goldenSuite, thrown } from '../golden-suite.ts';
import { AZURE_DEFAULT_API_VERSION, azureOpenAIAdapter } from './index.ts';

await goldenSuite({
  family: 'azure',
  adapter: azureOpenAIAdapter,
  keyHeaders: ['api-key'],
  responses: ['response-content-filter'],
  streams: ['stream-content-filter.sse'],
});

describe('azure-openai specifics', () => {
  test('the key goes in api-key, never as a bearer token; default api-version', () => {
    const r = azureOpenAIAdapter.buildRequest(
      { model: 'm', stream: false, includeUsage: false, messages: [] },
      {
        upstreamModel: 'gpt-4o',
        connection: {
          id: 'c',
          name: 'n',
          provider: 'azure-openai',
          baseUrl: 'https://r.openai.azure.com/openai',
          apiKey: 'k-123',
          options: {},
        },
      },
    );
    expect(r.url).toBe(`https://r.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=${AZURE_DEFAULT_API_VERSION}`);
    expect(r.headers['api-key']).toBe('k-123');
    expect(r.headers['authorization']).toBeUndefined();
  });

  test('without baseUrl or options.resource the connection is misconfigured', async () => {
    const e = await thrown(() =>
      azureOpenAIAdapter.buildRequest(
        { model: 'm', stream: false, includeUsage: false, messages: [] },
        { upstreamModel: 'gpt-4o', connection: { id: 'c', name: 'n', provider: 'azure-openai', apiKey: 'k', options: {} } },
      ),
    );
    expect(errorFields(e)).toMatchObject({ errorCode: 'provider_misconfigured' });
    expect((e as Error).message).toContain('options.resource');
  });
});
