import { afterAll, beforeAll, expect, spyOn, test } from 'bun:test';
import { SecretBox } from '../src/core/secrets.ts';
import { loadConfigDocument } from '../src/propagation/load.ts';
import type { Db } from '../src/store/db.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * On PGlite the configuration document is read in one round trip (store/pglite-select.ts: each
 * select as one JSON text, all in one `exec` inside the load's transaction). It must be the very
 * document the selects give one by one through drizzle: every entity kind, value type (numeric
 * prices, bigint limits, timestamps, jsonb, arrays, nulls, encrypted keys), scoped and not. On
 * PostgreSQL both calls take the drizzle path (the comparison then holds trivially).
 */

type Body = Record<string, unknown>;
let tg: TestGateway;
let secrets: SecretBox;
let db: Db;
let scope: { customerUuid: string; projectUuids: string[]; workspace: { id: string; slug: string; projectUuid: string } };

beforeAll(async () => {
  const kek = 'Bb5eLt5kYJ0Vq2W8mZ3x9N4pR7sT1uV6wX0yZ2aC4dE=';
  tg = await startTestGateway({ GATEWAY_KEK: kek });
  secrets = new SecretBox(kek);
  db = tg.gw.store.db;
  const customer = (await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' })).customer as Body;
  const projectUuids: string[] = [];
  for (const projectId of ['web', 'api']) {
    projectUuids.push(String(((await tg.must(admin('CreateProject'), { customerId: 'acme', projectId })).project as Body).id));
    const addr = { customerId: 'acme', projectId };
    const model = (
      await tg.must(admin('CreateModel'), {
        model: `m-${projectId}`,
        provider: 'openai',
        mode: 'chat',
        capabilities: ['chat', 'tools'],
        contextWindow: 128000,
        maxOutputTokens: 16384,
        inputPricePerMillion: 0.15,
        outputPricePerMillion: 0.6,
        cachedPricePerMillion: 0.075,
      })
    ).model as Body;
    await tg.must(admin('AddProjectModel'), { ...addr, modelId: model.id });
    await tg.must(admin('AddProjectProvider'), { ...addr, providerName: 'openai' });
    await tg.must(admin('CreateProviderConnection'), { ...addr, name: 'c1', provider: 'openai', apiKey: `sk-secret-${projectId}` });
    await tg.must(admin('CreateProviderConnection'), { ...addr, name: 'c2', provider: 'echo' });
    await tg.must(admin('CreateRoute'), {
      ...addr,
      model: `m-${projectId}`,
      targets: [
        { connection: 'c1', model: 'gpt-4o-mini', priority: 0, weight: 3 },
        { connection: 'c2', model: 'echo', priority: 1, weight: 1 },
      ],
    });
    await tg.must(apikeyOp('CreateApiKey'), { name: 'k1', enterpriseContext: addr });
    await tg.must(apikeyOp('CreateApiKey'), { name: 'k2', enterpriseContext: { ...addr, expiresInDays: 30 } });
    await tg.must(admin('AddProjectMember'), { ...addr, userId: `u-${projectId}`, role: 'member' });
    await tg.must(admin('UpsertProjectSetting'), {
      ...addr,
      settingName: 'rate-limit',
      settingValue: '{"requestsPerMinute":100,"tokensPerMinute":5000}',
    });
    await tg.must(admin('UpsertBudget'), { ...addr, name: 'b1', limitUsd: '12.5', period: 'month' });
    await tg.must(admin('CreateGuardrail'), { ...addr, name: 'g2', stage: 'input', kind: 'regex', pattern: 'x+', action: 'block' });
    await tg.must(admin('CreateGuardrail'), { ...addr, name: 'g1', stage: 'both', kind: 'regex', pattern: 'secret', action: 'redact' });
    await tg.must('/byok.v1.ByokService/Register', {
      provider: 'PROVIDER_OPENAI',
      name: 'bk',
      secret: `sk-byok-${projectId}-0000`,
      ...addr,
    });
  }
  const ws = (await tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge', projectId: 'web' })).workspace as Body;
  const gw = (
    await tg.must(admin('CreateProjectGateway'), {
      customerId: 'acme',
      workspaceId: 'edge',
      projectGatewayId: 'g',
      url: 'https://api.example.com',
    })
  ).projectGateway as Body;
  await tg.must(admin('AttachProjectGatewayProject'), { id: gw.id, projectId: 'api' });
  await tg.must(admin('SetWorkspaceURL'), { id: ws.id, url: 'https://edge.example.net', triggerUpdate: true });
  const token = await tg.must(admin('CreateUserToken'), {
    customerId: 'acme',
    workspaceId: 'edge',
    userId: 'u-web',
    organizationUnit: 'eng',
    role: 'developer',
    projectId: 'web',
  });
  await tg.must(admin('RevokeUserToken'), { jti: token.jti });
  scope = {
    customerUuid: String(customer.id),
    projectUuids,
    workspace: { id: String(ws.id), slug: 'edge', projectUuid: projectUuids[0] as string },
  };
}, 120_000);

afterAll(async () => {
  await tg?.stop();
});

test('the batched read gives the same document as the selects one by one', async () => {
  const batched = await loadConfigDocument(db, secrets);
  const oneByOne = await loadConfigDocument(db, secrets, false, undefined, { batched: false });
  expect(batched).toEqual(oneByOne);
  // What the comparison covers is there.
  expect(batched.apiKeys.length).toBe(4);
  expect(batched.apiKeys.some((k) => k.expiresAt !== null)).toBe(true);
  expect(batched.connections.map((c) => c.apiKey).sort()).toEqual([null, null, 'sk-secret-api', 'sk-secret-web']);
  expect(batched.budgets.length).toBe(2);
  expect(batched.guardrails.map((g) => g.name)).toEqual(['g1', 'g1', 'g2', 'g2']);
  expect(batched.byokKeys.length).toBe(2);
  expect(batched.revokedTokenIds.length).toBe(1);
  expect(batched.projectGateways?.length).toBe(1);
  expect(batched.workspaceUrls?.length).toBe(1);
  expect(batched.catalog.every((m) => typeof m.createdAt === 'string')).toBe(true);
});

test('scoped to a data plane: the same document both ways', async () => {
  const batched = await loadConfigDocument(db, secrets, true, scope);
  expect(batched).toEqual(await loadConfigDocument(db, secrets, true, scope, { batched: false }));
  expect(batched.connections.every((c) => c.allowPrivate)).toBe(true);
});

test.skipIf(Boolean(process.env.TEST_DATABASE_URL))('on PGlite the selects travel in one exec', async () => {
  const client = (db as unknown as { $client: { transaction: (...a: unknown[]) => unknown } }).$client;
  let execs = 0;
  const original = client.transaction.bind(client);
  const spy = spyOn(client, 'transaction').mockImplementation(((fn: (tx: { exec: (q: string) => unknown }) => unknown) =>
    original(async (tx: { exec: (q: string) => unknown }) => {
      const exec = tx.exec.bind(tx);
      tx.exec = (q: string) => {
        execs++;
        return exec(q);
      };
      return fn(tx);
    })) as never);
  try {
    await loadConfigDocument(db, secrets);
    expect(execs).toBe(1);
  } finally {
    spy.mockRestore();
  }
});
