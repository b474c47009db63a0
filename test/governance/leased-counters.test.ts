import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { RedisClient } from 'bun';
import type { CounterAdd, Refused } from '../../src/governance/counters.ts';
import { HEADROOM, LEASE_MS, LEASE_REQUESTS, LeasedCounters, MIN_LIMIT_LEASES } from '../../src/governance/leased-counters.ts';
import { RedisCounters } from '../../src/governance/redis-counters.ts';
import { redisUnavailable, startOwnRedis, type TestRedis } from './support.ts';

/**
 * Leases of shared counters (GATEWAY_LIMITS_LEASES): two data planes, each a LeasedCounters over
 * its own RedisCounters, on one real redis-server of the test's own (its command statistics are
 * the test's alone). What must hold: never more admitted than a limit across planes; every unit
 * taken and not used goes back; small limits and limits nearly reached are admitted one by one,
 * as without leases.
 */
const skip = Bun.which('redis-server') ? redisUnavailable() : 'no redis-server binary on PATH';
const unique = (): string => `gw:test:lease:${crypto.randomUUID()}`;
const admitted = (rs: (Refused | undefined)[]): number => rs.filter((r) => r === undefined).length;

describe.skipIf(skip !== undefined)(`LeasedCounters over Redis${skip ? ` — skipped: ${skip}` : ''}`, () => {
  let redis: TestRedis;
  let raw: RedisClient;
  const planes = (): [LeasedCounters, LeasedCounters] => [
    new LeasedCounters(new RedisCounters(redis.url)),
    new LeasedCounters(new RedisCounters(redis.url)),
  ];
  const value = async (key: string): Promise<number> => Number((await raw.get(key)) ?? 0);
  const scriptCalls = async (): Promise<number> =>
    Number(/cmdstat_evalsha:calls=(\d+)/.exec(String(await raw.send('INFO', ['commandstats'])))?.[1] ?? 0);

  beforeAll(async () => {
    redis = await startOwnRedis();
    raw = new RedisClient(redis.url);
    await raw.connect();
  });
  afterAll(() => {
    raw?.close();
    redis?.stop();
  });

  test('two planes over one limit admit it exactly, with a small fraction of the Redis calls, and give back what they did not use', async () => {
    const key = unique();
    const limit = 20_000;
    const [a, b] = planes();
    const entry: CounterAdd[] = [{ key, add: 1, limit, ttlMs: 60_000 }];
    const before = await scriptCalls();
    const rs: (Refused | undefined)[] = [];
    // Waves of concurrent admissions, alternating planes, 4,000 more than the limit.
    for (let wave = 0; wave < 120; wave++)
      rs.push(...(await Promise.all(Array.from({ length: 200 }, (_, i) => ((i + wave) % 2 ? a : b).tryAdd(entry)))));
    const calls = (await scriptCalls()) - before;
    const n = admitted(rs);
    expect(n).toBeLessThanOrEqual(limit);
    // What a plane may still hold near the end is at most one lease each (given back, not lost).
    expect(n).toBeGreaterThanOrEqual(limit - 2 * LEASE_REQUESTS);
    expect(calls).toBeLessThan(rs.length / 10);
    // Every refusal names the entry and a value at the limit (unused leased units count as used).
    expect(rs.filter((r) => r !== undefined).every((r) => r?.index === 0 && (r.value ?? 0) > limit - 2 * LEASE_REQUESTS)).toBe(true);
    await a.close();
    await b.close();
    expect(await value(key)).toBe(n);
  });

  test('a limit under MIN_LIMIT_LEASES leases is admitted one by one: exactly the limit, no lease held', async () => {
    const key = unique();
    const limit = LEASE_REQUESTS * MIN_LIMIT_LEASES - 1;
    const [a, b] = planes();
    const rs = await Promise.all(
      Array.from({ length: limit + 100 }, (_, i) => (i % 2 ? a : b).tryAdd([{ key, add: 1, limit, ttlMs: 60_000 }])),
    );
    expect(admitted(rs)).toBe(limit);
    expect(a.held.size + b.held.size).toBe(0);
    expect(await value(key)).toBe(limit);
    await a.close();
    await b.close();
  });

  test('near its limit no lease is taken: the last units are admitted one by one, exactly', async () => {
    const key = unique();
    const limit = 100_000;
    const [a, b] = planes();
    const inner = new RedisCounters(redis.url);
    // The counter stands where a lease would leave less than HEADROOM leases free.
    const start = limit - (HEADROOM + 1) * LEASE_REQUESTS + 1;
    expect(await inner.tryAdd([{ key, add: start, limit, ttlMs: 60_000 }])).toBeUndefined();
    const rs = await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).tryAdd([{ key, add: 1, limit, ttlMs: 60_000 }])));
    expect(admitted(rs)).toBe(limit - start);
    expect(a.held.size + b.held.size).toBe(0);
    expect(await value(key)).toBe(limit);
    await Promise.all([a.close(), b.close(), inner.close()]);
  });

  test('settlements of a leased key go to the lease; the counter ends at the real use', async () => {
    const key = unique();
    const [a] = planes();
    const entry: CounterAdd[] = [{ key, add: 10, limit: 1_000_000, ttlMs: 60_000, orEmpty: true }];
    expect(await a.tryAdd(entry)).toBeUndefined();
    // The first admission went to Redis and took a lease beside it.
    await Bun.sleep(20);
    expect(a.held.get(key)).toBe(10 * LEASE_REQUESTS);
    const calls = await scriptCalls();
    for (let i = 0; i < 20; i++) {
      expect(await a.tryAdd(entry)).toBeUndefined();
      // Real use 4 of the 10 reserved; one used 25 (over its reservation, taken from the lease).
      await a.adjust([{ key, delta: i === 7 ? 15 : -6 }]);
    }
    expect(await scriptCalls()).toBe(calls);
    await a.close();
    expect(await value(key)).toBe(10 + 19 * 4 + 25);
  });

  test('a lease ends after LEASE_MS: its unused units go back without close()', async () => {
    const key = unique();
    const [a] = planes();
    for (let i = 0; i < 3; i++) expect(await a.tryAdd([{ key, add: 2, limit: 1_000_000, ttlMs: 60_000 }])).toBeUndefined();
    // Taken beside the first admission (the second may have gone to Redis before the lease was known).
    expect(await value(key)).toBeGreaterThanOrEqual(2 + 2 * LEASE_REQUESTS);
    expect(a.held.size).toBe(1);
    await Bun.sleep(LEASE_MS + 600);
    expect(a.held.size).toBe(0);
    expect(await value(key)).toBe(6);
    await a.close();
  });

  test('two entries of one key that the lease holds one at a time but not together go to Redis, the lease untouched', async () => {
    const key = unique();
    const [a] = planes();
    expect(await a.tryAdd([{ key, add: 1, limit: 1_000_000, ttlMs: 60_000 }])).toBeUndefined();
    await Bun.sleep(20);
    const held = LEASE_REQUESTS;
    expect(a.held.get(key)).toBe(held);
    const half = Math.ceil((held + 1) / 2);
    const calls = await scriptCalls();
    expect(
      await a.tryAdd([
        { key, add: half, limit: 1_000_000, ttlMs: 60_000 },
        { key, add: half, limit: 1_000_000, ttlMs: 60_000 },
      ]),
    ).toBeUndefined();
    expect(await scriptCalls()).toBeGreaterThan(calls);
    await a.close();
    expect(await value(key)).toBe(1 + 2 * half);
  });

  test('a lowered limit (a configuration change) is not served from a lease taken under the old one', async () => {
    const key = unique();
    const [a] = planes();
    expect(await a.tryAdd([{ key, add: 1, limit: 1_000_000, ttlMs: 60_000 }])).toBeUndefined();
    await Bun.sleep(20);
    expect(a.held.get(key)).toBe(LEASE_REQUESTS);
    // The counter holds 1 + the lease: a limit of 10 refuses at once, whatever the lease still holds.
    expect(await a.tryAdd([{ key, add: 1, limit: 10, ttlMs: 60_000 }])).toEqual({ index: 0, value: 1 + LEASE_REQUESTS });
    await a.close();
    expect(await value(key)).toBe(1);
  });

  test('an admission the leases do not cover whole goes to Redis as one all-or-nothing group', async () => {
    const [leased, tight] = [unique(), unique()];
    const [a] = planes();
    // `tight` is small: never leased. A refusal on it adds nothing to `leased`, from a lease or not.
    expect(await a.tryAdd([{ key: leased, add: 1, limit: 1_000_000, ttlMs: 60_000 }])).toBeUndefined();
    await Bun.sleep(20);
    const pair = (): CounterAdd[] => [
      { key: leased, add: 1, limit: 1_000_000, ttlMs: 60_000 },
      { key: tight, add: 1, limit: 2, ttlMs: 60_000 },
    ];
    const rs = [await a.tryAdd(pair()), await a.tryAdd(pair()), await a.tryAdd(pair())];
    expect(rs.slice(0, 2)).toEqual([undefined, undefined]);
    expect(rs[2]).toEqual({ index: 1, value: 2 });
    await a.close();
    expect(await value(leased)).toBe(3);
    expect(await value(tight)).toBe(2);
  });
});
