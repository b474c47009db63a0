import { afterAll, beforeAll, expect, test } from 'bun:test';
import Anthropic from '@anthropic-ai/sdk';
import { and, eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { requestRecords } from '../../src/store/schema/index.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { chat, meteredWorld, type World } from '../governance/support.ts';

/**
 * The response cache of contract §11 on the embedded plane (in-process LRU): off unless the project
 * setting enables it, scoped to the project (or the key), Cache-Control honoured, hits served in
 * the client's format (JSON and SSE, read with the official SDKs) with the original usage, cost 0
 * and the cost saved on the record.
 */
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let w: World;
let other: World;
const at = (x: World) => ({ customerId: x.customerId, projectId: x.projectId });
const setCache = (x: World, value: Record<string, unknown>) =>
  tg.must(admin('UpsertProjectSetting'), { ...at(x), settingName: 'response-cache', settingValue: JSON.stringify(value) });
let n = 0;
/** A prompt no earlier test used. */
const fresh = (): string => `question ${++n} at ${Date.now()}`;
const upstreamCalls = (m: MockUpstream, text: string): number => m.requests.filter((r) => JSON.stringify(r.body).includes(text)).length;

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
  w = await meteredWorld(tg, oa.url, an.url, 'cache-a');
  other = await meteredWorld(tg, oa.url, an.url, 'cache-b', { suffix: '-b' });
  await setCache(w, { mode: 'exact', ttlSeconds: 600 });
  await setCache(other, { mode: 'exact', ttlSeconds: 600 });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  oa?.stop();
  an?.stop();
});

test('the setting is checked: mode, ttlSeconds 1..604800, scope', async () => {
  for (const bad of [
    '{"mode":"semantic","ttlSeconds":60}',
    '{"mode":"exact","ttlSeconds":0}',
    '{"mode":"exact","ttlSeconds":604801}',
    '{"mode":"exact","ttlSeconds":60,"scope":"team"}',
    '{"mode":"exact","ttlSeconds":60,"x":1}',
  ]) {
    const r = await tg.call(admin('UpsertProjectSetting'), { ...at(w), settingName: 'response-cache', settingValue: bad });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('settingValue');
  }
});

test('N identical requests call the upstream once; hits carry the original usage, cost 0 and the cost saved', async () => {
  const q = fresh();
  const openai = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: w.apiKey, maxRetries: 0 });
  oa.script(() => ({ text: 'cached answer', usage: { input: 11, output: 5 } }));
  const first = await openai.chat.completions
    .create({ model: 'metered', messages: [{ role: 'user', content: q }], temperature: 0.7 })
    .withResponse();
  expect(first.response.headers.get('x-gateway-cache')).toBe('miss');
  const hits = await Promise.all(
    Array.from({ length: 5 }, (_, i) =>
      // `user`, `metadata` and `stream_options` do not change the answer: same entry.
      openai.chat.completions
        .create({ model: 'metered', messages: [{ role: 'user', content: q }], temperature: 0.7, user: `u${i}` })
        .withResponse(),
    ),
  );
  oa.script(undefined);
  expect(upstreamCalls(oa, q)).toBe(1);
  for (const h of hits) {
    expect(h.response.headers.get('x-gateway-cache')).toBe('hit');
    expect(h.data.choices[0]?.message.content).toBe('cached answer');
    expect(h.data.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 5 });
    expect(h.data.model).toBe('metered');
    expect(h.data.id).not.toBe(first.data.id);
  }
  await tg.gw.records.flush();
  const rows = await tg.gw.store.db
    .select({
      id: requestRecords.requestId,
      cache: requestRecords.cache,
      cost: requestRecords.costNanoUsd,
      saved: requestRecords.costSavedNanoUsd,
      out: requestRecords.outputTokens,
      attempts: requestRecords.attempts,
    })
    .from(requestRecords)
    .where(eq(requestRecords.customerId, w.customerId));
  const miss = rows.find((r) => r.id === first.response.headers.get('x-request-id'));
  expect(miss).toMatchObject({ cache: 'miss', cost: 5000, saved: null, attempts: 1 });
  for (const h of hits)
    expect(rows.find((r) => r.id === h.response.headers.get('x-request-id'))).toMatchObject({
      cache: 'hit',
      cost: 0,
      saved: 5000,
      out: 5,
      attempts: 0,
    });
  // A different temperature is another request.
  const warmer = await chat(tg.url, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: q }], temperature: 0.9 });
  expect(warmer.headers.get('x-gateway-cache')).toBe('miss');
}, 30_000);

test('a hit is streamed as SSE when asked (OpenAI and Anthropic SDKs), with the original usage', async () => {
  const q = fresh();
  const openai = new OpenAI({ baseURL: `${tg.url}/v1`, apiKey: w.apiKey, maxRetries: 0 });
  oa.script(() => ({ text: 'one two three', usage: { input: 9, output: 3 } }));
  // Cached from a JSON answer, replayed as a stream…
  await openai.chat.completions.create({ model: 'metered', messages: [{ role: 'user', content: q }] });
  const { data: stream, response } = await openai.chat.completions
    .create({ model: 'metered', messages: [{ role: 'user', content: q }], stream: true, stream_options: { include_usage: true } })
    .withResponse();
  expect(response.headers.get('x-gateway-cache')).toBe('hit');
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined | null;
  let finish: string | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    if (chunk.usage) usage = chunk.usage;
  }
  expect(text).toBe('one two three');
  expect(finish).toBe('stop');
  expect(usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 3 });
  oa.script(undefined);
  expect(upstreamCalls(oa, q)).toBe(1);

  // …and a streamed Messages answer from an Anthropic route is cached and replayed to the Anthropic SDK.
  const q2 = fresh();
  const anthropic = new Anthropic({ baseURL: tg.url, apiKey: w.apiKey, maxRetries: 0 });
  an.script(() => ({ text: 'claude says hi', usage: { input: 7, output: 4 } }));
  const live = await anthropic.messages
    .stream({ model: 'claude-mini', max_tokens: 50, messages: [{ role: 'user', content: q2 }] })
    .finalMessage();
  const replayed = anthropic.messages.stream({ model: 'claude-mini', max_tokens: 50, messages: [{ role: 'user', content: q2 }] });
  const msg = await replayed.finalMessage();
  an.script(undefined);
  expect(upstreamCalls(an, q2)).toBe(1);
  expect(msg.content).toEqual(live.content);
  expect(msg.usage).toMatchObject({ input_tokens: 7, output_tokens: 4 });
  expect(msg.stop_reason).toBe('end_turn');
  const json = await anthropic.messages
    .create({ model: 'claude-mini', max_tokens: 50, messages: [{ role: 'user', content: q2 }] })
    .withResponse();
  expect(json.response.headers.get('x-gateway-cache')).toBe('hit');
  expect(json.data.content).toEqual(live.content);
}, 30_000);

test('another project never gets the answer; scope api_key keeps keys apart, scope project shares', async () => {
  const q = fresh();
  oa.script(({ body }) => ({ text: `for ${String(body.model)} ${Date.now()}`, usage: { input: 1, output: 1 } }));
  const a = await chat(tg.url, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: q }] });
  expect(a.headers.get('x-gateway-cache')).toBe('miss');
  // The same body in another customer's project (its own model name routes to the same upstream model).
  const b = await chat(tg.url, other.apiKey, { model: 'metered-b', messages: [{ role: 'user', content: q }] });
  expect(b.headers.get('x-gateway-cache')).toBe('miss');
  expect(upstreamCalls(oa, q)).toBe(2);
  // Scope project: a second key of the same project shares the entry.
  const key2 = (await tg.must(apikeyOp('CreateApiKey'), { name: 'second', userId: 'u2', enterpriseContext: at(w) })) as { apiKey: string };
  const shared = await chat(tg.url, key2.apiKey, { model: 'metered', messages: [{ role: 'user', content: q }] });
  expect(shared.headers.get('x-gateway-cache')).toBe('hit');
  // Scope api_key: the same request under another key is a miss.
  await setCache(w, { mode: 'exact', ttlSeconds: 600, scope: 'api_key' });
  const q2 = fresh();
  expect(
    (await chat(tg.url, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: q2 }] })).headers.get('x-gateway-cache'),
  ).toBe('miss');
  expect(
    (await chat(tg.url, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: q2 }] })).headers.get('x-gateway-cache'),
  ).toBe('hit');
  const apart = await chat(tg.url, key2.apiKey, { model: 'metered', messages: [{ role: 'user', content: q2 }] });
  expect(apart.headers.get('x-gateway-cache')).toBe('miss');
  expect(upstreamCalls(oa, q2)).toBe(2);
  oa.script(undefined);
  await setCache(w, { mode: 'exact', ttlSeconds: 600 });
}, 30_000);

test('Cache-Control: no-cache refreshes the entry, no-store neither reads nor writes', async () => {
  const q = fresh();
  const body = { model: 'metered', messages: [{ role: 'user', content: q }] };
  const send = (cc?: string) =>
    fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json', ...(cc ? { 'cache-control': cc } : {}) },
      body: JSON.stringify(body),
    });
  const textOf = async (r: Response) => ((await r.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
  oa.script(() => ({ text: 'old', usage: { input: 1, output: 1 } }));
  expect(await textOf(await send())).toBe('old');
  oa.script(() => ({ text: 'new', usage: { input: 1, output: 1 } }));
  const refreshed = await send('no-cache');
  expect(refreshed.headers.get('x-gateway-cache')).toBe('miss');
  expect(await textOf(refreshed)).toBe('new');
  const after = await send();
  expect(after.headers.get('x-gateway-cache')).toBe('hit');
  expect(await textOf(after)).toBe('new');
  oa.script(() => ({ text: 'newest', usage: { input: 1, output: 1 } }));
  const bypass = await send('no-store');
  expect(bypass.headers.get('x-gateway-cache')).toBe('bypass');
  expect(await textOf(bypass)).toBe('newest');
  expect(await textOf(await send())).toBe('new');
  expect(upstreamCalls(oa, q)).toBe(3);
  // no-store writes nothing either.
  const q2 = fresh();
  const body2 = { model: 'metered', messages: [{ role: 'user', content: q2 }] };
  const r1 = await fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json', 'cache-control': 'no-store' },
    body: JSON.stringify(body2),
  });
  expect(r1.headers.get('x-gateway-cache')).toBe('bypass');
  expect((await chat(tg.url, w.apiKey, body2)).headers.get('x-gateway-cache')).toBe('miss');
  oa.script(undefined);
  await tg.gw.records.flush();
  const rows = await tg.gw.store.db
    .select({ cache: requestRecords.cache })
    .from(requestRecords)
    .where(and(eq(requestRecords.customerId, w.customerId), eq(requestRecords.requestId, bypass.headers.get('x-request-id') ?? '')));
  expect(rows).toEqual([{ cache: 'bypass' }]);
}, 30_000);

test("no-cache of another key: with scope project it refreshes the entry the project's keys share, with scope api_key it leaves the first key's entry alone", async () => {
  const key2 = (
    (await tg.must(apikeyOp('CreateApiKey'), { name: 'refresher', userId: 'u3', enterpriseContext: at(w) })) as { apiKey: string }
  ).apiKey;
  const ask = async (key: string, q: string, cc?: string): Promise<{ cache: string | null; text: string | undefined }> => {
    const r = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(cc ? { 'cache-control': cc } : {}) },
      body: JSON.stringify({ model: 'metered', messages: [{ role: 'user', content: q }] }),
    });
    const body = (await r.json()) as { choices: { message: { content: string } }[] };
    return { cache: r.headers.get('x-gateway-cache'), text: body.choices[0]?.message.content };
  };
  const answer = (text: string) => oa.script(() => ({ text, usage: { input: 1, output: 1 } }));
  try {
    // Scope project (the default): key B's no-cache replaces the entry; key A's next request is a hit on B's answer.
    const q = fresh();
    answer('from A');
    expect(await ask(w.apiKey, q)).toEqual({ cache: 'miss', text: 'from A' });
    expect(await ask(w.apiKey, q)).toEqual({ cache: 'hit', text: 'from A' });
    answer('from B');
    expect(await ask(key2, q, 'no-cache')).toEqual({ cache: 'miss', text: 'from B' });
    expect(await ask(w.apiKey, q)).toEqual({ cache: 'hit', text: 'from B' });
    expect(upstreamCalls(oa, q)).toBe(2);

    // Scope api_key: key B's no-cache writes B's own entry; key A still hits its own answer.
    await setCache(w, { mode: 'exact', ttlSeconds: 600, scope: 'api_key' });
    const q2 = fresh();
    answer('from A');
    expect(await ask(w.apiKey, q2)).toEqual({ cache: 'miss', text: 'from A' });
    answer('from B');
    expect(await ask(key2, q2, 'no-cache')).toEqual({ cache: 'miss', text: 'from B' });
    expect(await ask(w.apiKey, q2)).toEqual({ cache: 'hit', text: 'from A' });
    expect(await ask(key2, q2)).toEqual({ cache: 'hit', text: 'from B' });
    expect(upstreamCalls(oa, q2)).toBe(2);
  } finally {
    oa.script(undefined);
    await setCache(w, { mode: 'exact', ttlSeconds: 600 });
  }
}, 30_000);

test('a project without the setting is served as before: no cache, no header, no cache column', async () => {
  await tg.must(admin('DeleteProjectSetting'), { ...at(other), settingName: 'response-cache' });
  const q = fresh();
  const r1 = await chat(tg.url, other.apiKey, { model: 'metered-b', messages: [{ role: 'user', content: q }] });
  const r2 = await chat(tg.url, other.apiKey, { model: 'metered-b', messages: [{ role: 'user', content: q }] });
  expect(r1.headers.get('x-gateway-cache')).toBeNull();
  expect(r2.headers.get('x-gateway-cache')).toBeNull();
  expect(upstreamCalls(oa, q)).toBe(2);
  await tg.gw.records.flush();
  const rows = await tg.gw.store.db
    .select({ cache: requestRecords.cache })
    .from(requestRecords)
    .where(eq(requestRecords.requestId, r2.headers.get('x-request-id') ?? ''));
  expect(rows).toEqual([{ cache: null }]);
}, 30_000);
