import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { importPKCS8, SignJWT } from 'jose';
import { jcs } from '../src/audit/entry.ts';
import { sha256Hex } from '../src/core/ids.ts';
import { flushLastUsed } from '../src/control-plane/service-account-auth.ts';
import { openPull } from '../src/propagation/seal.ts';
import { requestRecords } from '../src/store/schema/index.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * Service accounts (CreateServiceAccount / Get / Revoke / Restore), their JWTs on the management
 * API (scopes → roles), and the data plane protocol (Pull, PushRecords) they authenticate.
 */

type Body = Record<string, unknown>;
let tg: TestGateway;
const A = admin;

interface Sa {
  id: string;
  clientEmail: string;
  privateKey: string;
  privateKeyId: string;
  authServer: { audience: string; issuer: string; jwksUri: string };
}

const create = async (extra: Body = {}): Promise<{ sa: Sa; raw: Body }> => {
  const raw = await tg.must(A('CreateServiceAccount'), { customerId: 'acme', workspaceId: 'edge', ...extra });
  return { sa: raw.serviceAccount as unknown as Sa, raw };
};

const jwtOf = async (sa: Sa, claims: Body = {}, lifetimeS = 60) => {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: sa.privateKeyId })
    .setIssuer(sa.authServer.issuer)
    .setSubject(sa.clientEmail)
    .setAudience(sa.authServer.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + lifetimeS)
    .sign(await importPKCS8(sa.privateKey, 'RS256'));
};

const pull = async (token: string, body: Body = {}) => {
  const res = await fetch(`${tg.adminUrl}/dataplane.v1.DataplaneService/Pull`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as Body };
};

beforeAll(async () => {
  tg = await startTestGateway();
  await tg.must(A('CreateCustomer'), { customerId: 'acme' });
  await tg.must(A('CreateCustomer'), { customerId: 'globex' });
  await tg.must(A('CreateProject'), { customerId: 'acme', projectId: 'web' });
  await tg.must(A('CreateProject'), { customerId: 'globex', projectId: 'shop' });
  await tg.must(A('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge', projectId: 'web' });
  for (const [c, p] of [
    ['acme', 'web'],
    ['globex', 'shop'],
  ] as const) {
    await tg.must(A('CreateProviderConnection'), {
      customerId: c,
      projectId: p,
      name: 'up',
      provider: 'openai',
      apiKey: `sk-secret-of-${c}`,
    });
  }
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

describe('CreateServiceAccount', () => {
  test('returns the private key once, a checksum over the RFC 8785 JSON, defaults, and publishes the public key', async () => {
    const { sa, raw } = await create({
      routerUrl: 'https://router.example',
      routerKey: 'rk-plain',
      telemetryLocalVars: { OTEL_TOKEN: 'tok-1' },
    });
    expect(raw.checksumAlgorithm).toBe('sha256');
    expect(raw.checksum).toBe(sha256Hex(jcs(raw.serviceAccount)));
    expect(sa.privateKey).toStartWith('-----BEGIN PRIVATE KEY-----');
    const full = raw.serviceAccount as Body;
    expect(full.scopes).toEqual(['dataplane']);
    const days = (Date.parse(String(full.expiresAt)) - Date.parse(String(full.createdAt))) / 86_400_000;
    expect(days).toBe(365);
    const router = (full.gatekeeper as Body).router as Body;
    expect(router.url).toBe('https://router.example');
    expect(String(router.key)).toMatch(/^secret:\/\/internal\/[0-9a-f-]{36}$/);
    const vars = ((full.dataExports as Body).telemetry as Body).localVars as Record<string, string>;
    expect(vars.OTEL_TOKEN).toMatch(/^secret:\/\/internal\//);
    // Neither the private key nor a plaintext secret is anywhere in the database or the audit trail.
    const dump =
      JSON.stringify(await tg.gw.store.db.execute('select * from service_accounts' as never)) +
      JSON.stringify(await tg.gw.store.db.execute('select * from audit_logs' as never));
    expect(dump).not.toContain(sa.privateKey.split('\n')[1] as string);
    expect(dump).not.toContain('rk-plain');
    expect(dump).not.toContain('tok-1');
    const jwks = (await (await fetch(`${tg.adminUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toContain(sa.privateKeyId);
    expect(sa.authServer.jwksUri).toBe(`${tg.adminUrl}/.well-known/jwks.json`);
  });

  test('internalApiKey: a secret reference with PostgreSQL; plaintext accepted only with the embedded store', async () => {
    const r = await tg.call(A('CreateServiceAccount'), { customerId: 'acme', workspaceId: 'edge', internalApiKey: 'plain-key' });
    if (tg.gw.store.driver === 'postgres') {
      expect(r.status).toBe(400);
      expect(String(r.body.message)).toContain('internalApiKey');
    } else {
      expect(r.status).toBe(200);
      expect(String((r.body.serviceAccount as Body).internalApiKey)).toMatch(/^secret:\/\/internal\//);
    }
    const bad = await tg.call(A('CreateServiceAccount'), {
      customerId: 'acme',
      workspaceId: 'edge',
      internalApiKey: 'secret://internal/00000000-0000-4000-8000-000000000000',
    });
    expect(bad.status).toBe(400);
    const unknownWs = await tg.call(A('CreateServiceAccount'), { customerId: 'acme', workspaceId: 'nowhere' });
    expect(unknownWs.status).toBe(404);
  });
});

describe('service-account JWTs on the management API', () => {
  test('scope read reads its customer only; admin writes its projects; dataplane-only is not a management credential', async () => {
    const reader = (await create({ scopes: ['read'] })).sa;
    const writer = (await create({ scopes: ['admin'] })).sa;
    const dp = (await create()).sa;
    const rt = await jwtOf(reader);
    expect((await tg.call(A('ListProjects'), { customerId: 'acme' }, rt)).status).toBe(200);
    expect((await tg.call(A('ListProjects'), { customerId: 'globex' }, rt)).status).toBe(403);
    expect((await tg.call(A('UpdateProject'), { customerId: 'acme', projectId: 'web', description: 'x' }, rt)).status).toBe(403);
    expect(
      (await tg.call(A('UpdateProject'), { customerId: 'acme', projectId: 'web', description: 'x' }, await jwtOf(writer))).status,
    ).toBe(200);
    expect((await tg.call(A('CreateCustomer'), { customerId: 'nope' }, await jwtOf(writer))).status).toBe(403);
    expect((await tg.call(A('ListProjects'), { customerId: 'acme' }, await jwtOf(dp))).status).toBe(401);
    // Long-lived tokens are refused (at most one hour).
    expect((await tg.call(A('ListProjects'), { customerId: 'acme' }, await jwtOf(reader, {}, 7200))).status).toBe(401);
    // lastUsedAt is written in batches.
    await flushLastUsed({ db: tg.gw.store.db });
    const info = (await tg.must(A('GetServiceAccount'), { id: reader.id })).serviceAccount as Body;
    expect(info.status).toBe('SERVICE_ACCOUNT_STATUS_ACTIVE');
    expect(info.email).toBe(reader.clientEmail);
    expect(typeof info.lastUsedAt).toBe('string');
    expect(info.publicKeyFingerprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(info)).not.toContain('PRIVATE KEY');
  });

  test('revoke: refused at once, reason in the audit trail; restore: accepted again', async () => {
    const { sa } = await create({ scopes: ['read'] });
    const rev = await tg.must(A('RevokeServiceAccount'), { id: sa.id, reason: 'key leaked in a CI log' });
    expect(rev.success).toBe(true);
    expect((await tg.call(A('ListProjects'), { customerId: 'acme' }, await jwtOf(sa))).status).toBe(401);
    expect(((await tg.must(A('GetServiceAccount'), { id: sa.id })).serviceAccount as Body).status).toBe('SERVICE_ACCOUNT_STATUS_REVOKED');
    expect((await tg.call(A('RevokeServiceAccount'), { id: sa.id })).status).toBe(400);
    const restored = await tg.must(A('RestoreServiceAccount'), { id: sa.id, reason: 'rotated the CI secret' });
    expect((restored.serviceAccount as Body).status).toBe('SERVICE_ACCOUNT_STATUS_ACTIVE');
    expect((await tg.call(A('ListProjects'), { customerId: 'acme' }, await jwtOf(sa))).status).toBe(200);
    const audit = (await tg.must(A('QueryAuditLogs'), { resourceType: 'service_account', resourceId: sa.id })) as Body;
    const text = JSON.stringify(audit);
    expect(text).toContain('key leaked in a CI log');
    expect(text).toContain('rotated the CI secret');
  });
});

describe('the data plane protocol', () => {
  test('Pull: its customer and workspace projects only, keys sealed for the account, unchanged at the same revision, status recorded', async () => {
    const { sa } = await create();
    const first = await pull(await jwtOf(sa), { full: true });
    expect(first.status).toBe(200);
    expect(first.text).not.toContain('sk-secret-of-');
    const doc = first.body.document as {
      projects: { customerId: string; projectId: string }[];
      connections: { id: string; customerId: string; apiKey: string | null }[];
    };
    expect(doc.projects.map((p) => `${p.customerId}/${p.projectId}`)).toEqual(['acme/web']);
    expect(doc.connections.map((c) => c.customerId)).toEqual(['acme']);
    expect(doc.connections[0]?.apiKey).toStartWith('eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..');
    const { doc: opened } = await openPull(first.body, sa.privateKey);
    expect(opened.connections.map((c) => c.apiKey)).toEqual(['sk-secret-of-acme']);
    const rev = String(first.body.revision);
    const again = await pull(await jwtOf(sa), { knownRevision: rev, appliedRevision: rev });
    expect(again.body).toMatchObject({ unchanged: true, revision: rev, dataplaneId: 'edge' });
    const status = (await tg.must(A('GetConfigStatus'), { dataplaneId: 'edge' })).dataplanes as Body[];
    expect(status[0]).toMatchObject({
      dataplaneId: 'edge',
      customerId: 'acme',
      appliedRevision: rev,
      desiredRevision: rev,
      stage: 'serving',
    });
    expect(typeof status[0]?.lastPollAt).toBe('string');
    // A change addressed to the plane moves its desired revision: pending until it pulls.
    await tg.must(A('CreateModel'), { model: 'm1', provider: 'openai' });
    await tg.must(A('CreateRoute'), {
      customerId: 'acme',
      projectId: 'web',
      model: 'm1',
      targets: [{ connection: 'up', model: 'gpt-4o' }],
    });
    const moved = ((await tg.must(A('GetConfigStatus'), { dataplaneId: 'edge' })).dataplanes as Body[])[0];
    expect(moved?.stage).toBe('pending');
    const next = await pull(await jwtOf(sa), { knownRevision: rev, appliedRevision: rev });
    expect(next.body.unchanged).toBe(false);
    expect(Number(next.body.revision)).toBeGreaterThan(Number(rev));
  });

  test('Pull with waitSeconds: held until a change for the data plane commits (or the wait ends); a bad wait is refused', async () => {
    const { sa } = await create();
    const rev = String((await pull(await jwtOf(sa), { full: true })).body.revision);
    const bad = await pull(await jwtOf(sa), { knownRevision: rev, waitSeconds: 31 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_argument' });
    expect(String(bad.body.message)).toContain('waitSeconds');
    // Nothing changes: answered unchanged once the wait ends.
    const t0 = Date.now();
    const idle = await pull(await jwtOf(sa), { knownRevision: rev, appliedRevision: rev, waitSeconds: 1 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(idle.body).toMatchObject({ unchanged: true, revision: rev });
    // A change for this data plane commits while the pull is held: answered at once with it.
    const held = pull(await jwtOf(sa), { knownRevision: rev, appliedRevision: rev, waitSeconds: 25 });
    await Bun.sleep(300);
    const t1 = Date.now();
    await tg.must(A('CreateProviderConnection'), {
      customerId: 'acme',
      projectId: 'web',
      name: `held${Date.now()}`,
      provider: 'openai',
      apiKey: 'sk-held',
    });
    const answered = await held;
    expect(Date.now() - t1).toBeLessThan(10_000);
    expect(answered.body.unchanged).toBe(false);
    expect(Number(answered.body.revision)).toBeGreaterThan(Number(rev));
    // A change for another customer does not answer it: the hold re-reads its own revision.
    const now = String(answered.body.revision);
    const other = pull(await jwtOf(sa), { knownRevision: now, appliedRevision: now, waitSeconds: 1 });
    await tg.must(A('CreateProviderConnection'), {
      customerId: 'globex',
      projectId: 'shop',
      name: `x${Date.now()}`,
      provider: 'openai',
      apiKey: 'sk-other',
    });
    expect((await other).body).toMatchObject({ unchanged: true, revision: now });
  });

  test('Pull and PushRecords refuse a revoked account with its reason; records of its customer are stored, others rejected', async () => {
    const { sa } = await create();
    const id = crypto.randomUUID();
    const rows = [
      {
        request_id: id,
        received_at: new Date().toISOString(),
        customer_id: 'acme',
        project_id: 'web',
        endpoint: '/v1/chat/completions',
        http_status: 200,
        latency_ms: 5,
        request_body: { a: 1 },
      },
      {
        request_id: crypto.randomUUID(),
        received_at: new Date().toISOString(),
        customer_id: 'globex',
        project_id: 'shop',
        endpoint: '/v1/chat/completions',
        http_status: 200,
        latency_ms: 5,
      },
    ];
    const push = async (token: string) =>
      fetch(`${tg.adminUrl}/dataplane.v1.DataplaneService/PushRecords`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ records: rows }),
      });
    const r = await push(await jwtOf(sa));
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      accepted: 1,
      rejected: 1,
      errors: [{ index: 1, message: "customer_id: records of another customer than the service account's ('acme') are refused" }],
    });
    const again = await push(await jwtOf(sa));
    expect(again.status).toBe(200);
    const found = (await tg.must(A('SearchRequestRecords'), { customerId: 'acme', projectId: 'web', requestId: id })) as Body;
    expect(JSON.stringify(found)).toContain(id);
    await tg.must(A('RevokeServiceAccount'), { id: sa.id });
    const refused = await pull(await jwtOf(sa));
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'unauthenticated', reason: 'revoked' });
    expect((await push(await jwtOf(sa))).status).toBe(401);
    // A management credential is no data plane credential.
    expect((await pull('test-admin-token-0123456789')).status).toBe(401);
  });

  test("PushRecords: a record naming no customer is stored as the account's customer, never lost (issue 22, item 7)", async () => {
    const { sa } = await create();
    const [none, empty] = [crypto.randomUUID(), crypto.randomUUID()];
    const base = {
      received_at: new Date().toISOString(),
      project_id: 'web',
      endpoint: '/v1/chat/completions',
      http_status: 200,
      latency_ms: 5,
    };
    const res = await fetch(`${tg.adminUrl}/dataplane.v1.DataplaneService/PushRecords`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await jwtOf(sa)}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        records: [
          { ...base, request_id: none },
          { ...base, request_id: empty, customer_id: '' },
          { ...base, request_id: crypto.randomUUID(), customer_id: null },
        ],
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: 3, rejected: 0 });
    for (const id of [none, empty]) {
      const found = (await tg.must(A('SearchRequestRecords'), { customerId: 'acme', projectId: 'web', requestId: id })) as Body;
      expect(JSON.stringify(found)).toContain(id);
      const rows = await tg.gw.store.db
        .select({ customerId: requestRecords.customerId })
        .from(requestRecords)
        .where(eq(requestRecords.requestId, id));
      expect(rows.map((r) => r.customerId)).toEqual(['acme']);
    }
  });
});
