import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import type { TestGateway } from './support/gateway.ts';
import type { MockUpstream } from './support/mock-upstreams.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * The official SDKs, unmodified, against the running gateway: every client format × every upstream
 * family, streaming and not, text and tool calls. The mocks assert what the gateway sent upstream.
 */

let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let openai: OpenAI;
let anthropic: Anthropic;

let world: World | undefined;
beforeAll(async () => {
  world = await startWorld();
  ({ tg, oa, an } = world);
  const { p } = world;
  openai = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: p.apiKey, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: tg.url, apiKey: p.apiKey, maxRetries: 0 });
}, 60_000);

afterAll(() => stopWorld(world));

const UPSTREAMS = [
  { model: 'gpt-mini', family: 'openai', upstreamModel: 'gpt-4o-mini' },
  { model: 'claude-mini', family: 'anthropic', upstreamModel: 'claude-haiku-4-5' },
] as const;

const lastRequest = (family: 'openai' | 'anthropic') => {
  const m = family === 'openai' ? oa : an;
  const r = m.requests.at(-1);
  if (!r) throw new Error('the mock upstream received nothing');
  return r;
};

/** What every request to an upstream must look like, whatever the client format. */
const expectUpstreamShape = (family: 'openai' | 'anthropic', upstreamModel: string, stream: boolean, responses = false) => {
  const r = lastRequest(family);
  expect(r.body.model).toBe(upstreamModel);
  if (family === 'openai' && responses) {
    // Responses clients reach OpenAI natively (the gateway keeps the conversation: store false upstream).
    expect(r.path).toBe('/v1/responses');
    expect(r.headers.authorization).toBe('Bearer sk-upstream-openai-secret');
    expect(r.body.store).toBe(false);
  } else if (family === 'openai') {
    expect(r.path).toBe('/v1/chat/completions');
    expect(r.headers.authorization).toBe('Bearer sk-upstream-openai-secret');
    expect(Array.isArray(r.body.messages)).toBe(true);
    if (stream) expect(r.body.stream_options).toEqual({ include_usage: true });
  } else {
    expect(r.path).toBe('/v1/messages');
    expect(r.headers['x-api-key']).toBe('sk-ant-upstream-secret');
    expect(r.headers['anthropic-version']).toBe('2023-06-01');
    expect(r.headers.authorization).toBeUndefined();
    expect(typeof r.body.max_tokens).toBe('number');
  }
  expect(r.body.stream === true).toBe(stream);
};

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

for (const u of UPSTREAMS) {
  describe(`upstream ${u.family}`, () => {
    test('chat completions, non-streaming', async () => {
      const res = await openai.chat.completions.create({ model: u.model, messages: [{ role: 'user', content: 'hello there' }] });
      expect(res.choices[0]?.message.content).toBe(`${u.family} says: hello there`);
      expect(res.choices[0]?.finish_reason).toBe('stop');
      expect(res.model).toBe(u.model);
      expect(res.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
      expectUpstreamShape(u.family, u.upstreamModel, false);
    });

    test('chat completions, streaming with include_usage', async () => {
      const stream = await openai.chat.completions.create({
        model: u.model,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'stream me words' },
        ],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let finish: string | null | undefined;
      let usage: OpenAI.CompletionUsage | null | undefined;
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        expect(chunk.object).toBe('chat.completion.chunk');
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(chunks).toBeGreaterThan(3);
      expect(text).toBe(`${u.family} says: stream me words`);
      expect(finish).toBe('stop');
      expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
      expectUpstreamShape(u.family, u.upstreamModel, true);
    });

    test('chat completions, streamed tool call with argument deltas', async () => {
      const stream = await openai.chat.completions.create({
        model: u.model,
        messages: [{ role: 'user', content: 'call get_weather {"city":"Paris"}' }],
        tools: [weather],
        stream: true,
      });
      const args: string[] = [];
      let name = '';
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) {
          if (tc.function?.name) name = tc.function.name;
          if (tc.function?.arguments) args.push(tc.function.arguments);
        }
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect(name).toBe('get_weather');
      expect(args.length).toBeGreaterThanOrEqual(2);
      expect(JSON.parse(args.join(''))).toEqual({ city: 'Paris' });
      expect(finish).toBe('tool_calls');
      const sent = lastRequest(u.family).body.tools as Record<string, unknown>[];
      expect(sent).toHaveLength(1);
    });

    test('responses, non-streaming', async () => {
      const res = await openai.responses.create({ model: u.model, input: 'hi responses' });
      expect(res.object).toBe('response');
      expect(res.status).toBe('completed');
      expect(res.output_text).toBe(`${u.family} says: hi responses`);
      expect(res.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
      expectUpstreamShape(u.family, u.upstreamModel, false, true);
    });

    test('responses, streaming', async () => {
      const stream = openai.responses.stream({ model: u.model, input: [{ role: 'user', content: 'stream responses' }] });
      const types = new Set<string>();
      let deltas = '';
      for await (const ev of stream) {
        types.add(ev.type);
        if (ev.type === 'response.output_text.delta') deltas += ev.delta;
      }
      const final = await stream.finalResponse();
      expect(deltas).toBe(`${u.family} says: stream responses`);
      expect(final.output_text).toBe(deltas);
      expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
      for (const t of [
        'response.created',
        'response.output_item.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.completed',
      ])
        expect(types.has(t)).toBe(true);
      expectUpstreamShape(u.family, u.upstreamModel, true, true);
    });

    test('responses, streamed function call', async () => {
      const stream = openai.responses.stream({
        model: u.model,
        input: 'call get_weather {"city":"Oslo"}',
        tools: [{ type: 'function', name: 'get_weather', parameters: weather.function.parameters, strict: false }],
      });
      const final = await stream.finalResponse();
      const call = final.output.find((o) => o.type === 'function_call');
      expect(call?.type === 'function_call' && call.name).toBe('get_weather');
      expect(call?.type === 'function_call' && JSON.parse(call.arguments)).toEqual({ city: 'Oslo' });
    });

    test('messages, non-streaming', async () => {
      const msg = await anthropic.messages.create({
        model: u.model,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi messages' }],
      });
      expect(msg.content[0]?.type === 'text' && msg.content[0].text).toBe(`${u.family} says: hi messages`);
      expect(msg.stop_reason).toBe('end_turn');
      expect(msg.usage.input_tokens).toBe(12);
      expect(msg.usage.output_tokens).toBe(7);
      expectUpstreamShape(u.family, u.upstreamModel, false);
    });

    test('messages, streaming with finalMessage()', async () => {
      const stream = anthropic.messages.stream({
        model: u.model,
        max_tokens: 100,
        system: 'terse',
        messages: [{ role: 'user', content: 'stream messages' }],
      });
      let text = '';
      stream.on('text', (t) => {
        text += t;
      });
      const final = await stream.finalMessage();
      expect(text).toBe(`${u.family} says: stream messages`);
      expect(final.content[0]?.type === 'text' && final.content[0].text).toBe(text);
      expect(final.stop_reason).toBe('end_turn');
      expect(final.usage.input_tokens).toBe(12);
      expect(final.usage.output_tokens).toBe(7);
      expectUpstreamShape(u.family, u.upstreamModel, true);
    });

    test('messages, streamed tool use', async () => {
      const stream = anthropic.messages.stream({
        model: u.model,
        max_tokens: 100,
        tools: [
          { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
        ],
        messages: [{ role: 'user', content: 'call get_weather {"city":"Rome"}' }],
      });
      const final = await stream.finalMessage();
      const block = final.content.find((b) => b.type === 'tool_use');
      expect(block?.type === 'tool_use' && block.name).toBe('get_weather');
      expect(block?.type === 'tool_use' && block.input).toEqual({ city: 'Rome' });
      expect(final.stop_reason).toBe('tool_use');
    });
  });
}

test('Messages SDK 0.x style x-api-key and an old anthropic-version are accepted', async () => {
  const res = await fetch(`${tg.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': (anthropic.apiKey ?? '') as string, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-mini', max_tokens: 10, messages: [{ role: 'user', content: 'old sdk' }] }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { content: { text: string }[] };
  expect(body.content[0]?.text).toBe('anthropic says: old sdk');
});
