import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { THINKING_BUDGET } from '../src/providers/reasoning.ts';
import { admin } from './support/gateway.ts';
import type { Recorded } from './support/mock-upstreams.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';
import { refusal } from './support/sdk-refusal.ts';

/**
 * Issue 38, item 4 ("translation caps"), through the official SDKs and the real gateway: the
 * client's output limit bounds thinking and answer together toward families that count thinking
 * inside their limit (Anthropic, Gemini), a limit too small for Anthropic's minimum budget is a 400
 * naming the fields; Messages thinking toward an OpenAI reasoning model goes up as
 * `max_completion_tokens` (the mock refuses `max_tokens` for those models, as OpenAI does); tool
 * `strict` reaches Anthropic and is refused toward Gemini. The mocks record what the gateway sent.
 */

let w: World;
let openai: OpenAI;
let anthropic: Anthropic;
/** A Gemini upstream speaking generateContent, recording what it is sent. */
let gemini: ReturnType<typeof Bun.serve>;
const geminiSent: Recorded[] = [];

const model = async (name: string, provider: string, connection: string, upstream: string) => {
  const m = (await w.tg.must(admin('CreateModel'), {
    model: name,
    provider,
    capabilities: ['chat', 'tools', 'reasoning'],
    maxOutputTokens: 64000,
    inputPricePerMillion: 1,
    outputPricePerMillion: 2,
  })) as {
    model: { id: string };
  };
  await w.tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
  await w.tg.must(admin('CreateRoute'), {
    customerId: 'acme',
    projectId: 'default',
    model: name,
    targets: [{ connection, model: upstream }],
  });
};

beforeAll(async () => {
  w = await startWorld();
  gemini = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const body = (await req.json()) as Record<string, unknown>;
      geminiSent.push({ path: new URL(req.url).pathname, headers: Object.fromEntries(req.headers.entries()), body });
      return Response.json({
        candidates: [{ content: { role: 'model', parts: [{ text: 'gemini says hi' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 },
        modelVersion: 'gemini-2.5-flash',
      });
    },
  });
  openai = new OpenAI({ baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: w.tg.url, apiKey: w.p.apiKey, maxRetries: 0 });
  await w.tg.must(admin('CreateProviderConnection'), {
    customerId: 'acme',
    projectId: 'default',
    name: 'mock-gemini',
    provider: 'gemini',
    baseUrl: `http://127.0.0.1:${gemini.port}`,
    apiKey: 'AIza-caps-secret',
  });
  await model('claude-think', 'anthropic', 'mock-anthropic', 'claude-sonnet-4-5');
  await model('gemini-think', 'gemini', 'mock-gemini', 'gemini-2.5-flash');
  // The provisioned OpenAI connection, without options.maxTokensField: the reasoning model is recognised.
  await model('o-think', 'openai', 'mock-openai', 'o4-mini');
}, 60_000);
afterAll(async () => {
  await gemini.stop(true);
  await stopWorld(w);
});

const last = (m: 'oa' | 'an'): Record<string, unknown> => {
  const r = w[m].requests.at(-1);
  if (!r) throw new Error('the mock upstream received nothing');
  return r.body;
};
const user = [{ role: 'user' as const, content: 'think' }];

describe("the client's limit bounds thinking and answer (issue 38 item 4a)", () => {
  test('Chat reasoning_effort high + max_completion_tokens 2000 → Anthropic max_tokens 2000, budget 1024 (streamed too)', async () => {
    const res = await openai.chat.completions.create({
      model: 'claude-think',
      reasoning_effort: 'high',
      max_completion_tokens: 2000,
      messages: user,
    });
    expect(res.choices[0]?.message.content).toBe('anthropic says: think');
    expect(last('an')).toMatchObject({ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: THINKING_BUDGET.low } });
    const stream = await openai.chat.completions.create({
      model: 'claude-think',
      reasoning_effort: 'high',
      max_tokens: 10000,
      stream: true,
      messages: user,
    });
    for await (const _ of stream) void _;
    expect(last('an')).toMatchObject({ max_tokens: 10000, thinking: { type: 'enabled', budget_tokens: THINKING_BUDGET.medium } });
  });

  test('Responses max_output_tokens bounds the total the same way', async () => {
    const res = await openai.responses.create({
      model: 'claude-think',
      reasoning: { effort: 'high' },
      max_output_tokens: 2000,
      input: 'think',
    });
    expect(res.output_text).toBe('anthropic says: think');
    expect(last('an')).toMatchObject({ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: THINKING_BUDGET.low } });
  });

  test('a limit with no room for the 1024-token minimum: 400 naming the effort and the limit; nothing reaches Anthropic', async () => {
    const before = w.an.requests.length;
    const chat = await refusal(() =>
      openai.chat.completions.create({ model: 'claude-think', reasoning_effort: 'high', max_completion_tokens: 1000, messages: user }),
    );
    expect(chat).toMatchObject({ status: 400, param: 'reasoning_effort' });
    expect(chat.message).toContain("'max_completion_tokens' (1000)");
    const resp = await refusal(() =>
      openai.responses.create({ model: 'claude-think', reasoning: { effort: 'low' }, max_output_tokens: 1024, input: 'think' }),
    );
    expect(resp).toMatchObject({ status: 400, param: 'reasoning.effort' });
    expect(resp.message).toContain("'max_output_tokens' (1024)");
    expect(w.an.requests.length).toBe(before);
  });

  test('Gemini: maxOutputTokens is the limit and thinkingBudget fits below it', async () => {
    const res = await openai.chat.completions.create({
      model: 'gemini-think',
      reasoning_effort: 'high',
      max_completion_tokens: 2000,
      messages: user,
    });
    expect(res.choices[0]?.message.content).toBe('gemini says hi');
    expect(geminiSent.at(-1)?.body.generationConfig).toMatchObject({
      maxOutputTokens: 2000,
      thinkingConfig: { thinkingBudget: THINKING_BUDGET.low, includeThoughts: true },
    });
    await anthropic.messages.create({ model: 'gemini-think', max_tokens: 600, output_config: { effort: 'max' }, messages: user });
    expect(geminiSent.at(-1)?.body.generationConfig).toMatchObject({ maxOutputTokens: 600, thinkingConfig: { thinkingBudget: 599 } });
  });
});

describe('OpenAI reasoning models get max_completion_tokens (issue 38 item 4b)', () => {
  test('Messages thinking → o4-mini: max_completion_tokens, no max_tokens; answered (streamed too)', async () => {
    const res = await anthropic.messages.create({
      model: 'o-think',
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: user,
    });
    expect(res.content.at(-1)).toMatchObject({ type: 'text', text: 'openai says: think' });
    const sent = last('oa');
    expect(sent).toMatchObject({ model: 'o4-mini', max_completion_tokens: 3000, reasoning_effort: 'low' });
    expect('max_tokens' in sent).toBe(false);
    await anthropic.messages.stream({ model: 'o-think', max_tokens: 3000, messages: user }).finalMessage();
    expect(last('oa')).toMatchObject({ max_completion_tokens: 3000 });
    expect('max_tokens' in last('oa')).toBe(false);
  });

  test("the mock refuses max_tokens for a reasoning model as OpenAI does: a Chat client's own max_tokens is relayed as that 400", async () => {
    const r = await refusal(() => openai.chat.completions.create({ model: 'o-think', max_tokens: 100, messages: user }));
    expect(r.status).toBe(400);
    expect(r.message).toContain(
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    );
    expect(last('oa')).toMatchObject({ model: 'o4-mini', max_tokens: 100 });
  });
});

const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };

describe('tool strict: honoured or refused, never dropped (issue 38 item 4c)', () => {
  test('Chat and Responses strict tools reach Anthropic with strict: true', async () => {
    await openai.chat.completions.create({
      model: 'claude-mini',
      messages: user,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: schema, strict: true } }],
    });
    expect(last('an').tools).toEqual([{ name: 'get_weather', input_schema: schema, strict: true }]);
    await openai.responses.create({
      model: 'claude-mini',
      input: 'think',
      tools: [{ type: 'function', name: 'get_weather', parameters: schema, strict: true }],
    });
    expect(last('an').tools).toEqual([{ name: 'get_weather', input_schema: schema, strict: true }]);
  });

  test('toward Gemini strict: true is a 400 naming it, nothing sent; strict: false is served', async () => {
    const before = geminiSent.length;
    const chat = await refusal(() =>
      openai.chat.completions.create({
        model: 'gemini-think',
        messages: user,
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: schema, strict: true } }],
      }),
    );
    expect(chat).toMatchObject({ status: 400, param: 'tools.0.function.strict' });
    const resp = await refusal(() =>
      openai.responses.create({
        model: 'gemini-think',
        input: 'think',
        tools: [{ type: 'function', name: 'get_weather', parameters: schema, strict: true }],
      }),
    );
    expect(resp).toMatchObject({ status: 400, param: 'tools.0.strict' });
    expect(geminiSent.length).toBe(before);
    await openai.chat.completions.create({
      model: 'gemini-think',
      messages: user,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: schema, strict: false } }],
    });
    expect(geminiSent.at(-1)?.body.tools).toEqual([{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: schema }] }]);
  });
});
