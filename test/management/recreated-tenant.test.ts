import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq, isNull } from 'drizzle-orm';
import { decodeJwt, importPKCS8, SignJWT } from 'jose';
import { generateKek, SecretBox } from '../../src/core/secrets.ts';
import { serviceAccounts, signingKeys } from '../../src/store/schema/index.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from '../support/gateway.ts';

/**
 * A customer deleted and re-created with the same slug is another tenant (issue 22, defect 3):
 * every credential of the old one — service-account JWTs, user tokens (persisted and impersonation)
 * and API keys — is refused on the management API, on the data plane protocol and on inference;
 * the old service account reads REVOKED and its key leaves the JWKS; and access is decided on the
 * customer's row id, so the new tenant's credentials do not reach the old tenant's rows either.
 */

type Body = Record<string, unknown>;
interface Sa {
  id: string;
  clientEmail: string;
  privateKey: string;
  privateKeyId: string;
  authServer: { audience: string; issuer: string };
}
interface Creds {
  sa: Sa;
  apiKey: string;
  userToken: string;
  jti: string;
  impersonation: string;
}

const KEK = generateKek();
const MODEL = 'echo-recreated';
let tg: TestGateway;

const saJwt = async (sa: Sa): Promise<string> => {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', kid: sa.privateKeyId })
    .setIssuer(sa.authServer.issuer)
    .setSubject(sa.clientEmail)
    .setAudience(sa.authServer.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + 60)
    .sign(await importPKCS8(sa.privateKey, 'RS256'));
};
const pull = async (token: string): Promise<{ status: number; body: Body }> => {
  const res = await fetch(`${tg.adminUrl}/dataplane.v1.DataplaneService/Pull`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ full: true }),
  });
  return { status: res.status, body: (await res.json()) as Body };
};
const chat = async (token: string): Promise<number> => {
  const res = await fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  return res.status;
};
const jwksKids = async (): Promise<string[]> =>
  ((await (await fetch(`${tg.adminUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
const status = async (op: string, body: Body, token: string): Promise<number> => (await tg.call(admin(op), body, token)).status;

/** Customer `acme` served (model, connection, route), with workspace `edge` and one credential of every kind. */
const provision = async (): Promise<Creds> => {
  await tg.must(admin('CreateCustomer'), { customerId: 'acme' });
  const models = (await tg.must(admin('ListModels'), { pageSize: 1000 })).models as Body[];
  const model =
    models.find((m) => m.model === MODEL) ??
    ((await tg.must(admin('CreateModel'), { model: MODEL, provider: 'echo', capabilities: ['chat'] })).model as Body);
  await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: model.id });
  await tg.must(admin('CreateProviderConnection'), { customerId: 'acme', projectId: 'default', name: 'echo', provider: 'echo' });
  await tg.must(admin('CreateRoute'), {
    customerId: 'acme',
    projectId: 'default',
    model: MODEL,
    targets: [{ connection: 'echo', model: 'echo' }],
  });
  await tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge' });
  await tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'default', userId: 'ann', role: 'admin' });
  const sa = (await tg.must(admin('CreateServiceAccount'), { customerId: 'acme', workspaceId: 'edge', scopes: ['read', 'dataplane'] }))
    .serviceAccount as unknown as Sa;
  const apiKey = (
    (await tg.must(apikeyOp('CreateApiKey'), {
      name: 'k',
      userId: 'ann',
      enterpriseContext: { customerId: 'acme', projectId: 'default' },
    })) as { apiKey: string }
  ).apiKey;
  const token = { customerId: 'acme', workspaceId: 'edge', userId: 'ann', organizationUnit: 'eng', role: 'dev' };
  const user = (await tg.must(admin('CreateUserToken'), token)) as Record<string, string>;
  const imp = (await tg.must(admin('CreateUserToken'), {
    ...token,
    impersonate: true,
    impersonationMetadata: { impersonatorKey: 'support-1' },
  })) as Record<string, string>;
  return { sa, apiKey, userToken: String(user.accessToken), jti: String(user.jti), impersonation: String(imp.accessToken) };
};

/** Everything the credentials of `acme` may do, as HTTP statuses. */
const reach = async (c: Creds) => {
  const sa = await saJwt(c.sa);
  return {
    saGetCustomer: await status('GetCustomer', { customerId: 'acme' }, sa),
    saListWorkspaces: await status('ListWorkspaces', { customerId: 'acme' }, sa),
    saPull: (await pull(sa)).status,
    userGetCustomer: await status('GetCustomer', { customerId: 'acme' }, c.userToken),
    userListWorkspaces: await status('ListWorkspaces', { customerId: 'acme' }, c.userToken),
    userChat: await chat(c.userToken),
    impGetCustomer: await status('GetCustomer', { customerId: 'acme' }, c.impersonation),
    impChat: await chat(c.impersonation),
    apiKeyChat: await chat(c.apiKey),
  };
};
const ALL_OK = {
  saGetCustomer: 200,
  saListWorkspaces: 200,
  saPull: 200,
  userGetCustomer: 200,
  userListWorkspaces: 200,
  userChat: 200,
  impGetCustomer: 200,
  impChat: 200,
  apiKeyChat: 200,
};
const ALL_REFUSED = {
  saGetCustomer: 401,
  saListWorkspaces: 401,
  saPull: 401,
  userGetCustomer: 401,
  userListWorkspaces: 401,
  userChat: 401,
  impGetCustomer: 401,
  impChat: 401,
  apiKeyChat: 401,
};

beforeAll(async () => {
  tg = await startTestGateway({ GATEWAY_KEK: KEK });
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

describe('a customer deleted and re-created with the same slug', () => {
  let old: Creds;
  let fresh: Creds;

  test('no credential of the old customer works for the new one; its account reads REVOKED and leaves the JWKS', async () => {
    old = await provision();
    expect(await reach(old)).toEqual(ALL_OK);
    expect(await jwksKids()).toContain(old.sa.privateKeyId);

    await tg.must(admin('DeleteCustomer'), { customerId: 'acme' });
    fresh = await provision();

    expect(await reach(old)).toEqual(ALL_REFUSED);
    expect((await pull(await saJwt(old.sa))).body).toMatchObject({ code: 'unauthenticated', reason: 'revoked' });
    const info = (await tg.must(admin('GetServiceAccount'), { id: old.sa.id })).serviceAccount as Body;
    expect(info.status).toBe('SERVICE_ACCOUNT_STATUS_REVOKED');
    const kids = await jwksKids();
    expect(kids).not.toContain(old.sa.privateKeyId);
    expect(kids).toContain(fresh.sa.privateKeyId);
    // The new tenant's own credentials work.
    expect(await reach(fresh)).toEqual(ALL_OK);
  });

  test("the new tenant's credentials do not reach the old tenant's rows (access is decided on the row id, not the slug)", async () => {
    // Same slug, same user id: only the customer row tells them apart.
    expect((await tg.call(admin('GetServiceAccount'), { id: old.sa.id }, fresh.userToken)).body.code).toBe('permission_denied');
    expect((await tg.call(admin('GetServiceAccount'), { id: old.sa.id }, await saJwt(fresh.sa))).body.code).toBe('permission_denied');
    expect((await tg.call(admin('GetUserToken'), { jti: old.jti }, fresh.userToken)).body.code).toBe('permission_denied');
    // Their own are readable.
    expect((await tg.call(admin('GetServiceAccount'), { id: fresh.sa.id }, fresh.userToken)).status).toBe(200);
    expect((await tg.call(admin('GetUserToken'), { jti: fresh.jti }, fresh.userToken)).status).toBe(200);
  });

  test('an account left unrevoked under a deleted customer (deleted before deletes revoked accounts) is refused all the same', async () => {
    await tg.must(admin('DeleteCustomer'), { customerId: 'acme' });
    // As a store written before this fix would hold it.
    await tg.gw.store.db.update(serviceAccounts).set({ revokedAt: null, revokeReason: null }).where(eq(serviceAccounts.id, fresh.sa.id));
    await tg.must(admin('CreateCustomer'), { customerId: 'acme' });
    await tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge' });
    const jwt = await saJwt(fresh.sa);
    expect(await status('GetCustomer', { customerId: 'acme' }, jwt)).toBe(401);
    expect((await pull(jwt)).body).toMatchObject({ code: 'unauthenticated', reason: 'revoked' });
    expect(await jwksKids()).not.toContain(fresh.sa.privateKeyId);
    expect(((await tg.must(admin('GetServiceAccount'), { id: fresh.sa.id })).serviceAccount as Body).status).toBe(
      'SERVICE_ACCOUNT_STATUS_REVOKED',
    );
    // And it cannot be restored onto the new customer.
    expect((await tg.call(admin('RestoreServiceAccount'), { id: fresh.sa.id })).body.code).toBe('failed_precondition');
  });

  test("a user token without the customer's row id (tenant claim) is refused on the management API and on inference", async () => {
    await tg.must(admin('DeleteCustomer'), { customerId: 'acme' });
    const c = await provision();
    // Signed with the gateway's own active key, with a persisted token's jti, but no `tenant`.
    const [key] = await tg.gw.store.db
      .select()
      .from(signingKeys)
      .where(and(eq(signingKeys.purpose, 'user_token'), isNull(signingKeys.retiredAt)));
    if (!key) throw new Error('no active signing key');
    const claims = decodeJwt(c.userToken);
    expect(claims.tenant).toBeString();
    const { tenant: _dropped, ...rest } = claims;
    const untenanted = await new SignJWT(rest)
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .sign(await importPKCS8(new SecretBox(KEK).unwrap(key.privateKeyWrapped), 'RS256'));
    expect(await status('GetCustomer', { customerId: 'acme' }, c.userToken)).toBe(200);
    expect(await chat(c.userToken)).toBe(200);
    expect(await status('GetCustomer', { customerId: 'acme' }, untenanted)).toBe(401);
    expect(await chat(untenanted)).toBe(401);
  });
});

describe('deleting a workspace', () => {
  test('revokes its service accounts: refused at once, out of the JWKS, not restorable; a re-created workspace does not take them', async () => {
    await tg.must(admin('CreateCustomer'), { customerId: 'wsco' });
    const ws = (await tg.must(admin('CreateWorkspace'), { customerId: 'wsco', workspaceId: 'edge' })).workspace as Body;
    const sa = (await tg.must(admin('CreateServiceAccount'), { customerId: 'wsco', workspaceId: 'edge', scopes: ['read', 'dataplane'] }))
      .serviceAccount as unknown as Sa;
    expect((await pull(await saJwt(sa))).status).toBe(200);
    await tg.must(admin('DeleteWorkspace'), { id: ws.id });
    await tg.must(admin('CreateWorkspace'), { customerId: 'wsco', workspaceId: 'edge' });
    const jwt = await saJwt(sa);
    expect((await pull(jwt)).body).toMatchObject({ code: 'unauthenticated', reason: 'revoked' });
    expect(await status('GetCustomer', { customerId: 'wsco' }, jwt)).toBe(401);
    expect(await jwksKids()).not.toContain(sa.privateKeyId);
    expect(((await tg.must(admin('GetServiceAccount'), { id: sa.id })).serviceAccount as Body).status).toBe(
      'SERVICE_ACCOUNT_STATUS_REVOKED',
    );
    expect((await tg.call(admin('RestoreServiceAccount'), { id: sa.id })).body.code).toBe('failed_precondition');
  });
});
