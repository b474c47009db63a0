import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DataNode, startDataNode } from '../src/app-data.ts';
import { loadConfig } from '../src/config/env.ts';
import { currentRevision } from '../src/propagation/load.ts';
import { ADMIN_TOKEN, admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * The propagation worker (issue 13, item 2): a management write returns at commit; with
 * notifications off, polling alone converges; the drift sweep applies what polling missed and every
 * Nth sweep is a full rebuild; a failed worker is replaced. Runs on PGlite (the worker asks the main
 * thread) and on PostgreSQL (the worker's own connection) with TEST_DATABASE_URL.
 */

let tg: TestGateway | undefined;
let node: DataNode | undefined;
let dir: string | undefined;
afterEach(async () => {
  await node?.stop(1000);
  node = undefined;
  await tg?.stop();
  tg = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A write over HTTP that does not wait for propagation (the harness's `call` does). */
const rawWrite = async (g: TestGateway, customerId: string): Promise<void> => {
  const res = await fetch(`${g.adminUrl}${admin('CreateCustomer')}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify({ customerId, name: customerId }),
  });
  expect(res.status).toBe(200);
  await res.body?.cancel();
};

const local = async (g: TestGateway) => {
  const r = await g.must(admin('GetConfigStatus'), { dataplaneId: 'local' });
  return (
    r.dataplanes as { desiredRevision: string; appliedRevision: string; stage: string; lastPollAt?: string; lastDriftSweepAt?: string }[]
  )[0];
};

const until = async (what: string, fn: () => boolean, ms: number): Promise<number> => {
  const t0 = Date.now();
  while (!fn()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for: ${what}`);
    await Bun.sleep(10);
  }
  return Date.now() - t0;
};

/** The worker is up: its start-up full sync has run (so a later write is not applied by it). */
const workerUp = (g: TestGateway) =>
  until('the worker’s first full sync', () => g.gw.controller.status.lastFullSyncAt !== undefined, 20_000);

describe('propagation worker', () => {
  test('notify off: a write returns before it is served (pending), and polling alone converges', async () => {
    tg = await startTestGateway({ WORKER_LISTEN: '0', WORKER_POLL_INTERVAL: '1500ms' });
    const g = tg;
    expect(g.gw.controller.status.listen).toBe(false);
    await workerUp(g);
    await rawWrite(g, 'polled');
    const desired = await currentRevision(g.gw.store.db);
    // The write committed and returned; the embedded plane has not rebuilt yet (its next poll does).
    expect(g.gw.snapshots.current?.revision ?? -1).toBeLessThan(desired);
    const status = await local(g); // (the harness then waits for convergence: the poll applies it)
    expect(status?.stage).toBe('pending');
    const after = await local(g);
    expect(after?.stage).toBe('serving');
    expect(after?.appliedRevision).toBe(String(desired));
    expect(after?.lastPollAt).toBeDefined();
  }, 60_000);

  test('notify on: served within a second of the write, without a poll', async () => {
    tg = await startTestGateway({ WORKER_POLL_INTERVAL: '1h' });
    const g = tg;
    await workerUp(g);
    const t0 = Date.now();
    await rawWrite(g, 'notified');
    const desired = await currentRevision(g.gw.store.db);
    await until('notify applies it', () => (g.gw.snapshots.current?.revision ?? -1) >= desired, 5_000);
    expect(Date.now() - t0).toBeLessThan(1_000 * 3);
    expect((await local(g))?.lastPollAt).toBeUndefined();
  }, 60_000);

  test('drift sweep: applies what no poll or notification delivered; every Nth sweep rebuilds at the same revision', async () => {
    tg = await startTestGateway({
      WORKER_LISTEN: '0',
      WORKER_POLL_INTERVAL: '1h',
      WORKER_DRIFT_SWEEP_INTERVAL: '400ms',
      WORKER_FULL_SYNC_EVERY_N_DRIFT_TICKS: '2',
    });
    const g = tg;
    await workerUp(g);
    await rawWrite(g, 'swept');
    const desired = await currentRevision(g.gw.store.db);
    await until('a sweep applies it', () => (g.gw.snapshots.current?.revision ?? -1) >= desired, 10_000);
    const swept = await local(g);
    expect(swept?.stage).toBe('serving');
    expect(swept?.lastDriftSweepAt).toBeDefined();
    // Full sync: a new snapshot object at the same revision.
    const before = g.gw.snapshots.current;
    const fullBefore = g.gw.controller.status.lastFullSyncAt?.getTime() ?? 0;
    await until(
      'a full sync',
      () => g.gw.snapshots.current !== before && (g.gw.controller.status.lastFullSyncAt?.getTime() ?? 0) > fullBefore,
      10_000,
    );
    expect(g.gw.snapshots.current?.revision).toBe(desired);
  }, 60_000);

  test('a failed worker is replaced, and propagation goes on', async () => {
    tg = await startTestGateway({ WORKER_POLL_INTERVAL: '1h' });
    const g = tg;
    const first = g.gw.controller.worker;
    expect(first).toBeDefined();
    first?.terminate();
    await until('a new worker', () => g.gw.controller.worker !== undefined && g.gw.controller.worker !== first, 10_000);
    expect(g.gw.controller.status.workerRestarts).toBe(1);
    // The new worker listens again (PostgreSQL: its own LISTEN; PGlite: the relay reaches it).
    await Bun.sleep(300);
    await rawWrite(g, 'after-restart');
    const desired = await currentRevision(g.gw.store.db);
    await until('the new worker applies it', () => (g.gw.snapshots.current?.revision ?? -1) >= desired, 10_000);
  }, 60_000);

  test('a separate data plane holds a Pull open: a new key is served at once although it never polls', async () => {
    tg = await startTestGateway({ WORKER_POLL_INTERVAL: '1h' });
    const g = tg;
    const C = { customerId: 'acme', projectId: 'default' };
    await g.must(admin('CreateCustomer'), { customerId: 'acme' });
    const modelId = String(((await g.must(admin('CreateModel'), { model: 'echo-chat', provider: 'echo' })).model as { id: string }).id);
    await g.must(admin('AddProjectModel'), { ...C, modelId });
    await g.must(admin('CreateProviderConnection'), { ...C, name: 'e', provider: 'echo' });
    await g.must(admin('CreateRoute'), { ...C, model: 'echo-chat', targets: [{ connection: 'e', model: 'echo' }] });
    await g.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge' });
    const sa = await g.must(admin('CreateServiceAccount'), { customerId: 'acme', workspaceId: 'edge', apiUri: g.adminUrl });
    dir = mkdtempSync(join(tmpdir(), 'gw-hold-'));
    writeFileSync(join(dir, 'sa.json'), JSON.stringify(sa), { mode: 0o600 });
    // Polls every hour, sweeps every 5 minutes: only the held Pull can bring the change in time.
    node = await startDataNode(
      loadConfig(['serve', '--role', 'data', '--service-account', join(dir, 'sa.json')], {
        GATEWAY_PORT: '0',
        GATEWAY_DATA_DIR: join(dir, 'node'),
        WORKER_POLL_INTERVAL: '1h',
        GATEWAY_LOG_LEVEL: 'error',
        GATEWAY_SHUTDOWN_GRACE: '1s',
      }),
    );
    const n = node;
    const chat = async (key: string) => {
      const res = await fetch(`${n.inferenceUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'echo-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.arrayBuffer();
      return res.status;
    };
    // The data plane's pull is held by the management plane.
    await until('a held pull', () => g.gw.controller.signal.waiting > 0, 10_000);
    for (let i = 0; i < 3; i++) {
      const key = String((await g.must(apikeyOp('CreateApiKey'), { name: `k${i}`, enterpriseContext: C })).apiKey);
      const t0 = Date.now();
      for (;;) {
        if ((await chat(key)) === 200) break;
        if (Date.now() - t0 > 5_000) throw new Error('the key did not reach the separate data plane within 5 s');
        await Bun.sleep(10);
      }
    }
    // Its next held pull reports the revision it applied.
    const stage = async () =>
      ((await g.must(admin('GetConfigStatus'), { dataplaneId: 'edge' })).dataplanes as { stage: string }[])[0]?.stage;
    const t0 = Date.now();
    while ((await stage()) !== 'serving' && Date.now() - t0 < 5_000) await Bun.sleep(20);
    expect(await stage()).toBe('serving');
  }, 60_000);
});
