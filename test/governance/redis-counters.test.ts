import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { RedisClient } from 'bun';
import type { CounterAdd, Refused } from '../../src/governance/counters.ts';
import { RedisCounters } from '../../src/governance/redis-counters.ts';
import { redisUnavailable, startOwnRedis, startRedis, type TestRedis } from './support.ts';

/**
 * RedisCounters coalesces the admissions and settlements of one event-loop turn into one script
 * call: exactness (contract §3.2) and each admission's atomicity must be those of lone calls.
 * Semantics run on TEST_REDIS_URL (else a redis-server of their own); the tests that count script
 * calls or kill the server need a redis-server of their own.
 */
const skip = redisUnavailable();
const noServer = Bun.which('redis-server') ? undefined : 'no redis-server binary on PATH';
const unique = (): string => `gw:test:${crypto.randomUUID()}`;
const admitted = (rs: (Refused | undefined)[]): number => rs.filter((r) => r === undefined).length;

describe.skipIf(skip !== undefined)(`RedisCounters, coalesced${skip ? ` — skipped: ${skip}` : ''}`, () => {
  let redis: TestRedis;
  let a: RedisCounters;
  let b: RedisCounters;
  beforeAll(async () => {
    redis = await startRedis();
    a = new RedisCounters(redis.url);
    b = new RedisCounters(redis.url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    redis?.stop();
  });

  test('200 concurrent admissions on one key with limit 50 admit exactly 50', async () => {
    const key = unique();
    const rs = await Promise.all(Array.from({ length: 200 }, () => a.tryAdd([{ key, add: 1, limit: 50, ttlMs: 60_000 }])));
    expect(admitted(rs)).toBe(50);
    expect(rs.filter((r) => r !== undefined).every((r) => r?.index === 0 && r.value === 50)).toBe(true);
    expect(await a.read([key])).toEqual([50]);
  });

  test('two instances (two data planes) sharing the key admit exactly 50 in total', async () => {
    const key = unique();
    const entry: CounterAdd[] = [{ key, add: 1, limit: 50, ttlMs: 60_000 }];
    const rs = await Promise.all(Array.from({ length: 300 }, (_, i) => (i % 2 ? a : b).tryAdd(entry)));
    expect(admitted(rs)).toBe(50);
    expect(await b.read([key])).toEqual([50]);
  });

  test('a refused admission adds nothing; the admissions around it in the same call stay all-or-nothing', async () => {
    const [k, x, y, z, empty] = [unique(), unique(), unique(), unique(), unique()];
    expect(await a.tryAdd([{ key: k, add: 8, limit: 10, ttlMs: 60_000 }])).toBeUndefined();
    const [first, second, third, fourth] = await Promise.all([
      a.tryAdd([
        { key: x, add: 1, limit: 100, ttlMs: 60_000 },
        { key: k, add: 1, limit: 10, ttlMs: 60_000 },
      ]),
      a.tryAdd([
        { key: y, add: 1, limit: 100, ttlMs: 60_000 },
        { key: k, add: 5, limit: 10, ttlMs: 60_000 },
      ]),
      a.tryAdd([
        { key: z, add: 1, limit: 100, ttlMs: 60_000 },
        { key: k, add: 1, limit: 10, ttlMs: 60_000 },
      ]),
      // Past its limit alone, admitted only because its counter is still empty.
      a.tryAdd([{ key: empty, add: 500, limit: 100, ttlMs: 60_000, orEmpty: true }]),
    ]);
    expect(first).toBeUndefined();
    // The second sees the first's addition (9), not the value before the call (8).
    expect(second).toEqual({ index: 1, value: 9 });
    expect(third).toBeUndefined();
    expect(fourth).toBeUndefined();
    expect(await a.read([k, x, y, z, empty])).toEqual([10, 1, 0, 1, 500]);
    expect(await a.tryAdd([{ key: empty, add: 1, limit: 100, ttlMs: 60_000, orEmpty: true }])).toEqual({ index: 0, value: 500 });
  });

  test('settlements coalesced per key give the same final counters; a missing counter stays missing', async () => {
    const [p, q, gone] = [unique(), unique(), unique()];
    expect(
      await a.tryAdd([
        { key: p, add: 100, limit: 1_000, ttlMs: 60_000 },
        { key: q, add: 100, limit: 1_000, ttlMs: 60_000 },
      ]),
    ).toBeUndefined();
    await Promise.all([
      a.adjust([
        { key: p, delta: -30 },
        { key: q, delta: 5 },
      ]),
      a.adjust([
        { key: p, delta: -20 },
        { key: gone, delta: 7 },
      ]),
      b.adjust([
        { key: p, delta: 3 },
        { key: q, delta: -105 },
      ]),
      a.adjust([{ key: q, delta: 0 }]),
    ]);
    expect(await a.read([p, q, gone])).toEqual([53, 0, 0]);
    expect(await a.read([gone])).toEqual([0]);
  });

  test('a settlement queued with admissions is applied first: its released reservation is admitted again', async () => {
    const key = unique();
    expect(await a.tryAdd([{ key, add: 10, limit: 10, ttlMs: 60_000 }])).toBeUndefined();
    const settled = a.adjust([{ key, delta: -4 }]);
    const r = await a.tryAdd([{ key, add: 4, limit: 10, ttlMs: 60_000 }]);
    await settled;
    expect(r).toBeUndefined();
    expect(await a.read([key])).toEqual([10]);
  });

  test('large nano-USD counters stay exact; admitted counters take their lifetime, a refused one none', async () => {
    const [big, timed, kept, refused] = [unique(), unique(), unique(), unique()];
    const add = 4_000_000_000_000_001;
    const rs = await Promise.all([
      a.tryAdd([{ key: big, add, limit: 9_000_000_000_000_000, ttlMs: 60_000 }]),
      a.tryAdd([{ key: big, add, limit: 9_000_000_000_000_000, ttlMs: 60_000 }]),
      a.tryAdd([{ key: big, add, limit: 9_000_000_000_000_000, ttlMs: 60_000 }]),
      a.tryAdd([{ key: timed, add: 1, limit: 10, ttlMs: 30_000 }]),
      a.tryAdd([{ key: kept, add: 1, limit: 10, ttlMs: 0 }]),
      a.tryAdd([{ key: refused, add: 11, limit: 10, ttlMs: 30_000 }]),
    ]);
    expect(rs).toEqual([undefined, undefined, { index: 0, value: 8_000_000_000_000_002 }, undefined, undefined, { index: 0, value: 0 }]);
    expect(await a.read([big])).toEqual([8_000_000_000_000_002]);
    const admin = new RedisClient(redis.url);
    try {
      const pttl = Number(await admin.send('PTTL', [timed]));
      expect(pttl).toBeGreaterThan(25_000);
      expect(pttl).toBeLessThanOrEqual(30_000);
      expect(Number(await admin.send('PTTL', [kept]))).toBe(-1);
      expect(Number(await admin.send('EXISTS', [refused]))).toBe(0);
    } finally {
      admin.close();
    }
  });

  test('close() sends what is still queued, then refuses', async () => {
    const c = new RedisCounters(redis.url);
    const [key, other] = [unique(), unique()];
    expect(await c.tryAdd([{ key: other, add: 10, limit: 100, ttlMs: 60_000 }])).toBeUndefined();
    const pendingAdd = c.tryAdd([{ key, add: 2, limit: 100, ttlMs: 60_000 }]);
    const pendingAdjust = c.adjust([{ key: other, delta: -4 }]);
    await c.close();
    expect(await pendingAdd).toBeUndefined();
    await pendingAdjust;
    expect(await a.read([key, other])).toEqual([2, 6]);
    await expect(c.tryAdd([{ key, add: 1, limit: 100, ttlMs: 60_000 }])).rejects.toThrow('closed');
  });
});

describe.skipIf(noServer !== undefined)(`RedisCounters on a redis-server of its own${noServer ? ` — skipped: ${noServer}` : ''}`, () => {
  const scriptCalls = async (url: string): Promise<number> => {
    const admin = new RedisClient(url);
    const info = String(await admin.send('INFO', ['commandstats']));
    admin.close();
    let n = 0;
    for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) n += Number(m[1]);
    return n;
  };

  test('one event-loop turn of admissions and settlements is one script call; NOSCRIPT reloads it', async () => {
    const redis = await startOwnRedis();
    const c = new RedisCounters(redis.url);
    try {
      const key = unique();
      expect(await c.tryAdd([{ key, add: 1, limit: 1_000, ttlMs: 60_000 }])).toBeUndefined();
      const before = await scriptCalls(redis.url);
      const rs = await Promise.all([
        ...Array.from({ length: 100 }, () => c.tryAdd([{ key, add: 1, limit: 50, ttlMs: 60_000 }])),
        c.adjust([{ key, delta: -1 }]).then(() => undefined),
      ]);
      expect(admitted(rs)).toBe(50 + 1);
      expect(await scriptCalls(redis.url)).toBe(before + 1);
      const flush = new RedisClient(redis.url);
      await flush.send('SCRIPT', ['FLUSH']);
      flush.close();
      expect(await c.tryAdd([{ key, add: 1, limit: 1_000, ttlMs: 60_000 }])).toBeUndefined();
      expect(await c.read([key])).toEqual([51]);
    } finally {
      await c.close();
      redis.stop();
    }
  });

  test('a Redis that goes away while a batch is in flight rejects every waiting admission', async () => {
    const redis = await startOwnRedis();
    const c = new RedisCounters(redis.url);
    try {
      const key = unique();
      expect(await c.tryAdd([{ key, add: 1, limit: 1_000, ttlMs: 60_000 }])).toBeUndefined();
      // Frozen: the batch is sent but not answered; then the server dies under it.
      redis.proc.kill('SIGSTOP');
      const waiting = Array.from({ length: 20 }, () =>
        c.tryAdd([{ key, add: 1, limit: 1_000, ttlMs: 60_000 }]).then(
          () => 'admitted',
          (e: unknown) => e,
        ),
      );
      await Bun.sleep(100);
      redis.proc.kill('SIGKILL');
      const outcomes = await Promise.all(waiting);
      expect(outcomes.every((o) => o instanceof Error)).toBe(true);
      expect(new Set(outcomes.map((o) => (o instanceof Error ? o.message : o))).size).toBe(1);
      await expect(c.tryAdd([{ key, add: 1, limit: 1_000, ttlMs: 60_000 }])).rejects.toBeInstanceOf(Error);
    } finally {
      await c.close();
      redis.stop();
    }
  }, 20_000);
});
