import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawn, type Subprocess } from 'bun';
import postgres from 'postgres';
import { generateKek } from '../../src/core/secrets.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { awayFromMinuteEdge, chat, freePort, meteredWorld, redisUnavailable, startRedis, type TestRedis, type World } from './support.ts';

/**
 * Two gateway PROCESSES (this one and a spawned `bun src/main.ts serve`) share one PostgreSQL
 * database and one real Redis: a rate limit and a budget hold exactly across them.
 */
const skip = redisUnavailable();
const pgBase = process.env.TEST_DATABASE_URL ?? 'postgres://gateway:gateway@127.0.0.1:5432/postgres';

describe.skipIf(skip !== undefined)(`shared limits across two gateway processes (Redis)${skip ? ` — skipped: ${skip}` : ''}`, () => {
  let redis: TestRedis;
  let a: TestGateway;
  let b: Subprocess;
  let bUrl = '';
  let oa: MockUpstream;
  let an: MockUpstream;
  let w: World;
  let dbName = '';

  beforeAll(async () => {
    redis = await startRedis();
    oa = startMockUpstream('openai');
    an = startMockUpstream('anthropic');
    dbName = `gw_gov_${Date.now().toString(36)}`;
    const pg = postgres(pgBase, { max: 1, onnotice: () => {} });
    await pg.unsafe(`create database ${dbName}`);
    await pg.end();
    const u = new URL(pgBase);
    u.pathname = `/${dbName}`;
    const kek = generateKek();
    const env = {
      DATABASE_URL: u.toString(),
      GATEWAY_KEK: kek,
      REDIS_URL: redis.url,
      WORKER_POLL_INTERVAL: '200ms',
      GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1',
    };
    a = await startTestGateway(env);
    w = await meteredWorld(a, oa.url, an.url);
    const port = await freePort();
    b = spawn(['bun', 'src/main.ts', 'serve'], {
      env: {
        ...process.env,
        ...env,
        GATEWAY_PORT: String(port),
        GATEWAY_ADMIN_PORT: String(await freePort()),
        GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
        GATEWAY_DEMO: '0',
        GATEWAY_LOG_LEVEL: 'error',
      },
      stdout: 'ignore',
      stderr: 'inherit',
    });
    bUrl = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200; i++) {
      const ok = await fetch(`${bUrl}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await Bun.sleep(100);
    }
  }, 60_000);

  afterAll(async () => {
    b?.kill();
    await b?.exited;
    await a?.gw.stop();
    const pg = postgres(pgBase, { max: 1, onnotice: () => {} });
    await pg.unsafe(`drop database if exists ${dbName} with (force)`);
    await pg.end();
    oa?.stop();
    an?.stop();
    redis?.stop();
  });

  /** Waits until the spawned gateway serves the current configuration revision. */
  const bCaughtUp = async (): Promise<void> => {
    const want = a.gw.snapshots.current?.revision ?? 0;
    for (let i = 0; i < 100; i++) {
      const r = (await fetch(`${bUrl}/readyz`).then(
        (x) => x.json(),
        () => ({}),
      )) as { revision?: number };
      if ((r.revision ?? 0) >= want) return;
      await Bun.sleep(100);
    }
    throw new Error('the second gateway did not catch up');
  };

  test('N requests alternating between the two processes: exactly requestsPerMinute admitted', async () => {
    const limit = 7;
    await a.must(admin('UpsertProjectSetting'), {
      customerId: w.customerId,
      projectId: w.projectId,
      settingName: 'rate-limit',
      settingValue: JSON.stringify({ requestsPerMinute: limit, per: 'project' }),
    });
    await bCaughtUp();
    await awayFromMinuteEdge();
    const urls = Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? a.url : bUrl));
    const res = await Promise.all(urls.map((u) => chat(u, w.apiKey, { model: 'metered', messages: [{ role: 'user', content: 'hi' }] })));
    const ok = res.filter((r) => r.status === 200).length;
    const limited = res.filter((r) => r.status === 429);
    expect(ok).toBe(limit);
    expect(limited.length).toBe(24 - limit);
    const body = (await limited[0]?.json()) as { error: { type: string; code: string } };
    expect(body.error.type).toBe('rate_limit_error');
    expect(body.error.code).toBe('rate_limit_exceeded');
    const retry = Number(limited[0]?.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    await a.must(admin('DeleteProjectSetting'), { customerId: w.customerId, projectId: w.projectId, settingName: 'rate-limit' });
  }, 30_000);

  test('a budget holds across both processes: concurrent requests never pass it, spentUsd is the recorded cost', async () => {
    const k = 6;
    // 7 output tokens at 1 USD per million = 7000 nano-USD per request, reserved exactly (max_tokens 7).
    await a.must(admin('UpsertBudget'), {
      customerId: w.customerId,
      projectId: w.projectId,
      name: 'shared',
      limitUsd: (k * 0.000007).toFixed(6),
      period: 'day',
    });
    await bCaughtUp();
    oa.script(() => ({ text: 'ok', usage: { input: 12, output: 7 }, delayMs: 150 }));
    const res = await Promise.all(
      Array.from({ length: 4 * k }, (_, i) =>
        chat(i % 2 ? bUrl : a.url, w.apiKey, { model: 'metered', max_tokens: 7, messages: [{ role: 'user', content: 'hi' }] }),
      ),
    );
    oa.script(undefined);
    const ok = res.filter((r) => r.status === 200).length;
    expect(ok).toBeLessThanOrEqual(k + 1);
    expect(ok).toBeGreaterThanOrEqual(k);
    const refused = res.find((r) => r.status === 429);
    expect(((await refused?.json()) as { error: { code: string } } | undefined)?.error.code).toBe('budget_exceeded');
    const got = (await a.must(admin('GetBudget'), { customerId: w.customerId, projectId: w.projectId, name: 'shared' })) as {
      budget: { spentUsd: string; resetsAt: string };
    };
    expect(got.budget.spentUsd).toBe((ok * 0.000007).toFixed(6).replace(/0+$/, ''));
    expect(Date.parse(got.budget.resetsAt)).toBeGreaterThan(Date.now());
  }, 30_000);
});
