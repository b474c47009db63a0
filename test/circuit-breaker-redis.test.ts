import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataNode } from '../src/app-data.ts';
import { startSeparatePlane } from './support/data-node.ts';
import { admin } from './support/gateway.ts';
import type { MockUpstream } from './support/mock-upstreams.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';
import { redisUnavailable, startRedis, type TestRedis } from './governance/support.ts';

/**
 * Two data planes (the embedded one and a separate `--role data` node) share their circuit
 * breakers through Redis (contract §14): a target one of them opened gets no request from the
 * other, and GetTargetHealth on the management plane shows the shared state.
 */
const skip = redisUnavailable();

describe.skipIf(skip !== undefined)(`breakers shared through Redis${skip ? ` — skipped: ${skip}` : ''}`, () => {
  let redis: TestRedis;
  let w: World | undefined;
  let oa: MockUpstream;
  let node: DataNode | undefined;
  let dir = '';

  beforeAll(async () => {
    redis = await startRedis();
    w = await startWorld({ REDIS_URL: redis.url });
    oa = w.oa;
    oa.script((r) =>
      r.body.model === 'shared-down'
        ? { status: 500, errorBody: JSON.stringify({ error: { message: 'boom', type: 'server_error', param: null, code: null } }) }
        : { text: `served by ${String(r.body.model)}`, usage: { input: 2, output: 2 } },
    );
    await w.tg.must(admin('UpsertProjectSetting'), {
      customerId: 'acme',
      projectId: 'default',
      settingName: 'circuit-breaker',
      settingValue: '{"failures": 2, "openSeconds": 60}',
    });
    const m = (await w.tg.must(admin('CreateModel'), {
      model: 'r-shared',
      provider: 'openai',
      inputPricePerMillion: 1,
      outputPricePerMillion: 1,
    })) as {
      model: { id: string };
    };
    await w.tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
    await w.tg.must(admin('CreateRoute'), {
      customerId: 'acme',
      model: 'r-shared',
      targets: [
        { connection: 'mock-openai', model: 'shared-down', priority: 0 },
        { connection: 'mock-openai', model: 'shared-up', priority: 1 },
      ],
    });
    await w.tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge', projectId: 'default' });
    dir = mkdtempSync(join(tmpdir(), 'gw-breaker-'));
    mkdirSync(join(dir, 'n'), { recursive: true });
    node = await startSeparatePlane(
      w.tg,
      join(dir, 'n'),
      'acme',
      'edge',
      '100ms',
      {},
      { REDIS_URL: redis.url, GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' },
    );
  }, 60_000);

  afterAll(async () => {
    await node?.stop(0);
    await stopWorld(w);
    redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const chat = async (base: string) => {
    const r = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w?.p.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'r-shared', messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { status: r.status, text: await r.text() };
  };
  const sent = () => oa.requests.filter((r) => r.body.model === 'shared-down').length;

  // Known defect, issue 44 (open): since the stop's merges the separate plane still sends one request to the
  // target the embedded plane opened (3 expected, 4 sent) before it adopts the shared state; skipped, not hidden.
  test('a target the embedded data plane opened gets no request from the separate one', async () => {
    if (!w || !node) throw new Error('not started');
    let served = false;
    for (let i = 0; i < 100 && !served; i++) {
      served = (await chat(node.inferenceUrl)).status === 200;
      if (!served) await Bun.sleep(100);
    }
    expect(served).toBe(true);
    const before = sent();
    for (let i = 0; i < 2; i++) expect((await chat(w.tg.url)).text).toContain('served by shared-up');
    expect(sent()).toBe(before + 2);
    // One sharing tick (250 ms) later the separate plane holds the same breaker open (waiting 6 ticks: loaded CI machines).
    await Bun.sleep(1500);
    for (let i = 0; i < 4; i++) expect((await chat(node.inferenceUrl)).text).toContain('served by shared-up');
    expect(sent()).toBe(before + 2);
    const h = (await w.tg.must(admin('GetTargetHealth'), { customerId: 'acme', projectId: 'default' })) as {
      targets: { upstreamModel: string; state: string; reason?: string; failures: number }[];
    };
    expect(h.targets.find((t) => t.upstreamModel === 'shared-down')).toMatchObject({ state: 'OPEN', reason: 'failures', failures: 2 });
    expect(h.targets.find((t) => t.upstreamModel === 'shared-up')?.state).toBe('CLOSED');
  });
});
