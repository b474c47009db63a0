import { describe, expect, test } from 'bun:test';
import type { CanonicalRequest } from '../canonical/types.ts';
import { GatewayError } from '../core/errors.ts';
import { anthropicAdapter } from './anthropic/index.ts';
import { bedrockAdapter } from './bedrock/index.ts';
import { geminiAdapter } from './gemini/index.ts';
import { strictSchema } from './openai-compatible/strict-schema.ts';
import { effortForBudget, THINKING_BUDGET } from './reasoning.ts';
import type { ProviderAdapter, UpstreamTarget } from './types.ts';

/** Issue 26: one reasoning table for every family, refusals naming the client's field, strict schemas for OpenAI. */

const target = (provider: string): UpstreamTarget => ({
  upstreamModel: 'm',
  connection: { id: 'c', name: 'n', provider, apiKey: 'k', options: { region: 'us-east-1', accessKeyId: 'AKIA', secretAccessKey: 's' } },
});
const req = (extra: Partial<CanonicalRequest>): CanonicalRequest => ({
  model: 'pub',
  stream: false,
  includeUsage: false,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  ...extra,
});
const body = (adapter: ProviderAdapter, r: CanonicalRequest, provider: string): Record<string, unknown> => {
  if (adapter.kind !== 'http') throw new Error('http adapter expected');
  return JSON.parse(adapter.buildRequest(r, target(provider)).body) as Record<string, unknown>;
};
const refusedParam = (f: () => unknown): string | null => {
  try {
    f();
  } catch (e) {
    if (e instanceof GatewayError && e.status === 400) return e.param;
    throw e;
  }
  throw new Error('expected a 400');
};

describe('the reasoning table', () => {
  test('budget → effort and back agree at the table points', () => {
    for (const effort of ['low', 'medium', 'high'] as const) expect(effortForBudget(THINKING_BUDGET[effort])).toBe(effort);
    expect(effortForBudget(8191)).toBe('low');
  });

  test('Gemini: effort by the table, a Messages budget as given; Anthropic: the same budget', () => {
    const g = (r: CanonicalRequest) => (body(geminiAdapter, r, 'gemini').generationConfig as Record<string, unknown>).thinkingConfig;
    expect(g(req({ reasoningEffort: 'medium' }))).toEqual({ thinkingBudget: 8192, includeThoughts: true });
    expect(g(req({ reasoningBudget: 5000 }))).toEqual({ thinkingBudget: 5000, includeThoughts: true });
    expect(body(anthropicAdapter, req({ reasoningEffort: 'medium', maxTokens: 20000 }), 'anthropic').thinking).toEqual({
      type: 'enabled',
      budget_tokens: 8192,
    });
  });

  test('a model without the reasoning capability, and a family with no mapping, refuse naming the client field', () => {
    expect(
      refusedParam(() =>
        body(geminiAdapter, req({ reasoningEffort: 'low', reasoningParam: 'reasoning.effort', modelReasons: false }), 'gemini'),
      ),
    ).toBe('reasoning.effort');
    expect(
      refusedParam(() => body(bedrockAdapter, req({ reasoningBudget: 2048, reasoningParam: 'thinking.budget_tokens' }), 'bedrock')),
    ).toBe('thinking.budget_tokens');
  });
});

describe('strict schemas for OpenAI', () => {
  test('objects in properties, items, anyOf and $defs are closed; the rest is kept', () => {
    const s = strictSchema(
      {
        type: 'object',
        properties: { a: { anyOf: [{ type: 'object', properties: {}, required: [] }, { type: 'null' }] }, b: { $ref: '#/$defs/B' } },
        required: ['a', 'b'],
        $defs: { B: { type: 'object', properties: { c: { type: 'string', pattern: '^x' } }, required: ['c'] } },
      },
      'p',
    );
    expect(s).toEqual({
      type: 'object',
      properties: {
        a: { anyOf: [{ type: 'object', properties: {}, required: [], additionalProperties: false }, { type: 'null' }] },
        b: { $ref: '#/$defs/B' },
      },
      required: ['a', 'b'],
      $defs: { B: { type: 'object', properties: { c: { type: 'string', pattern: '^x' } }, required: ['c'], additionalProperties: false } },
      additionalProperties: false,
    });
  });

  test('what strict mode cannot take is refused at its place', () => {
    expect(refusedParam(() => strictSchema({ type: 'object', properties: { a: { oneOf: [] } }, required: ['a'] }, 'p'))).toBe(
      'p.properties.a.oneOf',
    );
    expect(refusedParam(() => strictSchema({ type: 'array', items: {} }, 'p'))).toBe('p');
    expect(refusedParam(() => strictSchema({ type: 'object', $defs: { D: { type: 'object', properties: { x: {} } } } }, 'p'))).toBe(
      'p.$defs.D.required',
    );
  });
});
