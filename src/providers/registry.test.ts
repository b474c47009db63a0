import { describe, expect, test } from 'bun:test';
import { OPENAI_COMPATIBLE_SPECS } from './openai-compatible/catalog.ts';
import { getAdapter, listProviderIds } from './registry.ts';
import type { UpstreamTarget } from './types.ts';

describe('provider registry', () => {
  test('lists openai, anthropic, echo and every OpenAI-compatible id', () => {
    const ids = listProviderIds();
    for (const id of ['openai', 'anthropic', 'echo', ...OPENAI_COMPATIBLE_SPECS.map((s) => s.id)]) expect(ids).toContain(id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of [
      'groq',
      'together',
      'fireworks',
      'deepseek',
      'xai',
      'perplexity',
      'openrouter',
      'cerebras',
      'deepinfra',
      'mistral',
      'vllm',
      'nvidia-nim',
      'sambanova',
      'moonshot',
      'nebius',
      'novita',
      'lambda',
      'ai21',
      'hf-router',
      'databricks',
      'cloudflare-workers-ai',
    ]) {
      expect(ids).toContain(id);
    }
  });

  test('unknown ids are undefined', () => {
    expect(getAdapter('nope')).toBeUndefined();
  });

  test('every provider id of the contract table is registered, and the list is sorted', () => {
    const ids = listProviderIds();
    for (const id of [
      'openai',
      'anthropic',
      'azure-openai',
      'bedrock',
      'gemini',
      'vertex',
      'cohere',
      'ollama',
      'cloudflare-workers-ai',
      'watsonx',
      'echo',
    ]) {
      expect(ids).toContain(id);
    }
    expect(ids).toEqual([...ids].sort());
  });

  test('every adapter id matches its registry key; echo is local; framing per family', () => {
    const framing: Record<string, string> = { bedrock: 'aws-eventstream', ollama: 'ndjson' };
    for (const id of listProviderIds()) {
      const a = getAdapter(id);
      expect(a?.id).toBe(id);
      if (id === 'echo') expect(a?.kind).toBe('local');
      else expect(a).toMatchObject({ kind: 'http', framing: framing[id] ?? 'sse' });
    }
  });

  test('every OpenAI-compatible default base URL is https (or a localhost default) and builds a /chat/completions URL', () => {
    for (const spec of OPENAI_COMPATIBLE_SPECS) {
      const a = getAdapter(spec.id);
      if (a?.kind !== 'http') throw new Error(spec.id);
      const placeholders = [...spec.defaultBaseUrl.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
      const options = Object.fromEntries(placeholders.map((p) => [p, 'x1']));
      const target: UpstreamTarget = {
        upstreamModel: 'm',
        connection: { id: 'c', name: 'n', provider: spec.id, apiKey: 'k-123456', options },
      };
      const r = a.buildRequest({ model: 'm', stream: false, includeUsage: false, messages: [] }, target);
      expect(r.url).toMatch(/^(https:\/\/|http:\/\/localhost:)[^{}]+\/chat\/completions$/);
      expect(r.headers['authorization']).toBe(spec.auth === 'none' ? undefined : 'Bearer k-123456');
    }
  });
});
