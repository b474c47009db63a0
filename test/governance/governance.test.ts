import { afterAll, beforeAll, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { requestRecords } from '../../src/store/schema/index.ts';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { awayFromMinuteEdge, chat, meteredWorld, type World } from './support.ts';

/** Rate limits, budgets and global fallback on one data plane (in-process counters). */
let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let w: World;
const at = () => ({ customerId: w.customerId, projectId: w.projectId });

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
  w = await meteredWorld(tg, oa.url, an.url);
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  oa?.stop();
  an?.stop();
});

test('budget overshoot: 4k concurrent requests against room for k — at most k+1 admitted, spentUsd equals the recorded costs', async () => {
  const k = 10;
  await tg.must(admin('UpsertBudget'), { ...at(), name: 'daily', limitUsd: '0.00007', period: 'day' });
  oa.script(() => ({ text: 'ok', usage: { input: 12, output: 7 }, delayMs: 100 }));
  const res = await Promise.all(
    Array.from({ length: 4 * k }, () =>
      chat(tg.url, w.apiKey, { model: 'metered', max_tokens: 7, messages: [{ role: 'user', content: 'hi' }] }),
    ),
  );
  oa.script(undefined);
  const admitted = res.filter((r) => r.status === 200).length;
  expect(admitted).toBeLessThanOrEqual(k + 1);
  expect(admitted).toBeGreaterThanOrEqual(k);
  const refused = res.filter((r) => r.status === 429);
  const body = (await refused[0]?.json()) as { error: { type: string; code: string; message: string } };
  expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'budget_exceeded' });
  expect(body.error.message).toContain("'daily'");
  expect(Number(refused[0]?.headers.get('retry-after'))).toBeGreaterThan(0);
  await tg.gw.records.flush();
  const rows = await tg.gw.store.db
    .select({ cost: requestRecords.costNanoUsd, status: requestRecords.httpStatus })
    .from(requestRecords)
    .where(eq(requestRecords.customerId, w.customerId));
  const recorded = rows.reduce((s, r) => s + r.cost, 0);
  expect(recorded).toBe(admitted * 7000);
  const got = (await tg.must(admin('GetBudget'), { ...at(), name: 'daily' })) as {
    budget: { spentUsd: string; limitUsd: string; period: string; id: string };
  };
  expect(got.budget.spentUsd).toBe(String(recorded / 1e9));
  expect(got.budget.limitUsd).toBe('0.00007');
  const list = (await tg.must(admin('ListBudgets'), at())) as { budgets: { name: string }[] };
  expect(list.budgets.map((b) => b.name)).toEqual(['daily']);
  // A total budget has no Retry-After.
  await tg.must(admin('UpsertBudget'), { ...at(), name: 'daily', limitUsd: '0', period: 'total' });
  const r = await chat(tg.url, w.apiKey, { model: 'metered', max_tokens: 7, messages: [{ role: 'user', content: 'hi' }] });
  expect(r.status).toBe(429);
  expect(r.headers.get('retry-after')).toBeNull();
  await tg.must(admin('DeleteBudget'), { id: got.budget.id });
  expect((await chat(tg.url, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
}, 30_000);

test('tokens per minute: reserved by estimate, corrected to the upstream usage at settlement', async () => {
  await awayFromMinuteEdge();
  // Each answer uses 19 tokens (12 + 7); the body's estimate is about 16.
  await tg.must(admin('UpsertProjectSetting'), { ...at(), settingName: 'rate-limit', settingValue: '{"tokensPerMinute":40}' });
  const send = () => chat(tg.url, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: 'hi' }] });
  expect((await send()).status).toBe(200);
  expect((await send()).status).toBe(200);
  const third = await send();
  expect(third.status).toBe(429);
  const body = (await third.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe('rate_limit_exceeded');
  expect(body.error.message).toContain('tokens per minute');
  const retry = Number(third.headers.get('retry-after'));
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(60);
  await tg.must(admin('DeleteProjectSetting'), { ...at(), settingName: 'rate-limit' });
}, 30_000);

test('requests per minute per API key: the limit, then 429 with Retry-After', async () => {
  await awayFromMinuteEdge();
  await tg.must(admin('UpsertProjectSetting'), { ...at(), settingName: 'rate-limit', settingValue: '{"requestsPerMinute":3}' });
  const res = await Promise.all(
    Array.from({ length: 8 }, () => chat(tg.url, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: 'hi' }] })),
  );
  expect(res.filter((r) => r.status === 200)).toHaveLength(3);
  expect(res.filter((r) => r.status === 429 && r.headers.get('retry-after') !== null)).toHaveLength(5);
  await tg.must(admin('DeleteProjectSetting'), { ...at(), settingName: 'rate-limit' });
}, 30_000);

test('global fallback: tried in order after every target of the route failed retryably', async () => {
  await tg.must(admin('UpsertProjectSetting'), {
    ...at(),
    settingName: 'global-fallback',
    settingValue: JSON.stringify({ targets: [{ connection: 'mock-anthropic', model: 'claude-fallback' }] }),
  });
  oa.script(() => ({ status: 503, errorBody: '{"error":{"message":"down","type":"server_error"}}' }));
  const before = an.requests.length;
  const res = await chat(tg.url, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: 'hello' }] });
  oa.script(undefined);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { choices: { message: { content: string } }[] };
  expect(body.choices[0]?.message.content).toContain('anthropic says');
  expect(an.requests.length).toBe(before + 1);
  expect(an.requests.at(-1)?.body.model).toBe('claude-fallback');
  // A non-retryable failure (400) does not fall back.
  oa.script(() => ({ status: 400, errorBody: '{"error":{"message":"bad","type":"invalid_request_error"}}' }));
  const bad = await chat(tg.url, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: 'hello' }] });
  oa.script(undefined);
  expect(bad.status).toBe(400);
  expect(an.requests.length).toBe(before + 1);
  await tg.must(admin('DeleteProjectSetting'), { ...at(), settingName: 'global-fallback' });
}, 30_000);

test('Redis unreachable: closed (default) refuses governed requests with 503, logged once; ungoverned projects are served', async () => {
  const g = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1', REDIS_URL: 'redis://127.0.0.1:1' });
  try {
    const x = await meteredWorld(g, oa.url, an.url, 'redisdown');
    expect((await chat(g.url, x.apiKey, { model: 'metered', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    await g.must(admin('UpsertProjectSetting'), {
      customerId: x.customerId,
      projectId: x.projectId,
      settingName: 'rate-limit',
      settingValue: '{"requestsPerMinute":100}',
    });
    const r = await chat(g.url, x.apiKey, { model: 'metered', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.status).toBe(503);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('limits_unavailable');
  } finally {
    await g.stop();
  }
}, 60_000);
