import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { RedisClient } from 'bun';
import { MemoryResponseCache, RedisResponseCache } from '../../src/data-plane/cache/store.ts';
import { startTestGateway, type TestGateway, admin } from '../support/gateway.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { chat, meteredWorld, redisUnavailable, startRedis, type TestRedis, type World } from '../governance/support.ts';

test('the in-process cache is an LRU bounded by bytes, entries expire', async () => {
  let now = 1_000;
  const c = new MemoryResponseCache(16 * 1024, () => now);
  const v = 'x'.repeat(400);
  for (let i = 0; i < 40; i++) c.set(`k${i}`, v, 60_000);
  expect(c.bytes).toBeLessThanOrEqual(16 * 1024);
  expect(c.size).toBeLessThan(40);
  // The oldest went first; a read moves an entry to the end.
  expect(await c.get('k0')).toBeUndefined();
  expect(await c.get('k39')).toBe(v);
  const survivor = `k${40 - c.size}`;
  expect(await c.get(survivor)).toBe(v);
  c.set('k40', v, 60_000);
  expect(await c.get(survivor)).toBe(v);
  // An entry over 1/16 of the bound is not kept.
  c.set('big', 'y'.repeat(1024), 60_000);
  expect(await c.get('big')).toBeUndefined();
  now += 60_001;
  expect(await c.get('k39')).toBeUndefined();
});

const skip = redisUnavailable();
describe.skipIf(skip !== undefined)(`the response cache on Redis${skip ? ` — skipped: ${skip}` : ''}`, () => {
  let redis: TestRedis;
  let tg: TestGateway;
  let oa: MockUpstream;
  let an: MockUpstream;
  let w: World;
  beforeAll(async () => {
    redis = await startRedis();
    oa = startMockUpstream('openai');
    an = startMockUpstream('anthropic');
    tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1', REDIS_URL: redis.url });
    w = await meteredWorld(tg, oa.url, an.url, 'cache-redis');
    await tg.must(admin('UpsertProjectSetting'), {
      customerId: w.customerId,
      projectId: w.projectId,
      settingName: 'response-cache',
      settingValue: '{"mode":"exact","ttlSeconds":120}',
    });
  }, 60_000);
  afterAll(async () => {
    await tg?.stop();
    oa?.stop();
    an?.stop();
    redis?.stop();
  });

  test('entries live in Redis under the project, with the TTL; another plane on the same Redis reads them', async () => {
    const q = `redis question ${Date.now()}`;
    const body = { model: 'metered', messages: [{ role: 'user', content: q }] };
    expect((await chat(tg.url, w.apiKey, body)).headers.get('x-gateway-cache')).toBe('miss');
    let hit: Response | undefined;
    // The write is fire-and-forget: give it a moment.
    for (let i = 0; i < 50; i++) {
      hit = await chat(tg.url, w.apiKey, body);
      if (hit.headers.get('x-gateway-cache') === 'hit') break;
      await Bun.sleep(20);
    }
    expect(hit?.headers.get('x-gateway-cache')).toBe('hit');
    expect(oa.requests.filter((r) => JSON.stringify(r.body).includes(q)).length).toBe(1);
    const client = new RedisClient(redis.url);
    const keys = (await client.send('KEYS', ['gw:rc:1:*'])) as string[];
    const project = tg.gw.snapshots.current?.keys.values().next().value?.project.id;
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.startsWith(`gw:rc:1:${project}:-:`))).toBe(true);
    const ttl = Number(await client.send('PTTL', [keys[0] as string]));
    expect(ttl).toBeGreaterThan(100_000);
    expect(ttl).toBeLessThanOrEqual(120_000);
    // Another data plane's store on the same Redis sees the same entry.
    const otherPlane = new RedisResponseCache(redis.url, 1024 * 1024);
    expect(await otherPlane.get(keys[0] as string)).toBe((await client.get(keys[0] as string)) ?? 'absent');
    otherPlane.close();
    client.close();
  }, 30_000);
});
