import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKek, SecretBox } from '../src/core/secrets.ts';
import type { ConfigDocument } from '../src/api/config-document.ts';
import { loadConfigDocument } from '../src/propagation/load.ts';
import type { Db } from '../src/store/db.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * A configuration load that follows the previous document (load.ts, `previous`) keeps its API keys
 * and reads only the keys changed since: after every kind of management write below, it must give
 * the same document as a full load (PGlite, or PostgreSQL with TEST_DATABASE_URL). A project
 * deleted (its keys revoked by the cascade) makes it read every key again.
 */

type Body = Record<string, unknown>;
const kek = generateKek();
const secrets = new SecretBox(kek);
let tg: TestGateway;
let db: Db;
let previous: ConfigDocument;
const C = 'acme';

beforeAll(async () => {
  tg = await startTestGateway({ GATEWAY_KEK: kek });
  db = tg.gw.store.db;
  await tg.must(admin('CreateCustomer'), { customerId: C });
  const modelId = String(((await tg.must(admin('CreateModel'), { model: 'echo-chat', provider: 'echo' })).model as Body).id);
  for (const projectId of ['default', 'p2']) {
    if (projectId !== 'default') await tg.must(admin('CreateProject'), { customerId: C, projectId });
    await tg.must(admin('AddProjectModel'), { customerId: C, projectId, modelId });
    await tg.must(admin('CreateProviderConnection'), { customerId: C, projectId, name: 'e', provider: 'echo' });
    await tg.must(admin('CreateRoute'), { customerId: C, projectId, model: 'echo-chat', targets: [{ connection: 'e', model: 'echo' }] });
  }
  previous = await loadConfigDocument(db, secrets);
}, 60_000);

afterAll(async () => {
  await tg?.stop();
});

const sorted = (d: ConfigDocument): ConfigDocument => ({ ...d, apiKeys: [...d.apiKeys].sort((a, b) => a.id.localeCompare(b.id)) });

/** The incremental load after the writes equals a full one; it becomes the next `previous`. */
const followed = async (): Promise<ConfigDocument> => {
  const next = await loadConfigDocument(db, secrets, false, undefined, { previous });
  const full = await loadConfigDocument(db, secrets);
  expect(sorted(next)).toEqual(sorted(full));
  previous = next;
  return next;
};

const createKey = async (projectId: string): Promise<string> =>
  String((await tg.must(apikeyOp('CreateApiKey'), { name: 'k', userId: 'u', enterpriseContext: { customerId: C, projectId } })).id);

test('keys created, revoked, and other entities changed: the followed document equals a full load each time', async () => {
  const keys = [await createKey('default'), await createKey('default'), await createKey('p2')];
  expect((await followed()).apiKeys.map((k) => k.id)).toEqual(expect.arrayContaining(keys));

  await tg.must(apikeyOp('RevokeApiKey'), { id: keys[0] });
  expect((await followed()).apiKeys.map((k) => k.id)).not.toContain(keys[0]);

  const routes = (await tg.must(admin('ListRoutes'), { customerId: C, projectId: 'default' })).routes as Body[];
  await tg.must(admin('UpdateRoute'), { id: routes[0]?.id, enabled: false });
  await tg.must(admin('CreateProviderConnection'), { customerId: C, projectId: 'default', name: 'e2', provider: 'echo' });
  await tg.must(admin('UpsertProjectSetting'), {
    customerId: C,
    projectId: 'default',
    settingName: 'rate-limit',
    settingValue: '{"requestsPerMinute":1000}',
  });
  const k4 = await createKey('default');
  expect((await followed()).apiKeys.map((k) => k.id)).toContain(k4);

  // Nothing changed: the same document.
  await followed();
});

test('after only route, connection or key changes the previous keys are kept as they were; expired ones are dropped', async () => {
  // A key the store does not have, planted in the previous document: kept when nothing says keys
  // changed (the load trusts the change feed; the periodic full sync reloads everything).
  const planted = {
    id: '11111111-1111-4111-8111-111111111111',
    projectUuid: previous.projects[0]?.id ?? '',
    keyHash: 'x'.repeat(64),
    customerId: C,
    projectId: 'default',
    expiresAt: null,
  };
  const expired = {
    ...planted,
    id: '22222222-2222-4222-8222-222222222222',
    keyHash: 'y'.repeat(64),
    expiresAt: new Date(Date.now() - 1000).toISOString(),
  };
  previous = { ...previous, apiKeys: [...previous.apiKeys, planted, expired] };
  const routes = (await tg.must(admin('ListRoutes'), { customerId: C, projectId: 'default' })).routes as Body[];
  await tg.must(admin('UpdateRoute'), { id: routes[0]?.id, enabled: true });
  const next = await loadConfigDocument(db, secrets, false, undefined, { previous });
  const ids = next.apiKeys.map((k) => k.id);
  expect(ids).toContain(planted.id);
  expect(ids).not.toContain(expired.id);
  // A full load does not have it; the next test starts from a true document again.
  previous = await loadConfigDocument(db, secrets);
  expect(previous.apiKeys.map((k) => k.id)).not.toContain(planted.id);
});

test('a project deleted revokes its keys by cascade: every key is read again, and its keys are gone', async () => {
  const before = previous.apiKeys.filter((k) => k.projectId === 'p2').map((k) => k.id);
  expect(before.length).toBeGreaterThan(0);
  // Planted again: a load that reads every key drops it.
  previous = {
    ...previous,
    apiKeys: [
      ...previous.apiKeys,
      { ...previous.apiKeys[0], id: '33333333-3333-4333-8333-333333333333' } as ConfigDocument['apiKeys'][number],
    ],
  };
  await tg.must(admin('DeleteProject'), { customerId: C, projectId: 'p2' });
  const next = await followed();
  const ids = next.apiKeys.map((k) => k.id);
  for (const id of before) expect(ids).not.toContain(id);
  expect(ids).not.toContain('33333333-3333-4333-8333-333333333333');
});

test('the embedded data plane serves keys created and revoked through the followed loads', async () => {
  const key = (await tg.must(apikeyOp('CreateApiKey'), {
    name: 'live',
    userId: 'u',
    enterpriseContext: { customerId: C, projectId: 'default' },
  })) as Body;
  const chat = async (): Promise<number> => {
    const res = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${String(key.apiKey)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'echo-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.body?.cancel();
    return res.status;
  };
  expect(await chat()).toBe(200);
  await tg.must(apikeyOp('RevokeApiKey'), { id: key.id });
  expect(await chat()).toBe(401);
});
