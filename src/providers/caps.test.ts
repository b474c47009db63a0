import { describe, expect, test } from 'bun:test';
import type { CanonicalRequest, JsonObject, ToolDefinition } from '../canonical/types.ts';
import { GatewayError } from '../core/errors.ts';
import { anthropicAdapter } from './anthropic/index.ts';
import { createAzureOpenAIAdapter } from './azure/index.ts';
import { bedrockAdapter } from './bedrock/index.ts';
import { cohereAdapter } from './cohere/index.ts';
import { geminiAdapter } from './gemini/index.ts';
import { ollamaAdapter } from './ollama/index.ts';
import { openaiAdapter } from './openai.ts';
import { getAdapter } from './registry.ts';
import { THINKING_BUDGET } from './reasoning.ts';
import type { ProviderAdapter, UpstreamTarget } from './types.ts';

/** Issue 38, item 4: the client's cap bounds thinking; OpenAI reasoning models get max_completion_tokens; strict tools honoured or refused. */

const target = (provider: string, upstreamModel = 'm', options: JsonObject = {}): UpstreamTarget => ({
  upstreamModel,
  connection: {
    id: 'c',
    name: 'n',
    provider,
    apiKey: 'k',
    options: { region: 'us-east-1', accessKeyId: 'AKIA', secretAccessKey: 's', resource: 'r', ...options },
  },
});
const req = (extra: Partial<CanonicalRequest>): CanonicalRequest => ({
  model: 'pub',
  stream: false,
  includeUsage: false,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  ...extra,
});
const body = (adapter: ProviderAdapter | undefined, r: CanonicalRequest, t: UpstreamTarget): Record<string, unknown> => {
  if (adapter?.kind !== 'http') throw new Error('http adapter expected');
  return JSON.parse(adapter.buildRequest(r, t).body) as Record<string, unknown>;
};
const refused = (f: () => unknown): { param: string | null; message: string } => {
  try {
    f();
  } catch (e) {
    if (e instanceof GatewayError && e.status === 400) return { param: e.param, message: e.message };
    throw e;
  }
  throw new Error('expected a 400');
};

const chatHigh = (cap: number): Partial<CanonicalRequest> => ({
  reasoningEffort: 'high',
  reasoningParam: 'reasoning_effort',
  maxTokens: cap,
  maxTokensParam: 'max_completion_tokens',
});
const anthropic = (r: CanonicalRequest) => body(anthropicAdapter, r, target('anthropic'));
const geminiBudget = (r: CanonicalRequest) =>
  ((body(geminiAdapter, r, target('gemini')).generationConfig as JsonObject).thinkingConfig as JsonObject).thinkingBudget;

describe("the client's cap bounds thinking and answer together", () => {
  test('Anthropic: max_tokens is the cap; the effort is lowered to the largest table budget below it', () => {
    expect(anthropic(req(chatHigh(2000)))).toMatchObject({
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: THINKING_BUDGET.low },
    });
    expect(anthropic(req(chatHigh(10000)))).toMatchObject({ max_tokens: 10000, thinking: { budget_tokens: THINKING_BUDGET.medium } });
    expect(anthropic(req(chatHigh(30000)))).toMatchObject({ max_tokens: 30000, thinking: { budget_tokens: THINKING_BUDGET.high } });
    // A lower effort is never raised by a large cap.
    expect(anthropic(req({ ...chatHigh(30000), reasoningEffort: 'medium' }))).toMatchObject({
      max_tokens: 30000,
      thinking: { budget_tokens: THINKING_BUDGET.medium },
    });
  });

  test('Anthropic: a cap with no room for the 1024-token minimum is a 400 naming the effort and the cap; nothing is sent without thinking', () => {
    for (const cap of [1, 1000, 1024]) {
      const r = refused(() => anthropic(req(chatHigh(cap))));
      expect(r.param).toBe('reasoning_effort');
      expect(r.message).toContain(`'max_completion_tokens' (${cap})`);
    }
    expect(anthropic(req(chatHigh(1025)))).toMatchObject({ max_tokens: 1025, thinking: { budget_tokens: 1024 } });
    const resp = refused(() =>
      anthropic(req({ reasoningEffort: 'low', reasoningParam: 'reasoning.effort', maxTokens: 800, maxTokensParam: 'max_output_tokens' })),
    );
    expect(resp.param).toBe('reasoning.effort');
    expect(resp.message).toContain("'max_output_tokens' (800)");
  });

  test('Anthropic without a client cap: the default max_tokens is raised to fit the budget, within the output limit', () => {
    expect(anthropic(req({ reasoningEffort: 'high' }))).toMatchObject({
      max_tokens: THINKING_BUDGET.high + 4096,
      thinking: { budget_tokens: THINKING_BUDGET.high },
    });
    expect(anthropic(req({ reasoningEffort: 'high', outputLimit: 20000 }))).toMatchObject({
      max_tokens: 20000,
      thinking: { budget_tokens: 19999 },
    });
  });

  test("Gemini: the budget below maxOutputTokens (lowered by the table, then to cap − 1); a client's own budget at or above the clamped cap is refused", () => {
    expect(geminiBudget(req(chatHigh(2000)))).toBe(THINKING_BUDGET.low);
    expect(geminiBudget(req(chatHigh(500)))).toBe(499);
    expect(body(geminiAdapter, req(chatHigh(500)), target('gemini')).generationConfig).toMatchObject({ maxOutputTokens: 500 });
    expect(geminiBudget(req({ reasoningEffort: 'medium' }))).toBe(THINKING_BUDGET.medium);
    expect(refused(() => geminiBudget(req(chatHigh(1)))).param).toBe('reasoning_effort');
    const own = { reasoningBudget: 5000, reasoningParam: 'thinking.budget_tokens', maxTokensParam: 'max_tokens' };
    expect(geminiBudget(req({ ...own, maxTokens: 6000 }))).toBe(5000);
    expect(refused(() => geminiBudget(req({ ...own, maxTokens: 4000 }))).param).toBe('thinking.budget_tokens');
  });
});

describe('OpenAI reasoning models get max_completion_tokens', () => {
  const thinking: Partial<CanonicalRequest> = {
    reasoningBudget: 2048,
    reasoningParam: 'thinking.budget_tokens',
    maxTokens: 4000,
    maxTokensParam: 'max_tokens',
  };
  const sent = (
    r: Partial<CanonicalRequest>,
    model: string,
    options: JsonObject = {},
    adapter: ProviderAdapter | undefined = openaiAdapter,
  ) => body(adapter, req({ maxTokens: 4000, ...r }), target('openai', model, options));

  test('by the request (reasoning asked), the catalog (the reasoning capability) or the name (o-series, gpt-5)', () => {
    expect(sent(thinking, 'some-model')).toMatchObject({ max_completion_tokens: 4000, reasoning_effort: 'low' });
    expect(sent(thinking, 'some-model').max_tokens).toBeUndefined();
    expect(sent({ modelReasons: true }, 'some-model')).toMatchObject({ max_completion_tokens: 4000 });
    for (const model of ['o3', 'o4-mini', 'gpt-5', 'gpt-5-mini']) expect(sent({}, model)).toMatchObject({ max_completion_tokens: 4000 });
    for (const model of ['gpt-4o-mini', 'gpt-5-chat-latest']) expect(sent({}, model)).toMatchObject({ max_tokens: 4000 });
  });

  test("Azure's reasoning deployments too; the connection's maxTokensField wins; other compatible upstreams keep max_tokens", () => {
    expect(sent(thinking, 'o4-mini', {}, createAzureOpenAIAdapter())).toMatchObject({ max_completion_tokens: 4000 });
    expect(sent(thinking, 'o4-mini', { maxTokensField: 'max_tokens' })).toMatchObject({ max_tokens: 4000 });
    expect(sent({ modelReasons: true }, 'deepseek-reasoner', {}, getAdapter('deepseek'))).toMatchObject({ max_tokens: 4000 });
  });
});

describe('strict tools: honoured or refused, never dropped', () => {
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const tool = (strict: boolean | undefined, param = 'tools.0.function'): ToolDefinition => ({
    name: 'get_weather',
    parameters: schema,
    strict,
    param,
    schemaParam: `${param}.parameters`,
  });

  test('Anthropic: strict as the client sent it, on the tool', () => {
    expect((anthropic(req({ tools: [tool(true)] })).tools as JsonObject[])[0]).toMatchObject({ name: 'get_weather', strict: true });
    expect((anthropic(req({ tools: [tool(false)] })).tools as JsonObject[])[0]).toMatchObject({ strict: false });
    expect((anthropic(req({ tools: [tool(undefined)] })).tools as JsonObject[])[0]?.strict).toBeUndefined();
  });

  test('OpenAI (translated): strict with the schema made strict; Cohere: strict_tools', () => {
    const fn = (
      body(openaiAdapter, req({ tools: [tool(true, 'tools.0')] }), target('openai', 'gpt-4o')).tools as { function: JsonObject }[]
    )[0]?.function;
    expect(fn).toEqual({ name: 'get_weather', parameters: { ...schema, additionalProperties: false }, strict: true });
    const open = { type: 'object', properties: { a: { type: 'string' } }, required: [] };
    expect(
      refused(() =>
        body(
          openaiAdapter,
          req({ tools: [{ name: 'f', parameters: open, strict: true, param: 'tools.0', schemaParam: 'tools.0.input_schema' }] }),
          target('openai', 'gpt-4o'),
        ),
      ).param,
    ).toBe('tools.0.input_schema.required');
    expect(body(cohereAdapter, req({ tools: [tool(true)] }), target('cohere')).strict_tools).toBe(true);
  });

  test('Gemini, Bedrock, Ollama: strict: true is a 400 naming it; strict: false and tool_choice none are served', () => {
    for (const [adapter, provider] of [
      [geminiAdapter, 'gemini'],
      [bedrockAdapter, 'bedrock'],
      [ollamaAdapter, 'ollama'],
    ] as const) {
      expect(
        refused(() =>
          body(adapter, req({ tools: [tool(false, 'tools.0'), { ...tool(true, 'tools.1'), name: 'other' }] }), target(provider)),
        ).param,
      ).toBe('tools.1.strict');
      expect(body(adapter, req({ tools: [tool(false)] }), target(provider))).toBeDefined();
      expect(body(adapter, req({ tools: [tool(true)], toolChoice: 'none' }), target(provider))).toBeDefined();
    }
  });
});
