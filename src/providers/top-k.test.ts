import { describe, expect, test } from 'bun:test';
import type { CanonicalRequest } from '../canonical/types.ts';
import { GatewayError } from '../core/errors.ts';
import { errorFields } from './golden.ts';
import { thrown } from './golden-suite.ts';
import { asRecord } from './json.ts';
import { getAdapter } from './registry.ts';
import type { HttpProviderAdapter, UpstreamTarget } from './types.ts';

/** Top-k is honoured where the upstream takes it and refused (400 naming the client's member and the upstream) elsewhere. */

const http = (id: string): HttpProviderAdapter => {
  const a = getAdapter(id);
  if (a?.kind !== 'http') throw new Error(`no http adapter ${id}`);
  return a;
};

const target = (provider: string, upstreamModel: string, options: Record<string, string> = {}): UpstreamTarget => ({
  upstreamModel,
  connection: { id: `c-${provider}`, name: provider, provider, baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k', options },
});

const request = (topK: number, topKParam?: string): CanonicalRequest => ({
  model: 'm',
  stream: false,
  includeUsage: false,
  maxTokens: 50,
  topK,
  ...(topKParam !== undefined ? { topKParam } : {}),
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
});

const body = async (provider: string, t: UpstreamTarget, r: CanonicalRequest): Promise<Record<string, unknown>> =>
  asRecord(JSON.parse((await http(provider).buildRequest(r, t)).body)) ?? {};

describe('top-k across upstreams', () => {
  const refusing: [string, UpstreamTarget, string][] = [
    ['openai', target('openai', 'gpt-4o-mini'), 'openai'],
    ['azure-openai', target('azure-openai', 'gpt-4o'), 'azure-openai'],
    ['mistral', target('mistral', 'mistral-small'), 'mistral'],
    ['bedrock', target('bedrock', 'amazon.nova-lite-v1:0', { region: 'us-east-1' }), 'Bedrock (amazon.nova-lite-v1:0)'],
  ];
  for (const [provider, t, named] of refusing) {
    test(`${provider} has no top-k: 400 naming the client's member and the upstream`, async () => {
      for (const param of ['top_k', 'generationConfig.topK', 'k', 'additionalModelRequestFields.top_k']) {
        const err = await thrown(() => http(provider).buildRequest(request(5, param), t));
        expect(err).toBeInstanceOf(GatewayError);
        expect(errorFields(err)).toMatchObject({ kind: 'invalid_request', param, status: 400 });
        expect(err instanceof GatewayError ? err.message : '').toContain(`'${param}' cannot be honoured by the ${named} upstream`);
      }
      // `0` is "no top-k" (Cohere `k: 0`): nothing to honour, nothing sent.
      expect(await body(provider, t, request(0, 'k'))).not.toHaveProperty('top_k');
    });
  }

  test('upstreams with top-k get it', async () => {
    expect(await body('together', target('together', 'llama'), request(5, 'top_k'))).toMatchObject({ top_k: 5 });
    expect(await body('anthropic', target('anthropic', 'claude-sonnet-4-5'), request(5, 'k'))).toMatchObject({ top_k: 5 });
    const claude = target('bedrock', 'anthropic.claude-3-5-sonnet-20241022-v2:0', { region: 'us-east-1' });
    expect(await body('bedrock', claude, request(5, 'top_k'))).toMatchObject({ additionalModelRequestFields: { top_k: 5 } });
  });
});
