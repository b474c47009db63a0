import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { THINKING_BUDGET } from '../src/providers/reasoning.ts';
import { admin } from './support/gateway.ts';
import type { Recorded } from './support/mock-upstreams.ts';
import { mockSignature } from './support/mock-thinking.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';
import { refusal } from './support/sdk-refusal.ts';

/**
 * Issue 26, defects 1 and 2: `n` and reasoning settings across families, through the official
 * SDKs. A field the target family cannot honour is refused with a 400 naming it; reasoning is
 * mapped (effort ↔ budget, within the client's limit: test/clients-translation-caps.test.ts) and the upstream's reasoning comes back in
 * the client's format (Chat `reasoning_content`, Responses reasoning items, Messages thinking
 * blocks), streaming too. The mocks refuse what the real APIs refuse (thinking without its
 * signature on a tool-use turn, a modified signed thinking, max_tokens on an OpenAI reasoning model).
 */

let w: World;
let openai: OpenAI;
let anthropic: Anthropic;
const THINKING = 'Let me think about that.';

const model = async (name: string, provider: string, capabilities: string[], connection: string, upstream: string) => {
  const m = (await w.tg.must(admin('CreateModel'), {
    model: name,
    provider,
    capabilities,
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
  openai = new OpenAI({ baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: w.tg.url, apiKey: w.p.apiKey, maxRetries: 0 });
  // Reasoning models: OpenAI's take max_completion_tokens (the documented connection option).
  await w.tg.must(admin('CreateProviderConnection'), {
    customerId: 'acme',
    projectId: 'default',
    name: 'mock-openai-reasoning',
    provider: 'openai',
    baseUrl: `${w.oa.url}/v1`,
    apiKey: 'sk-upstream-openai-secret',
    options: { maxTokensField: 'max_completion_tokens' },
  });
  await model('gpt-think', 'openai', ['chat', 'tools', 'reasoning'], 'mock-openai-reasoning', 'o4-mini');
  await model('claude-think', 'anthropic', ['chat', 'tools', 'reasoning'], 'mock-anthropic', 'claude-sonnet-4-5');
}, 60_000);
afterAll(() => stopWorld(w));

const last = (m: 'oa' | 'an'): Recorded => {
  const r = w[m].requests.at(-1);
  if (!r) throw new Error('the mock upstream received nothing');
  return r;
};

describe('n (defect 1)', () => {
  test('Chat n: 2 to Anthropic is refused with a 400 naming n (streaming too); nothing reaches the upstream', async () => {
    const before = w.an.requests.length;
    const r = await refusal(() =>
      openai.chat.completions.create({ model: 'claude-mini', n: 2, messages: [{ role: 'user', content: 'two please' }] }),
    );
    expect(r).toMatchObject({ status: 400, param: 'n' });
    const s = await refusal(() =>
      openai.chat.completions.create({ model: 'claude-mini', n: 2, stream: true, messages: [{ role: 'user', content: 'two please' }] }),
    );
    expect(s).toMatchObject({ status: 400, param: 'n' });
    expect(w.an.requests.length).toBe(before);
  });

  test('Chat n: 2 to OpenAI is honoured: two choices; n: 1 to Anthropic is served', async () => {
    const res = await openai.chat.completions.create({ model: 'gpt-mini', n: 2, messages: [{ role: 'user', content: 'two please' }] });
    expect(last('oa').body.n).toBe(2);
    expect(res.choices.map((c) => c.index)).toEqual([0, 1]);
    const one = await openai.chat.completions.create({ model: 'claude-mini', n: 1, messages: [{ role: 'user', content: 'one' }] });
    expect(one.choices).toHaveLength(1);
  });
});

/** The non-standard `reasoning_content` of a Chat message or delta (not in the SDK's types). */
const reasoningContent = (v: object): unknown => ('reasoning_content' in v ? v.reasoning_content : undefined);

describe('reasoning toward Anthropic (defect 2)', () => {
  test("Chat reasoning_effort → thinking with the table budget, within the client's limit; reasoning_content back", async () => {
    const res = await openai.chat.completions.create({
      model: 'claude-think',
      reasoning_effort: 'high',
      max_completion_tokens: 30000,
      messages: [{ role: 'user', content: 'think' }],
    });
    const sent = last('an').body;
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: THINKING_BUDGET.high });
    expect(sent.max_tokens).toBe(30000);
    const message = res.choices[0]?.message;
    expect(message?.content).toBe('anthropic says: think');
    expect(message && reasoningContent(message)).toBe(THINKING);
  });

  test('Chat reasoning_effort, streamed: reasoning_content deltas before the text', async () => {
    const stream = await openai.chat.completions.create({
      model: 'claude-think',
      reasoning_effort: 'low',
      stream: true,
      messages: [{ role: 'user', content: 'stream it' }],
    });
    let reasoning = '';
    let text = '';
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      const r = reasoningContent(delta);
      if (typeof r === 'string') {
        expect(text).toBe('');
        reasoning += r;
      }
      text += delta.content ?? '';
    }
    expect(last('an').body.thinking).toEqual({ type: 'enabled', budget_tokens: THINKING_BUDGET.low });
    expect(reasoning).toBe(THINKING);
    expect(text).toBe('anthropic says: stream it');
  });

  test('Responses reasoning.effort → thinking; a reasoning item (summary, signed thinking) back; replayed signed on the tool turn', async () => {
    w.an.script((r) => {
      const msgs = (r.body.messages as { role: string; content: unknown }[]) ?? [];
      return msgs.length === 1
        ? { toolCall: { id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }, usage: { input: 20, output: 9 } }
        : { text: 'It is cold.', usage: { input: 30, output: 5 } };
    });
    try {
      const tools = [
        {
          type: 'function' as const,
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          strict: false,
        },
      ];
      const first = await openai.responses.create({ model: 'claude-think', reasoning: { effort: 'medium' }, input: 'weather?', tools });
      expect(last('an').body.thinking).toEqual({ type: 'enabled', budget_tokens: THINKING_BUDGET.medium });
      const [item, call] = first.output;
      expect(item?.type).toBe('reasoning');
      if (item?.type !== 'reasoning') throw new Error('no reasoning item');
      expect(item.summary).toEqual([{ type: 'summary_text', text: THINKING }]);
      expect(typeof item.encrypted_content).toBe('string');
      expect(call?.type).toBe('function_call');
      if (call?.type !== 'function_call') throw new Error('no function call');
      // The next turn by previous_response_id: Anthropic gets the signed thinking back first (the mock refuses it otherwise).
      const second = await openai.responses.create({
        model: 'claude-think',
        reasoning: { effort: 'medium' },
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: '3 degrees' }],
        tools,
      });
      expect(second.output_text).toBe('It is cold.');
      const assistant = (
        last('an').body.messages as { role: string; content: { type: string; thinking?: string; signature?: string }[] }[]
      )[1];
      expect(assistant?.content[0]).toEqual({ type: 'thinking', thinking: THINKING, signature: mockSignature(THINKING) });
      expect(assistant?.content[1]?.type).toBe('tool_use');
    } finally {
      w.an.script(undefined);
    }
  });

  test('Responses reasoning.effort, streamed: reasoning summary events and the item in response.completed', async () => {
    const stream = await openai.responses.create({ model: 'claude-think', reasoning: { effort: 'high' }, input: 'stream', stream: true });
    const types: string[] = [];
    let summary = '';
    let done: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.reasoning_summary_text.delta') summary += ev.delta;
      if (ev.type === 'response.completed') done = ev.response;
    }
    expect(summary).toBe(THINKING);
    expect(types.indexOf('response.reasoning_summary_text.done')).toBeLessThan(types.indexOf('response.output_text.delta'));
    const item = done?.output[0];
    expect(item?.type === 'reasoning' && item.summary[0]?.text).toBe(THINKING);
    expect(done?.output_text).toBe('anthropic says: stream');
  });

  test('a model without the reasoning capability: reasoning_effort and reasoning.effort refused with a 400 naming them', async () => {
    const before = w.an.requests.length;
    const chat = await refusal(() =>
      openai.chat.completions.create({ model: 'claude-mini', reasoning_effort: 'low', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(chat).toMatchObject({ status: 400, param: 'reasoning_effort' });
    const resp = await refusal(() => openai.responses.create({ model: 'claude-mini', reasoning: { effort: 'low' }, input: 'x' }));
    expect(resp).toMatchObject({ status: 400, param: 'reasoning.effort' });
    expect(w.an.requests.length).toBe(before);
  });

  test('a Chat tool-result turn with reasoning_effort is refused (Chat cannot carry the signed thinking Anthropic requires)', async () => {
    const r = await refusal(() =>
      openai.chat.completions.create({
        model: 'claude-think',
        reasoning_effort: 'low',
        messages: [
          { role: 'user', content: 'weather?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'toolu_1', content: 'cold' },
        ],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
      }),
    );
    expect(r.status).toBe(400);
    expect(r.param).toBe('reasoning_effort');
    expect(r.message).toContain('signed thinking');
  });
});

describe('thinking toward OpenAI (defect 2)', () => {
  test('Messages thinking.budget_tokens → reasoning_effort by the table (max_completion_tokens on the reasoning connection)', async () => {
    for (const [budget, effort] of [
      [2000, 'low'],
      [THINKING_BUDGET.medium, 'medium'],
      [30000, 'high'],
    ] as const) {
      // Streamed: the SDK refuses a non-streamed request of this size.
      const res = await anthropic.messages
        .stream({
          model: 'gpt-think',
          max_tokens: 40000,
          thinking: { type: 'enabled', budget_tokens: budget },
          messages: [{ role: 'user', content: 'think' }],
        })
        .finalMessage();
      expect(last('oa').body.reasoning_effort).toBe(effort);
      expect(last('oa').body.max_completion_tokens).toBe(40000);
      expect(res.content.at(-1)).toMatchObject({ type: 'text', text: 'openai says: think' });
    }
    await anthropic.messages.create({
      model: 'gpt-think',
      max_tokens: 1000,
      output_config: { effort: 'low' },
      messages: [{ role: 'user', content: 'effort' }],
    });
    expect(last('oa').body.reasoning_effort).toBe('low');
  });

  test('reasoning the OpenAI-compatible upstream gives (reasoning_content) comes back as a thinking block, streamed too', async () => {
    w.oa.script(() => ({ text: 'Done.', reasoning: 'Weighing options.', usage: { input: 10, output: 6 } }));
    try {
      const res = await anthropic.messages.create({
        model: 'gpt-think',
        max_tokens: 4000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'q' }],
      });
      expect(res.content[0]).toMatchObject({ type: 'thinking', thinking: 'Weighing options.' });
      expect(res.content[1]).toMatchObject({ type: 'text', text: 'Done.' });
      const streamed = await anthropic.messages
        .stream({
          model: 'gpt-think',
          max_tokens: 4000,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          messages: [{ role: 'user', content: 'q' }],
        })
        .finalMessage();
      expect(streamed.content[0]).toMatchObject({ type: 'thinking', thinking: 'Weighing options.' });
      expect(streamed.content[1]).toMatchObject({ type: 'text', text: 'Done.' });
    } finally {
      w.oa.script(undefined);
    }
  });

  test('thinking to a model without the reasoning capability is refused naming thinking.budget_tokens', async () => {
    const before = w.oa.requests.length;
    const r = await refusal(() =>
      anthropic.messages.create({
        model: 'gpt-mini',
        max_tokens: 4000,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        messages: [{ role: 'user', content: 'x' }],
      }),
    );
    expect(r).toMatchObject({ status: 400, param: 'thinking.budget_tokens' });
    expect(w.oa.requests.length).toBe(before);
  });
});
