import { afterAll, beforeAll, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { storedConversations } from '../src/store/schema/conversations.ts';
import { projects, requestRecords } from '../src/store/schema/index.ts';
import { admin, type TestGateway } from './support/gateway.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/** The `record-retention` project setting (contract §8): no bodies, cut bodies, and purge after N days. */

let world: World | undefined;
let tg: TestGateway;
let p: Provisioned;

beforeAll(async () => {
  world = await startWorld();
  ({ tg, p } = world);
  world.oa.script(() => ({ text: 'a fairly long answer that goes on and on for the sake of truncation', usage: { input: 3, output: 12 } }));
}, 60_000);

afterAll(async () => {
  await stopWorld(world);
});

const setRetention = (value: unknown) =>
  tg.must(admin('UpsertProjectSetting'), {
    customerId: 'acme',
    projectId: 'default',
    settingName: 'record-retention',
    settingValue: JSON.stringify(value),
  });

const send = async (content: string): Promise<string> => {
  const res = await fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  return res.headers.get('x-request-id') ?? '';
};

const row = async (id: string) => {
  await tg.gw.records.flush();
  const [r] = await tg.gw.store.db.select().from(requestRecords).where(eq(requestRecords.requestId, id));
  return r;
};

test('an invalid record-retention value is refused naming settingValue', async () => {
  const res = await tg.call(admin('UpsertProjectSetting'), {
    customerId: 'acme',
    projectId: 'default',
    settingName: 'record-retention',
    settingValue: '{"bodies":"some"}',
  });
  expect(res.status).toBe(400);
  expect(JSON.stringify(res.body)).toContain('settingValue');
});

test('bodies "none" stores no request or response body; the record is kept', async () => {
  await setRetention({ bodies: 'none' });
  const r = await row(await send('a private prompt'));
  expect(r).toBeDefined();
  expect(r?.requestBody).toBeNull();
  expect(r?.responseBody).toBeNull();
  expect(r?.inputTokens).toBe(3);
});

test('bodies "truncated" cuts each body at maxBodyBytes', async () => {
  await setRetention({ bodies: 'truncated', maxBodyBytes: 40 });
  const r = await row(await send('x'.repeat(500)));
  const req = r?.requestBody as { truncated: boolean; bytes: number; text: string };
  expect(req.truncated).toBe(true);
  expect(req.bytes).toBeGreaterThan(500);
  expect(Buffer.byteLength(req.text)).toBeLessThanOrEqual(40);
  expect((r?.responseBody as { truncated: boolean } | undefined)?.truncated).toBe(true);
});

test('days purges records older than that (and the project stored conversations on the same clock); newer records stay', async () => {
  await setRetention({ bodies: 'full', days: 1 });
  const old = await send('old one');
  const recent = await send('recent one');
  await row(recent);
  const db = tg.gw.store.db;
  await db
    .update(requestRecords)
    .set({ receivedAt: new Date(Date.now() - 2 * 86_400_000) })
    .where(eq(requestRecords.requestId, old));
  // Stored Responses: expires_at = creation + GATEWAY_RESPONSE_RETENTION (30 days by default).
  const [proj] = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.customerId, 'acme'), eq(projects.projectId, 'default')));
  const projectId = proj?.id ?? '';
  const created = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000 + 30 * 86_400_000);
  await db.insert(storedConversations).values([
    { projectId, id: 'resp_old', kind: 'response', body: {}, expiresAt: created(2) },
    { projectId, id: 'resp_new', kind: 'response', body: {}, expiresAt: created(0) },
  ]);
  const deleted = await tg.gw.retention.purge();
  expect(deleted).toBe(1);
  expect(await row(old)).toBeUndefined();
  expect((await row(recent))?.requestBody).not.toBeNull();
  const left = await db
    .select({ id: storedConversations.id })
    .from(storedConversations)
    .where(eq(storedConversations.projectId, projectId));
  expect(left.map((c) => c.id)).toEqual(['resp_new']);
});
