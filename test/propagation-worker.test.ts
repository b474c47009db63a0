import { afterEach, describe, expect, test } from 'bun:test';
import { currentRevision } from '../src/propagation/load.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * The propagation worker (issue 13, item 2): a management write returns at commit; with
 * notifications off, polling alone converges; the drift sweep applies what polling missed and every
 * Nth sweep is a full rebuild; a failed worker is replaced. Runs on PGlite (the worker asks the main
 * thread) and on PostgreSQL (the worker's own connection) with TEST_DATABASE_URL.
 */

let tg: TestGateway | undefined;
afterEach(async () => {
  await tg?.stop();
  tg = undefined;
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
  return (r.dataplanes as { desiredRevision: string; appliedRevision: string; stage: string; lastPollAt?: string; lastDriftSweepAt?: string }[])[0];
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
const workerUp = (g: TestGateway) => until('the worker’s first full sync', () => g.gw.controller.status.lastFullSyncAt !== undefined, 20_000);

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
    tg = await startTestGateway({ WORKER_LISTEN: '0', WORKER_POLL_INTERVAL: '1h', WORKER_DRIFT_SWEEP_INTERVAL: '400ms', WORKER_FULL_SYNC_EVERY_N_DRIFT_TICKS: '2' });
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
    await until('a full sync', () => g.gw.snapshots.current !== before && (g.gw.controller.status.lastFullSyncAt?.getTime() ?? 0) > fullBefore, 10_000);
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
});
