import { afterAll, beforeAll, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { admin } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Chat Completions to OpenAI-compatible upstreams (issue 9, "same format in, same format out"):
 * those without field quirks (groq, deepseek, xai, …, and those whose only quirk is accepting
 * top_k) get the client's JSON with the model spliced in — provider-specific and future fields
 * included — and `max_completion_tokens` in the field they take (`max_tokens`). Upstreams that
 * rename or refuse fields (Mistral) are still translated.
 */

let world: World | undefined;
let openai: OpenAI;

const addModel = async (w: World, model: string, provider: string, upstream: string): Promise<void> => {
  const { tg } = w;
  const created = (await tg.must(admin('CreateModel'), {
    model,
    provider,
    mode: 'chat',
    capabilities: ['chat', 'tools'],
    contextWindow: 128000,
    maxOutputTokens: 8192,
    inputPricePerMillion: 0.1,
    outputPricePerMillion: 0.2,
  })) as { model: { id: string } };
  await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: created.model.id });
  await tg.must(admin('CreateProviderConnection'), {
    customerId: 'acme',
    projectId: 'default',
    name: `mock-${provider}`,
    provider,
    baseUrl: `${w.oa.url}/v1`,
    apiKey: `sk-${provider}-upstream-secret`,
  });
  await tg.must(admin('CreateRoute'), {
    customerId: 'acme',
    projectId: 'default',
    model,
    targets: [{ connection: `mock-${provider}`, model: upstream }],
  });
};

beforeAll(async () => {
  world = await startWorld();
  await addModel(world, 'groq-mini', 'groq', 'llama-3.3-70b-versatile');
  await addModel(world, 'together-mini', 'together', 'meta-llama/Llama-3.3-70B-Instruct-Turbo');
  await addModel(world, 'mistral-mini', 'mistral', 'mistral-small-latest');
  for (const [name, baseUrl] of [
    ['az-dated', `${world.oa.url}/openai`],
    ['az-v1', `${world.oa.url}/openai/v1`],
  ] as const) {
    const created = (await world.tg.must(admin('CreateModel'), {
      model: `${name}-chat`,
      provider: 'azure-openai',
      mode: 'chat',
      capabilities: ['chat', 'tools'],
      contextWindow: 128000,
      maxOutputTokens: 8192,
      inputPricePerMillion: 0.1,
      outputPricePerMillion: 0.2,
    })) as { model: { id: string } };
    await world.tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: created.model.id });
    await world.tg.must(admin('CreateProviderConnection'), {
      customerId: 'acme',
      projectId: 'default',
      name,
      provider: 'azure-openai',
      baseUrl,
      apiKey: 'azure-upstream-key',
      options: { deployments: { 'gpt-4o': 'my-deployment' } },
    });
    await world.tg.must(admin('CreateRoute'), {
      customerId: 'acme',
      projectId: 'default',
      model: `${name}-chat`,
      targets: [{ connection: name, model: 'gpt-4o' }],
    });
  }
  openai = new OpenAI({ baseURL: `${world.tg.url}/v1`, apiKey: world.p.apiKey, maxRetries: 0 });
}, 60_000);

afterAll(() => stopWorld(world));

const post = (body: object) =>
  fetch(`${world?.tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world?.p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const FULL = {
  messages: [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'hi' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_abc_123_long', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'call_abc_123_long', content: 'ok' },
  ],
  temperature: 0.5,
  top_p: 0.9,
  stop: ['END'],
  seed: 7,
  user: 'u-1',
  tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
  tool_choice: 'auto',
  parallel_tool_calls: false,
  response_format: { type: 'json_object' },
  reasoning_format: 'hidden',
  x_vendor_extension: { keep: ['me', 1, null] },
};

for (const [model, upstream] of [
  ['groq-mini', 'llama-3.3-70b-versatile'],
  ['together-mini', 'meta-llama/Llama-3.3-70B-Instruct-Turbo'],
] as const) {
  test(`fidelity, chat → ${model.split('-')[0]}: every field arrives as sent apart from model; max_completion_tokens goes as max_tokens`, async () => {
    world?.oa.script(() => ({ text: 'ok', usage: { input: 5, output: 1 } }));
    const res = await post({ model, ...FULL, top_k: 40, max_completion_tokens: 50 });
    expect(res.status).toBe(200);
    const { max_completion_tokens: _m, ...rest } = { ...FULL, top_k: 40, max_completion_tokens: 50 };
    expect(world?.oa.requests.at(-1)?.body).toEqual({ ...rest, model: upstream, max_tokens: 50 });
    const answer = (await res.json()) as { model: string; choices: { message: { content: string } }[] };
    expect(answer.model).toBe(model);
    expect(answer.choices[0]?.message.content).toBe('ok');
  });
}

test('a stream to a compatible upstream: the client JSON plus include_usage; the SDK gets text and usage', async () => {
  world?.oa.script(() => ({ text: 'streamed answer', usage: { input: 11, output: 3 } }));
  const s = await openai.chat.completions.create({
    model: 'groq-mini',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: number[] = [];
  for await (const ch of s) {
    expect(ch.model).toBe('groq-mini');
    text += ch.choices[0]?.delta.content ?? '';
    if (ch.usage) usage = [ch.usage.prompt_tokens, ch.usage.completion_tokens];
  }
  expect(text).toBe('streamed answer');
  expect(usage).toEqual([11, 3]);
  const sent = world?.oa.requests.at(-1)?.body as { stream_options?: unknown; model?: string };
  expect(sent.model).toBe('llama-3.3-70b-versatile');
  expect(sent.stream_options).toEqual({ include_usage: true });
});

test('Mistral (renames and refuses fields) is still translated: seed → random_seed, unknown fields left out, tool-call ids rewritten', async () => {
  world?.oa.script(() => ({ text: 'ok', usage: { input: 5, output: 1 } }));
  const res = await post({ model: 'mistral-mini', ...FULL, max_tokens: 20 });
  expect(res.status).toBe(200);
  const sent = world?.oa.requests.at(-1)?.body as Record<string, unknown>;
  expect(sent.model).toBe('mistral-small-latest');
  expect(sent.random_seed).toBe(7);
  expect(sent.seed).toBeUndefined();
  expect(sent.x_vendor_extension).toBeUndefined();
  expect(sent.reasoning_format).toBeUndefined();
  expect(JSON.stringify(sent.messages)).not.toContain('call_abc_123_long');
});

test('Azure OpenAI chat is passed through on the dated and v1 paths: the client JSON (max_completion_tokens kept), the deployment as model, api-key', async () => {
  world?.oa.script(() => ({ text: 'ok', usage: { input: 5, output: 1 } }));
  const res = await post({ model: 'az-dated-chat', ...FULL, max_completion_tokens: 30 });
  expect(res.status).toBe(200);
  const dated = world?.oa.requests.at(-1);
  expect(dated?.path).toBe('/openai/deployments/my-deployment/chat/completions');
  expect(dated?.search).toBe('?api-version=2024-10-21');
  expect(dated?.headers['api-key']).toBe('azure-upstream-key');
  expect(dated?.body).toEqual({ ...FULL, model: 'my-deployment', max_completion_tokens: 30 });
  const s = await openai.chat.completions.create({ model: 'az-v1-chat', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const ch of s) text += ch.choices[0]?.delta.content ?? '';
  expect(text).toBe('ok');
  const v1 = world?.oa.requests.at(-1);
  expect(v1?.path).toBe('/openai/v1/chat/completions');
  expect(v1?.body).toMatchObject({ model: 'my-deployment', stream: true, stream_options: { include_usage: true } });
});
