import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DataNode, startDataNode } from '../src/app-data.ts';
import { loadConfig } from '../src/config/env.ts';
import { chat, redisUnavailable, startRedis, type TestRedis } from './governance/support.ts';
import { admin } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Governance on a separate data plane (`serve --role data`): guardrails, rate limits and budgets
 * hold there as on the embedded one (contract §3.2) — a data plane is where clients call in the
 * chart's deployment. With REDIS_URL the management plane and the data plane share the counters:
 * a budget holds across both and GetBudget's `spentUsd` is what the data plane charged.
 */

const skip = redisUnavailable();
let w: World;
let redis: TestRedis;
let dir: string;
let node: DataNode;
const at = () => ({ customerId: 'acme', projectId: 'default' });

/** Waits until the data plane serves the project with `ready` true of its snapshot. */
const served = async (
  ready: (p: NonNullable<ReturnType<NonNullable<DataNode['snapshots']['current']>['projects']['get']>>) => boolean,
): Promise<void> => {
  for (let i = 0; i < 200; i++) {
    const p = node.snapshots.current?.projects.get('acme/default');
    if (p && ready(p)) return;
    await Bun.sleep(50);
  }
  throw new Error('the data plane did not catch up with the change in 10 s');
};

describe.skipIf(skip !== undefined)(`governance on a separate data plane${skip ? ` — skipped: ${skip}` : ''}`, () => {
  beforeAll(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'gw-dp-gov-'));
    w = await startWorld({ WORKER_POLL_INTERVAL: '100ms', REDIS_URL: redis.url });
    await w.tg.must(admin('CreateWorkspace'), { ...at(), workspaceId: 'edge-gov' });
    const account = await w.tg.must(admin('CreateServiceAccount'), { customerId: 'acme', workspaceId: 'edge-gov', apiUri: w.tg.adminUrl });
    const file = join(dir, 'sa.json');
    writeFileSync(file, JSON.stringify(account), { mode: 0o600 });
    node = await startDataNode(
      loadConfig(['serve', '--role', 'data', '--service-account', file], {
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: '0',
        GATEWAY_METRICS_PORT: '0',
        GATEWAY_DATA_DIR: join(dir, 'data'),
        GATEWAY_LOG_LEVEL: 'error',
        GATEWAY_SHUTDOWN_GRACE: '300ms',
        REDIS_URL: redis.url,
      }),
    );
  }, 60_000);

  afterAll(async () => {
    await node?.stop(500);
    await stopWorld(w);
    redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('an input guardrail blocks on the data plane, and the upstream never sees the request', async () => {
    await w.tg.must(admin('CreateGuardrail'), {
      ...at(),
      name: 'no-secrets',
      stage: 'input',
      kind: 'regex',
      pattern: 'TOPSECRET-\\d+',
      action: 'block',
    });
    await served((p) => p.guardrails.input.length > 0);
    const before = w.oa.requests.length;
    const r = await chat(node.inferenceUrl, w.p.apiKey, {
      model: 'gpt-mini',
      messages: [{ role: 'user', content: 'the code is TOPSECRET-42' }],
    });
    expect(r.status).toBe(400);
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('guardrail_blocked');
    expect(body.error.message).toContain("'no-secrets'");
    expect(body.error.message).not.toContain('TOPSECRET-42');
    expect(w.oa.requests.length).toBe(before);
    await w.tg.must(admin('DeleteGuardrail'), { ...at(), name: 'no-secrets' });
    await served((p) => p.guardrails.input.length === 0);
  });

  test('a rate limit holds on the data plane: requestsPerMinute admitted, the rest 429 with Retry-After', async () => {
    const limit = 3;
    await w.tg.must(admin('UpsertProjectSetting'), {
      ...at(),
      settingName: 'rate-limit',
      settingValue: JSON.stringify({ requestsPerMinute: limit, per: 'project' }),
    });
    await served((p) => p.rateLimit?.requestsPerMinute === limit);
    const res = await Promise.all(
      Array.from({ length: 8 }, () =>
        chat(node.inferenceUrl, w.p.apiKey, { model: 'gpt-mini', messages: [{ role: 'user', content: 'hi' }] }),
      ),
    );
    expect(res.filter((r) => r.status === 200).length).toBe(limit);
    const limited = res.find((r) => r.status === 429);
    expect(((await limited?.json()) as { error: { code: string } } | undefined)?.error.code).toBe('rate_limit_exceeded');
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThan(0);
    await w.tg.must(admin('DeleteProjectSetting'), { ...at(), settingName: 'rate-limit' });
    await served((p) => p.rateLimit === undefined);
  });

  test('a budget holds on the data plane, and the management plane reads what it charged', async () => {
    const k = 4;
    // 7 output tokens at 0.6 USD per million plus the input bound: one request's reservation, exactly.
    w.oa.script(() => ({ text: 'ok', usage: { input: 5, output: 7 }, delayMs: 100 }));
    try {
      const perRequest = (5 * 0.15 + 7 * 0.6) / 1e6;
      await w.tg.must(admin('UpsertBudget'), { ...at(), name: 'edge', limitUsd: (k * perRequest * 1.5).toFixed(9), period: 'day' });
      await served((p) => p.budgets.length === 1);
      const res: Response[] = [];
      for (let i = 0; i < 3 * k; i++)
        res.push(
          await chat(node.inferenceUrl, w.p.apiKey, { model: 'gpt-mini', max_tokens: 7, messages: [{ role: 'user', content: 'hi' }] }),
        );
      const ok = res.filter((r) => r.status === 200).length;
      expect(ok).toBeGreaterThanOrEqual(k);
      expect(ok).toBeLessThan(3 * k);
      const refused = res.find((r) => r.status === 429);
      expect(((await refused?.json()) as { error: { code: string } } | undefined)?.error.code).toBe('budget_exceeded');
      const got = (await w.tg.must(admin('GetBudget'), { ...at(), name: 'edge' })) as { budget: { spentUsd: string } };
      expect(Number(got.budget.spentUsd)).toBeCloseTo(ok * perRequest, 9);
    } finally {
      w.oa.script(undefined);
      await w.tg.must(admin('DeleteBudget'), { ...at(), name: 'edge' });
    }
  });
});
