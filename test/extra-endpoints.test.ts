import { afterAll, beforeAll, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { admin, type TestGateway } from './support/gateway.ts';
import type { MockUpstream } from './support/mock-upstreams.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * /v1/embeddings, /v1/completions, /v1/images/generations, /v1/audio/speech, /v1/rerank: routed by
 * model like chat, OpenAI wire end to end (official SDK), model substituted upstream and echoed back.
 */

let tg: TestGateway;
let oa: MockUpstream;
let p: Provisioned;
let client: OpenAI;

let world: World | undefined;
beforeAll(async () => {
  world = await startWorld();
  ({ tg, oa, p } = world);
  client = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: p.apiKey, maxRetries: 0 });
  await tg.must(admin('CreateProviderConnection'), { customerId: 'acme', name: 'echo', provider: 'echo' });
  const m = (await tg.must(admin('CreateModel'), {
    model: 'echo-embed',
    provider: 'echo',
    mode: 'embedding',
    capabilities: ['embedding'],
    inputPricePerMillion: 1,
  })) as {
    model: { id: string };
  };
  await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
  await tg.must(admin('CreateRoute'), {
    customerId: 'acme',
    model: 'echo-embed',
    targets: [{ connection: 'echo', model: 'echo-embedder' }],
  });
}, 60_000);

afterAll(() => stopWorld(world));

test('embeddings through an OpenAI upstream: path, auth, model substitution, usage', async () => {
  const res = await client.embeddings.create({ model: 'gpt-mini', input: ['alpha', 'beta'] });
  expect(res.data).toHaveLength(2);
  expect(res.model).toBe('gpt-mini');
  expect(res.usage.prompt_tokens).toBe(8);
  const sent = oa.requests.at(-1);
  expect(sent?.path).toBe('/v1/embeddings');
  expect(sent?.headers.authorization).toBe('Bearer sk-upstream-openai-secret');
  expect(sent?.body).toMatchObject({ model: 'gpt-4o-mini', input: ['alpha', 'beta'] });
});

test('embeddings on the built-in echo provider are deterministic unit vectors', async () => {
  const a = await client.embeddings.create({ model: 'echo-embed', input: 'hello world' });
  const b = await client.embeddings.create({ model: 'echo-embed', input: 'hello world' });
  const v = a.data[0]?.embedding ?? [];
  expect(v).toEqual(b.data[0]?.embedding ?? []);
  expect(Math.abs(Math.hypot(...v) - 1)).toBeLessThan(1e-3);
  expect(a.usage.prompt_tokens).toBe(2);
});

test('legacy completions, images and speech are forwarded; speech bytes pass through untouched', async () => {
  const c = await client.completions.create({ model: 'gpt-mini', prompt: 'hello' });
  expect(c.choices[0]?.text).toBe(' world');
  expect(oa.requests.at(-1)?.path).toBe('/v1/completions');
  const img = await client.images.generate({ model: 'gpt-mini', prompt: 'a cat' });
  expect(img.data?.[0]?.url).toBe('https://example.invalid/cat.png');
  expect(oa.requests.at(-1)?.path).toBe('/v1/images/generations');
  const speech = await client.audio.speech.create({ model: 'gpt-mini', voice: 'alloy', input: 'hi' });
  expect(speech.headers.get('content-type')).toBe('audio/mpeg');
  expect([...new Uint8Array(await speech.arrayBuffer())]).toEqual([0x49, 0x44, 0x33, 1, 2, 3]);
  expect(speech.headers.get('x-request-id')).toBeTruthy();
});

test('rerank is routed like the rest', async () => {
  const res = await fetch(`${tg.url}/v1/rerank`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-mini', query: 'q', documents: ['a', 'b'] }),
  });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { results: unknown[] }).results).toHaveLength(2);
});

test('a provider without the endpoint → 400 unsupported_endpoint; errors and auth as for chat', async () => {
  const res = await fetch(`${tg.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-mini', input: 'x' }),
  });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unsupported_endpoint');
  const noKey = await fetch(`${tg.url}/v1/embeddings`, { method: 'POST', body: '{}' });
  expect(noKey.status).toBe(401);
  const noModel = await fetch(`${tg.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input: 'x' }),
  });
  expect(noModel.status).toBe(400);
  expect(((await noModel.json()) as { error: { param: string } }).error.param).toBe('model');
});

test('extra-endpoint requests are recorded with usage and cost', async () => {
  const res = await fetch(`${tg.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-request-id': 'emb-rec' },
    body: JSON.stringify({ model: 'echo-embed', input: 'one two three' }),
  });
  expect(res.status).toBe(200);
  const found = (await tg.must(admin('SearchRequestRecords'), { clientRequestId: 'emb-rec' })) as {
    records: { endpoint: string; usage: { promptTokens: number }; cost: string }[];
  };
  expect(found.records[0]).toMatchObject({ endpoint: '/v1/embeddings', usage: { promptTokens: 3 }, cost: '0.000003' });
});
