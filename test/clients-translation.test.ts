import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, Output, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { z } from 'zod';
import { JSON_OBJECT_INSTRUCTION } from '../src/providers/anthropic/request.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Faithful translation with the clients that hit the failures: the AI SDK's Anthropic provider
 * (max_tokens above the model's limit), openai-compatible and LangChain structured output toward
 * Anthropic (json_schema, json_object), LangChain chat models both ways. The mocks refuse what
 * the real APIs refuse (max_tokens above the limit, a tool result without its tool use).
 */

let w: World;
beforeAll(async () => {
  w = await startWorld();
}, 60_000);
afterAll(() => stopWorld(w));

const LIMIT = 16384; // the catalog's maxOutputTokens in provision()

describe('max_tokens above the catalog limit is clamped', () => {
  test('AI SDK Anthropic provider (sends its own large default) against Anthropic and OpenAI upstreams', async () => {
    const anthropic = createAnthropic({ baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey });
    for (const [model, up] of [
      ['claude-mini', w.an],
      ['gpt-mini', w.oa],
    ] as const) {
      const r = await generateText({ model: anthropic(model), prompt: 'hello', maxOutputTokens: 128000 });
      expect(r.text).toContain('says: hello');
      const sent = up.requests.at(-1)?.body ?? {};
      expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(LIMIT);
    }
    const streamed = streamText({ model: anthropic('claude-mini'), prompt: 'streamed', maxOutputTokens: 200000 });
    expect(await streamed.text).toBe('anthropic says: streamed');
    expect(w.an.requests.at(-1)?.body.max_tokens).toBe(LIMIT);
  });

  test('a Chat request without max_tokens toward Anthropic gets the catalog value', async () => {
    const compat = createOpenAICompatible({ name: 'gw', baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey });
    await generateText({ model: compat('claude-mini'), prompt: 'no limit given' });
    expect(w.an.requests.at(-1)?.body.max_tokens).toBe(LIMIT);
  });
});

describe('structured output toward Anthropic', () => {
  test('AI SDK openai-compatible json_schema → output_config', async () => {
    w.an.script(() => ({ text: '{"city":"Oslo","temp":3}', usage: { input: 10, output: 8 } }));
    try {
      const compat = createOpenAICompatible({ name: 'gw', baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey, supportsStructuredOutputs: true });
      const r = await generateText({
        model: compat('claude-mini'),
        prompt: 'weather',
        output: Output.object({ schema: z.object({ city: z.string(), temp: z.number() }) }),
      });
      expect(r.output).toEqual({ city: 'Oslo', temp: 3 });
      const sent = w.an.requests.at(-1)?.body as { output_config?: { format?: { type?: string } } };
      expect(sent.output_config?.format?.type).toBe('json_schema');
    } finally {
      w.an.script(undefined);
    }
  });

  test('LangChain ChatOpenAI jsonMode (response_format json_object) → an instruction, not dropped', async () => {
    w.an.script(() => ({ text: '{"answer":"yes"}', usage: { input: 10, output: 8 } }));
    try {
      const chat = new ChatOpenAI({
        model: 'claude-mini',
        apiKey: w.p.apiKey,
        configuration: { baseURL: `${w.tg.url}/v1` },
        maxRetries: 0,
      });
      const structured = chat.withStructuredOutput(z.object({ answer: z.string() }), { method: 'jsonMode' });
      expect(await structured.invoke('answer in JSON')).toEqual({ answer: 'yes' });
      expect(String(w.an.requests.at(-1)?.body.system)).toContain(JSON_OBJECT_INSTRUCTION);
    } finally {
      w.an.script(undefined);
    }
  });
});

describe('LangChain chat models', () => {
  test('ChatAnthropic invoke and stream against both upstream families', async () => {
    for (const [model, family] of [
      ['claude-mini', 'anthropic'],
      ['gpt-mini', 'openai'],
    ] as const) {
      const chat = new ChatAnthropic({ model, apiKey: w.p.apiKey, anthropicApiUrl: w.tg.url, maxRetries: 0 });
      const r = await chat.invoke('hi there');
      expect(r.content).toBe(`${family} says: hi there`);
      let text = '';
      for await (const chunk of await chat.stream('streaming now')) text += typeof chunk.content === 'string' ? chunk.content : '';
      expect(text).toBe(`${family} says: streaming now`);
    }
  });

  test('ChatOpenAI with the Responses API, multi-turn', async () => {
    const chat = new ChatOpenAI({
      model: 'gpt-mini',
      apiKey: w.p.apiKey,
      configuration: { baseURL: `${w.tg.url}/v1` },
      useResponsesApi: true,
      maxRetries: 0,
    });
    const first = await chat.invoke('turn one');
    expect(first.text).toBe('openai says: turn one');
    const second = await chat.invoke([['human', 'turn one'], first, ['human', 'turn two']]);
    expect(second.text).toBe('openai says: turn two');
  });
});
