import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { z } from 'zod';
import { admin } from './support/gateway.ts';
import type { Recorded, Script } from './support/mock-upstreams.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Responses requests go natively to upstreams that speak the Responses API (openai, azure-openai):
 * the client's JSON arrives with only `model` (and `store: false`: the gateway keeps the
 * conversation) changed, reasoning items with their encrypted content survive across turns, and the
 * answer keeps the gateway's ids. A target that cannot speak Responses is translated (fallback).
 */

let w: World;
const headers = () => ({ 'content-type': 'application/json', authorization: `Bearer ${w.p.apiKey}` });
const sdk = () => new OpenAI({ baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey, maxRetries: 0 });
const post = async (body: unknown) => {
  const res = await fetch(`${w.tg.url}/v1/responses`, { method: 'POST', headers: headers(), body: JSON.stringify(body) });
  return { res, text: await res.text() };
};
const last = (): Recorded => w.oa.requests.at(-1) as Recorded;
const hex = (res: Response) => (res.headers.get('x-request-id') ?? '').replace(/-/g, '');

const model = async (name: string, capabilities: string[], targets: { connection: string; model: string; priority?: number }[]) => {
  const m = (await w.tg.must(admin('CreateModel'), {
    model: name,
    provider: 'openai',
    capabilities,
    maxOutputTokens: 16384,
    inputPricePerMillion: 1,
    outputPricePerMillion: 2,
  })) as { model: { id: string } };
  await w.tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
  await w.tg.must(admin('CreateRoute'), { customerId: 'acme', projectId: 'default', model: name, targets });
};

const SCRIPT: Script = (r) =>
  r.body.model === 'fail-500'
    ? {
        status: 500,
        errorBody: JSON.stringify({ error: { message: 'The server had an error', type: 'server_error', param: null, code: null } }),
      }
    : {
        text: `openai says: ${JSON.stringify(r.body.messages).includes('second') ? 'second answer' : 'first answer'}`,
        usage: { input: 40, output: 10 },
      };

beforeAll(async () => {
  w = await startWorld();
  await model('reasoner', ['chat', 'tools', 'reasoning'], [{ connection: 'mock-openai', model: 'o4-mini' }]);
  await model(
    'fallback',
    ['chat'],
    [
      { connection: 'mock-openai', model: 'fail-500', priority: 0 },
      { connection: 'mock-anthropic', model: 'claude-haiku-4-5', priority: 1 },
    ],
  );
  await model('claude-only', ['chat'], [{ connection: 'mock-anthropic', model: 'claude-haiku-4-5' }]);
  for (const [name, baseUrl] of [
    ['az-dated', `${w.oa.url}/openai`],
    ['az-v1', `${w.oa.url}/openai/v1`],
  ] as const) {
    await w.tg.must(admin('CreateProviderConnection'), {
      customerId: 'acme',
      projectId: 'default',
      name,
      provider: 'azure-openai',
      baseUrl,
      apiKey: 'azure-upstream-key',
      options: { deployments: { 'gpt-4o': 'my-deployment' } },
    });
    await model(`${name}-model`, ['chat'], [{ connection: name, model: 'gpt-4o' }]);
  }
  w.oa.script(SCRIPT);
}, 60_000);
afterAll(() => stopWorld(w));

/** A request carrying every field POST /v1/responses documents, built-in tools and reasoning items included. */
const EVERYTHING = {
  model: 'reasoner',
  instructions: 'You are terse.',
  input: [
    { role: 'developer', content: 'Be brief.' },
    {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'look at this' },
        { type: 'input_image', image_url: 'https://example.invalid/a.png', detail: 'low' },
        { type: 'input_file', file_id: 'file-abc' },
      ],
    },
    { type: 'reasoning', id: 'rs_prev', summary: [{ type: 'summary_text', text: 'thought' }], encrypted_content: 'gAAAAB-previous' },
    { type: 'web_search_call', id: 'ws_prev', status: 'completed', action: { type: 'search', query: 'weather' } },
    { type: 'function_call', id: 'fc_prev', call_id: 'call_1', name: 'lookup', arguments: '{"q":1}' },
    { type: 'function_call_output', call_id: 'call_1', output: '{"a":2}' },
  ],
  include: ['reasoning.encrypted_content', 'web_search_call.action.sources', 'message.output_text.logprobs'],
  reasoning: { effort: 'low', summary: 'auto' },
  text: { verbosity: 'low', format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: {} }, strict: true } },
  tools: [
    { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'number' } } }, strict: true },
    { type: 'web_search', search_context_size: 'low' },
    { type: 'file_search', vector_store_ids: ['vs_1'] },
    { type: 'code_interpreter', container: { type: 'auto' } },
    { type: 'mcp', server_label: 'docs', server_url: 'https://example.invalid/mcp', require_approval: 'never' },
  ],
  tool_choice: 'auto',
  metadata: { team: 'search' },
  service_tier: 'flex',
  truncation: 'auto',
  parallel_tool_calls: false,
  max_output_tokens: 500,
  max_tool_calls: 3,
  temperature: 0.3,
  top_p: 0.9,
  top_logprobs: 2,
  prompt_cache_key: 'pck-1',
  safety_identifier: 'user-1',
  user: 'u-1',
  stream_options: { include_obfuscation: false },
};

describe('same format, same meaning', () => {
  for (const stream of [false, true]) {
    test(`every documented field reaches OpenAI as sent (${stream ? 'stream' : 'JSON'}), apart from model and store`, async () => {
      const body = { ...EVERYTHING, stream };
      const { res, text } = await post(body);
      expect(res.status).toBe(200);
      const sent = last();
      expect(sent.path).toBe('/v1/responses');
      expect(sent.headers.authorization).toBe('Bearer sk-upstream-openai-secret');
      expect(sent.body).toEqual({ ...body, model: 'o4-mini', store: false });
      if (!stream) expect((JSON.parse(text) as { model: string }).model).toBe('reasoner');
      else expect(text).toContain('event: response.completed');
    });
  }

  test('an unknown (future) field is forwarded, and the upstream refusal reaches the client', async () => {
    const { res, text } = await post({ model: 'gpt-mini', input: 'hi', future_field: { x: 1 } });
    expect(last().body.future_field).toEqual({ x: 1 });
    expect(res.status).toBe(400);
    expect(text).toContain("Unknown parameter: 'future_field'.");
  });

  test('a built-in tool with no Responses upstream left is a clear 400, not a silent drop', async () => {
    const before = w.an.requests.length;
    const { res, text } = await post({ model: 'claude-only', input: 'hi', tools: [{ type: 'web_search' }] });
    expect(res.status).toBe(400);
    const err = (JSON.parse(text) as { error: { param: string; message: string } }).error;
    expect(err.param).toBe('tools.0.type');
    expect(err.message).toContain("'web_search'");
    expect(w.an.requests.length).toBe(before);
  });
});

describe('official openai SDK', () => {
  test('responses.create: gateway id, client model, reasoning kept with its encrypted content', async () => {
    const { data, response } = await sdk().responses.create({ model: 'reasoner', input: 'first question' }).withResponse();
    expect(data.id).toBe(`resp_${hex(response)}`);
    expect(data.model).toBe('reasoner');
    expect(data.output_text).toBe('openai says: first answer');
    expect((data as { store?: boolean }).store).toBe(true);
    const reasoning = data.output.find((o) => o.type === 'reasoning');
    expect(reasoning?.encrypted_content).toStartWith('gAAAAB-mock-');
    // Kept by the gateway: encrypted reasoning was asked for on the client's behalf.
    expect(last().body).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
    expect(data.usage).toMatchObject({ input_tokens: 40, output_tokens: 10, output_tokens_details: { reasoning_tokens: 4 } });
  });

  test('responses.stream: the upstream events with the gateway id and model', async () => {
    const stream = sdk().responses.stream({ model: 'reasoner', input: 'stream please' });
    const types: string[] = [];
    let deltas = '';
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') deltas += ev.delta;
    }
    const final = await stream.finalResponse();
    expect(deltas).toBe('openai says: first answer');
    expect(final.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(final.model).toBe('reasoner');
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    const got = await sdk().responses.retrieve(final.id);
    expect(got.output_text).toBe('openai says: first answer');
  });

  for (const stream of [false, true]) {
    test(`previous_response_id across turns sends the kept reasoning back (${stream ? 'stream' : 'JSON'} first turn)`, async () => {
      const client = sdk();
      const one = stream
        ? await client.responses.stream({ model: 'reasoner', input: 'first question' }).finalResponse()
        : await client.responses.create({ model: 'reasoner', input: 'first question' });
      const found = one.output.find((o) => o.type === 'reasoning');
      const rs = found?.type === 'reasoning' ? found : undefined;
      expect(rs?.encrypted_content).toStartWith('gAAAAB-mock-');
      const two = await client.responses.create({ model: 'reasoner', input: 'second question', previous_response_id: one.id });
      expect(two.output_text).toBe('openai says: second answer');
      expect((two as { previous_response_id?: string | null }).previous_response_id).toBe(one.id);
      const sent = last().body;
      expect(sent.previous_response_id).toBeUndefined();
      expect(sent.store).toBe(false);
      const input = sent.input as Record<string, unknown>[];
      expect(input.map((i) => i.type ?? 'message')).toEqual(['message', 'reasoning', 'message', 'message']);
      expect(input[1]).toMatchObject({ id: rs?.id, encrypted_content: rs?.encrypted_content });
      // An item_reference to the kept reasoning item expands to the whole item too.
      await client.responses.create({
        model: 'reasoner',
        input: [
          { type: 'item_reference', id: rs?.id ?? '' },
          { role: 'user', content: 'third' },
        ],
      });
      expect((last().body.input as Record<string, unknown>[])[0]).toMatchObject({
        type: 'reasoning',
        encrypted_content: rs?.encrypted_content,
      });
    });
  }
});

describe('AI SDK Responses provider on a reasoning model (store: true)', () => {
  test('a tool loop sends the reasoning item back by reference; OpenAI gets it with its encrypted content', async () => {
    w.oa.script((r) => {
      const messages = r.body.messages as { role: string; content: unknown }[];
      if (messages.at(-1)?.role === 'tool')
        return { text: `tool said: ${String(messages.at(-1)?.content)}`, usage: { input: 30, output: 5 } };
      return { toolCall: { id: 'call_w1', name: 'weather', arguments: '{"city":"Oslo"}' }, usage: { input: 20, output: 9 } };
    });
    const provider = createOpenAI({ baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey });
    const result = await generateText({
      model: provider.responses('reasoner'),
      prompt: 'weather in Oslo?',
      tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, sky: 'clear' }) }) },
      stopWhen: stepCountIs(3),
    }).finally(() => w.oa.script(SCRIPT));
    expect(result.steps.length).toBe(2);
    expect(result.text).toContain('clear');
    const input = last().body.input as Record<string, unknown>[];
    const reasoning = input.find((i) => i.type === 'reasoning');
    expect(reasoning?.encrypted_content).toStartWith('gAAAAB-mock-');
    expect(input.some((i) => i.type === 'item_reference')).toBe(false);
    expect(input.map((i) => i.type ?? 'message')).toContain('function_call_output');
    // What the AI SDK itself sent (the record keeps the client's body): the reasoning item by reference.
    await w.tg.gw.records.flush();
    const found = (await w.tg.must(admin('SearchRequestRecords'), { customerId: 'acme', pageSize: 1 })) as {
      records: { requestBody: unknown }[];
    };
    expect(JSON.stringify(found.records[0]?.requestBody)).toContain(`"item_reference"`);
  });
});

describe('fallback, Azure, records', () => {
  test('a failing OpenAI target falls back to Anthropic, translated', async () => {
    for (const stream of [false, true]) {
      const client = sdk();
      const text = stream
        ? (await client.responses.stream({ model: 'fallback', input: 'fall back please' }).finalResponse()).output_text
        : (await client.responses.create({ model: 'fallback', input: 'fall back please' })).output_text;
      expect(text).toBe('anthropic says: fall back please');
      expect(w.an.requests.at(-1)?.path).toBe('/v1/messages');
      expect(last()).toMatchObject({ path: '/v1/responses', body: { model: 'fail-500' } });
    }
  });

  test('azure-openai: dated path with the Responses api-version, and the v1 path; deployment as model; api-key', async () => {
    const dated = await sdk().responses.create({ model: 'az-dated-model', input: 'hi azure' });
    expect(dated.output_text).toBe('openai says: first answer');
    expect(last()).toMatchObject({
      path: '/openai/responses',
      search: '?api-version=2025-04-01-preview',
      body: { model: 'my-deployment', store: false },
    });
    expect(last().headers['api-key']).toBe('azure-upstream-key');
    expect(last().headers.authorization).toBeUndefined();
    const v1 = await sdk().responses.stream({ model: 'az-v1-model', input: 'hi azure' }).finalResponse();
    expect(v1.output_text).toBe('openai says: first answer');
    expect(last()).toMatchObject({ path: '/openai/v1/responses', search: '', body: { model: 'my-deployment', stream: true } });
  });

  test('a stream that fails upstream (response.failed) ends with the error event, as on the translated path', async () => {
    w.oa.script(() => ({ text: 'one two three four', midStreamError: true, chunkDelayMs: 30, usage: { input: 3, output: 4 } }));
    const res = await fetch(`${w.tg.url}/v1/responses`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ model: 'gpt-mini', input: 'hi', stream: true }),
    }).finally(() => w.oa.script(SCRIPT));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('event: response.created');
    expect(text).not.toContain('response.failed');
    expect(text).toMatch(/event: error\ndata: \{"type":"error".*upstream exploded/);
    const got = await fetch(`${w.tg.url}/v1/responses/resp_${hex(res)}`, { headers: headers() });
    expect(got.status).toBe(404);
  });

  test('native requests are recorded with usage, cost and provider', async () => {
    const ids: string[] = [];
    for (const stream of [false, true]) {
      const res = await fetch(`${w.tg.url}/v1/responses`, {
        method: 'POST',
        headers: headers(),
        body: JSON.stringify({ model: 'reasoner', input: 'record me', stream }),
      });
      await res.text();
      ids.push(res.headers.get('x-request-id') ?? '');
    }
    await w.tg.gw.records.flush();
    for (const requestId of ids) {
      const found = (await w.tg.must(admin('SearchRequestRecords'), { requestId })) as { records: Record<string, unknown>[] };
      expect(found.records).toHaveLength(1);
      // 40 × 1 + 10 × 2 per million = 6e-5 USD
      expect(found.records[0]).toMatchObject({
        provider: 'openai',
        httpStatus: 200,
        usage: { promptTokens: 40, completionTokens: 10, totalTokens: 50 },
        cost: '0.00006',
      });
    }
  });
});
