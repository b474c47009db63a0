import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataNode } from '../src/app-data.ts';
import postgres from 'postgres';
import { ADMIN_TOKEN, admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';
import { startSeparatePlane } from './support/data-node.ts';

/**
 * Concurrent management writes reach every data plane. A plane's revision is the highest change row
 * id it has seen, and ids are numbered when rows are inserted: without the mutation path's ordering
 * lock, a write numbered first but committed last (likely on PostgreSQL with many writes at once)
 * stayed behind a revision the planes already served, until a full sync. Here many keys are created
 * at once, without waiting between them, and every one must work on the embedded plane and on a
 * separate data plane within seconds.
 */

type Body = Record<string, unknown>;
const N = 24;
/** Keys go to different projects: writes to one project queue on its row lock, so they would commit in order anyway. */
const PROJECTS = Array.from({ length: 6 }, (_, i) => `p${i}`);
let tg: TestGateway;
let node: DataNode;
let dir: string;

const chat = async (base: string, key: string): Promise<number> => {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', host: 'all.example.com' },
    body: JSON.stringify({ model: 'echo-chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.body?.cancel();
  return res.status;
};

/** Every key answers 200 within `ms`, or the ones that do not are returned. */
const unserved = async (base: string, keys: string[], ms: number): Promise<string[]> => {
  const end = Date.now() + ms;
  let left = keys;
  while (left.length > 0 && Date.now() < end) {
    const statuses = await Promise.all(left.map((k) => chat(base, k)));
    left = left.filter((_, i) => statuses[i] !== 200);
    if (left.length > 0) await Bun.sleep(100);
  }
  return left;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-order-'));
  // Polling slower than the test's patience: what is served must come from the revision logic, not a poll.
  tg = await startTestGateway({ WORKER_POLL_INTERVAL: '30s' });
  await tg.must(admin('CreateCustomer'), { customerId: 'acme' });
  const modelId = String(((await tg.must(admin('CreateModel'), { model: 'echo-chat', provider: 'echo' })).model as Body).id);
  for (const projectId of PROJECTS) {
    await tg.must(admin('CreateProject'), { customerId: 'acme', projectId });
    await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId, modelId });
    await tg.must(admin('CreateProviderConnection'), { customerId: 'acme', projectId, name: 'e', provider: 'echo' });
    await tg.must(admin('CreateRoute'), {
      customerId: 'acme',
      projectId,
      model: 'echo-chat',
      targets: [{ connection: 'e', model: 'echo' }],
    });
  }
  await tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge', projectId: 'p0' });
  // The data plane serves every project: they are attached to a gateway it hosts.
  const gw = (
    await tg.must(admin('CreateProjectGateway'), {
      customerId: 'acme',
      workspaceId: 'edge',
      projectGatewayId: 'all',
      url: 'https://all.example.com',
    })
  ).projectGateway as Body;
  for (const projectId of PROJECTS) await tg.must(admin('AttachProjectGatewayProject'), { id: gw.id, projectId });
  node = await startSeparatePlane(tg, dir, 'acme', 'edge', '30s');
}, 60_000);

afterAll(async () => {
  await node?.stop(1000);
  await tg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test(`${N} keys created at once are all served by both planes`, async () => {
  const keys = await Promise.all(
    Array.from({ length: N }, async (_, i) => {
      // Straight to the API (no settle between writes): the writes overlap in the database.
      const res = await fetch(`${tg.adminUrl}${apikeyOp('CreateApiKey')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ name: `k${i}`, enterpriseContext: { customerId: 'acme', projectId: PROJECTS[i % PROJECTS.length] } }),
      });
      expect(res.status).toBe(200);
      return String(((await res.json()) as Body).apiKey);
    }),
  );
  expect(await unserved(tg.url, keys, 8_000)).toEqual([]);
  expect(await unserved(node.inferenceUrl, keys, 8_000)).toEqual([]);
}, 30_000);

test.skipIf(!process.env.TEST_DATABASE_URL)(
  'a write waits for the commit of a write that started before it (PostgreSQL)',
  async () => {
    const url = tg.db.url;
    if (!url) throw new Error('no database url');
    const sql = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked: () => void = () => undefined;
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      // Another writer inside its transaction, holding the ordering lock as every mutation does.
      const other = sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${0x63686731})`;
        locked();
        await held;
      });
      await isLocked;
      let done = false;
      const write = fetch(`${tg.adminUrl}${apikeyOp('CreateApiKey')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ name: 'late', enterpriseContext: { customerId: 'acme', projectId: 'p1' } }),
      }).then((r) => {
        done = true;
        return r;
      });
      await Bun.sleep(400);
      expect(done).toBe(false);
      release();
      await other;
      const res = await write;
      expect(res.status).toBe(200);
      const key = String(((await res.json()) as Body).apiKey);
      expect(await unserved(tg.url, [key], 5_000)).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  },
  30_000,
);
