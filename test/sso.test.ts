import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPair, SignJWT } from 'jose';
import { ConfigError, loadConfig } from '../src/config/env.ts';
import { setLogLevel, setLogSink } from '../src/core/log.ts';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import { startIdp, type TestIdp } from './support/oidc-idp.ts';

/**
 * ExchangeOidcToken (contract §16) against a real OpenID Provider (oidc-provider) started here: the
 * gateway discovers it and fetches its JWKS; ID tokens are minted with the provider's own key (a
 * valid one) and with others (refused, and logged with the reason).
 */

let idp: TestIdp;
let tg: TestGateway;
const logs: string[] = [];
const ALICE = 'alice@example.com';
const ROOT = 'root@example.com';

beforeAll(async () => {
  idp = await startIdp();
  tg = await startTestGateway({
    GATEWAY_OIDC_ISSUER: idp.issuer,
    GATEWAY_OIDC_CLIENT_ID: idp.clientId,
    GATEWAY_OIDC_CLIENT_SECRET: idp.clientSecret,
    GATEWAY_OIDC_ADMIN_GROUP: 'gateway-admins',
    GATEWAY_LOG_LEVEL: 'warn',
  });
  idp.setRedirectUri(`${tg.adminUrl}/console/sso/callback`);
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'web' });
  await tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'web', userId: ALICE, role: 'admin' });
  // The refusals are logged at warn: whatever level a test file before this one left.
  setLogLevel('warn');
  setLogSink((line) => void logs.push(line));
}, 60_000);

afterAll(async () => {
  setLogSink(undefined);
  setLogLevel('error');
  await tg?.stop();
  await idp?.close();
});

const now = () => Math.floor(Date.now() / 1000);

/** An ID token as the provider would issue it, with `over` changing claims, and the key/kid/alg chosen. */
const mint = async (
  over: Record<string, unknown> = {},
  o: { key?: CryptoKey; kid?: string; alg?: string; secret?: Uint8Array } = {},
): Promise<string> => {
  const claims = { iss: idp.issuer, aud: idp.clientId, sub: 'acc-1', email: ALICE, iat: now(), exp: now() + 300, ...over };
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: o.alg ?? 'RS256', kid: o.kid ?? idp.kid, typ: 'JWT' });
  return o.secret ? jwt.sign(o.secret) : jwt.sign(o.key ?? idp.signingKey);
};

const exchange = (idToken: string, extra: Record<string, unknown> = {}) => tg.call(admin('ExchangeOidcToken'), { idToken, ...extra }, '');

const tokensOfAlice = async (): Promise<number> => {
  const r = await tg.must(admin('ListUserTokens'), { customerId: 'acme', userId: ALICE, includeRevoked: true });
  return Array.isArray(r.tokens) ? r.tokens.length : -1;
};

test('a valid ID token of the issuer becomes a user token of the member with its project roles', async () => {
  const r = await exchange(await mint());
  expect(r.status).toBe(200);
  expect(r.body.userId).toBe(ALICE);
  expect(r.body.admin).toBe(false);
  expect(r.body.customerId).toBe('acme');
  const token = String(r.body.token);
  // The token calls the management API as the user: its project is visible, another customer's call is not.
  const projects = await tg.call(admin('ListProjects'), { customerId: 'acme' }, token);
  expect(projects.status).toBe(200);
  expect(JSON.stringify(projects.body)).toContain('"web"');
  expect((await tg.call(admin('ListCustomers'), {}, token)).status).toBe(403);
  // Persisted: listed, and revocable (refused at once after).
  const listed = await tg.must(admin('ListUserTokens'), { customerId: 'acme', userId: ALICE });
  const jti = JSON.parse(atob(token.split('.')[1] ?? '')).jti;
  expect(JSON.stringify(listed.tokens)).toContain(jti);
  expect((await tg.call(admin('RevokeUserToken'), { jti, reason: 'test' }, token)).status).toBe(200);
  expect((await tg.call(admin('ListProjects'), { customerId: 'acme' }, token)).status).toBe(401);
});

test('a member of the admin group signs in as a platform admin', async () => {
  const r = await exchange(await mint({ email: ROOT, groups: ['staff', 'gateway-admins'] }));
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ userId: ROOT, admin: true, customerId: '' });
  expect((await tg.call(admin('ListCustomers'), {}, String(r.body.token))).status).toBe(200);
  // The same user without the group is no member anywhere: refused.
  const plain = await exchange(await mint({ email: ROOT, groups: ['staff'] }));
  expect(plain.status).toBe(403);
  expect(String(plain.body.message)).toContain('not a member of any project');
});

test('an ID token within the clock skew is accepted', async () => {
  const r = await exchange(await mint({ exp: now() - 30, iat: now() - 330 }));
  expect(r.status).toBe(200);
});

const refused: [string, () => Promise<string>, RegExp][] = [
  ['for another audience', () => mint({ aud: 'another-client' }), /claim 'aud'/],
  ['expired', () => mint({ exp: now() - 600, iat: now() - 900 }), /expired/],
  ['of another issuer', () => mint({ iss: 'https://evil.example.com' }), /claim 'iss'/],
  [
    'unsigned (alg: none)',
    async () => {
      const [h, p] = (await mint()).split('.');
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      return `${header}.${p ?? h}.`;
    },
    /algorithm 'none' not allowed/,
  ],
  [
    'HMAC-signed with the client secret',
    () => mint({}, { alg: 'HS256', secret: new TextEncoder().encode(idp.clientSecret) }),
    /algorithm 'HS256' not allowed/,
  ],
  [
    'signed by another key under the issuer key id',
    async () => mint({}, { key: (await generateKeyPair('RS256')).privateKey }),
    /signature does not verify/,
  ],
  [
    'signed by another key of an unknown key id',
    async () => mint({}, { key: (await generateKeyPair('RS256')).privateKey, kid: 'attacker' }),
    /not signed by a key of the issuer/,
  ],
  ['without the user claim', () => mint({ email: undefined }), /claim 'email' missing/],
  ['for several audiences without azp', () => mint({ aud: [idp.clientId, 'other'] }), /claim 'azp' missing/],
  ['not a JWT', async () => 'not-a-token', /not a signed JWT/],
];

for (const [what, make, reason] of refused)
  test(`an ID token ${what} is refused, logged with the reason, and issues nothing`, async () => {
    const before = await tokensOfAlice();
    logs.length = 0;
    const token = await make();
    const r = await exchange(token);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthenticated');
    expect(String(r.body.message)).toMatch(reason);
    const line = logs.find((l) => l.includes('ID token refused'));
    expect(line).toBeDefined();
    expect(line ?? '').toMatch(reason);
    // The token is never logged.
    expect(logs.join('')).not.toContain(token);
    expect(await tokensOfAlice()).toBe(before);
  });

test('refused exchanges are audited without the ID token', async () => {
  const token = await mint({ aud: 'another-client' });
  await exchange(token);
  const r = await tg.must(admin('QueryAuditLogs'), { pageSize: 50, success: false });
  const text = JSON.stringify(r);
  expect(text).toContain('ExchangeOidcToken');
  expect(text).not.toContain(token);
});

test('without an issuer configured the exchange is failed_precondition; an http issuer off loopback stops start-up', async () => {
  const plain = await startTestGateway();
  try {
    const r = await plain.call(admin('ExchangeOidcToken'), { idToken: 'x.y.z' }, '');
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('failed_precondition');
  } finally {
    await plain.stop();
  }
  expect(() => loadConfig([], { GATEWAY_OIDC_ISSUER: 'http://idp.example.com', GATEWAY_OIDC_CLIENT_ID: 'x' })).toThrow(ConfigError);
  expect(() => loadConfig([], { GATEWAY_OIDC_ISSUER: 'http://idp.example.com', GATEWAY_OIDC_CLIENT_ID: 'x' })).toThrow(/loopback/);
  expect(() => loadConfig([], { GATEWAY_OIDC_ISSUER: 'https://idp.example.com' })).toThrow(/GATEWAY_OIDC_CLIENT_ID/);
});

test('MCP protected-resource metadata (RFC 9728) names the configured OIDC issuer in authorization_servers', async () => {
  const res = await fetch(`${tg.url}/.well-known/oauth-protected-resource/mcp/tools`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({
    resource: `${tg.url}/mcp/tools`,
    bearer_methods_supported: ['header'],
    authorization_servers: [idp.issuer],
  });
});

test('without GATEWAY_PUBLIC_URL the redirect URI is the listener URL; X-Forwarded-Host and -Proto do not steer it', async () => {
  const res = await fetch(`${tg.adminUrl}/console/sso/login`, {
    redirect: 'manual',
    headers: { 'x-forwarded-host': 'attacker.example', 'x-forwarded-proto': 'https', forwarded: 'host=attacker.example;proto=https' },
  });
  expect(res.status).toBe(302);
  const authorization = new URL(res.headers.get('location') ?? '');
  expect(authorization.searchParams.get('redirect_uri')).toBe(`${tg.adminUrl}/console/sso/callback`);
  // Plain HTTP end to end: the flow cookie is not marked Secure.
  expect(res.headers.getSetCookie().find((c) => c.startsWith('gateway_sso=')) ?? '').not.toContain('Secure');
});
