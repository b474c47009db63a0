import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { decodeJwt, exportPKCS8, generateKeyPair, importPKCS8, SignJWT } from 'jose';
import { setLogLevel, setLogSink } from '../../src/core/log.ts';
import { SecretBox } from '../../src/core/secrets.ts';
import { signingKeys } from '../../src/store/schema/index.ts';
import { admin, ADMIN_TOKEN, apikeyOp, byokOp } from '../support/gateway.ts';
import { startWorld, stopWorld, type World } from '../support/provision.ts';
import { type Body, documentedOps } from './support.ts';

/**
 * The management API's security suite, generated from the operations the server documents (so a
 * new operation is covered without being remembered): every operation refuses, with
 * `unauthenticated`, each bad credential — none, an expired token, a revoked token, a token for
 * another audience, `alg: none`, a token signed by someone else's key. (The role cells — platform
 * admin, project admin, member, customer member, another customer — are the role matrix in
 * auth.test.ts, one test per operation × role, which fails for an operation missing from it.)
 * Then a scan of every captured log line, response body, error message, record and audit entry,
 * and of every table, for every secret this suite created.
 */

let w: World;
const bad: Record<string, string> = {};
let control = '';
const lines: string[] = [];
/** Every response body the suite saw, except the ones whose purpose is to return a secret once. */
const seen: string[] = [];
const secrets: string[] = [ADMIN_TOKEN];

const post = async (path: string, body: unknown, token?: string) => {
  const res = await fetch(`${w.tg.adminUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as Body };
};

const ops = await (async () => {
  // The operation list comes from the server itself (OpenAPI): computed once, before the tests are declared.
  const { startTestGateway } = await import('../support/gateway.ts');
  const tg = await startTestGateway();
  try {
    // A public operation (ExchangeOidcToken) asks for no credential: test/sso.test.ts covers it.
    return [...(await documentedOps(tg))]
      .filter(([, d]) => d.permission !== 'public')
      .map(([p]) => p)
      .sort();
  } finally {
    await tg.stop();
  }
})();

beforeAll(async () => {
  setLogLevel('debug');
  setLogSink((line) => void lines.push(line));
  w = await startWorld({ GATEWAY_LOG_LEVEL: 'debug' });
  secrets.push(w.p.apiKey, 'sk-upstream-openai-secret', 'sk-ant-upstream-secret', w.tg.gw.config.kek as string);
  await w.tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'default', userId: 'sam', role: 'admin' });
  const issued = await w.tg.must(admin('CreateUserToken'), {
    customerId: 'acme',
    workspaceId: 'w',
    userId: 'sam',
    organizationUnit: 'o',
    role: 'r',
  });
  const jti = String(issued.jti);
  secrets.push(String(issued.accessToken));
  // The gateway's own signing key (from the store, with the gateway's KEK): tokens that differ from a valid one in one way only.
  const [row] = await w.tg.gw.store.db.select().from(signingKeys);
  const kid = String(row?.kid);
  const ours = await importPKCS8(new SecretBox(w.tg.gw.config.kek as string).unwrap(String(row?.privateKeyWrapped)), 'RS256');
  const now = Math.floor(Date.now() / 1000);
  // The customer's row id (`tenant`): a token without it is refused (see recreated-tenant.test.ts).
  const claims = { customer: 'acme', tenant: decodeJwt(String(issued.accessToken)).tenant, scopes: [] };
  const sign = (key: CryptoKey, o: { aud?: string; exp?: number; kid?: string } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: o.kid ?? kid })
      .setIssuer('ai-gateway')
      .setAudience(o.aud ?? 'ai-gateway')
      .setSubject('sam')
      .setJti(jti)
      .setIssuedAt(now - 60)
      .setExpirationTime(o.exp ?? now + 3600)
      .sign(key);
  control = await sign(ours);
  bad.expired = await sign(ours, { exp: now - 10 });
  bad.wrongAudience = await sign(ours, { aud: 'another-service' });
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  bad.algNone = `${enc({ alg: 'none', kid, typ: 'JWT' })}.${enc({ ...claims, iss: 'ai-gateway', aud: 'ai-gateway', sub: 'sam', jti, exp: now + 3600 })}.`;
  const foreign = await generateKeyPair('RS256', { extractable: true });
  expect(await exportPKCS8(foreign.privateKey)).toContain('PRIVATE KEY');
  bad.foreignKey = await sign(foreign.privateKey);
  const revoked = await w.tg.must(admin('CreateUserToken'), {
    customerId: 'acme',
    workspaceId: 'w',
    userId: 'sam',
    organizationUnit: 'o',
    role: 'r',
  });
  await w.tg.must(admin('RevokeUserToken'), { jti: revoked.jti });
  bad.revoked = String(revoked.accessToken);
  bad.none = '';
  secrets.push(control, ...Object.values(bad).filter(Boolean));
}, 60_000);
afterAll(async () => {
  setLogSink(undefined);
  setLogLevel('error');
  await stopWorld(w);
});

test('the harness: the same token, well-formed, is accepted (so each refusal below is about its one defect)', async () => {
  expect(ops.length).toBeGreaterThan(75);
  expect((await post(admin('GetProject'), { customerId: 'acme', projectId: 'default' }, control)).status).toBe(200);
});

describe('every operation × every bad credential: unauthenticated', () => {
  for (const path of ops) {
    for (const cred of ['none', 'expired', 'revoked', 'wrongAudience', 'algNone', 'foreignKey'] as const) {
      test(`${path.split('/').slice(1).join('/')} × ${cred}`, async () => {
        const r = await post(path, {}, bad[cred]);
        seen.push(r.text);
        expect({ status: r.status, code: r.body.code }).toEqual({ status: 401, code: 'unauthenticated' });
      });
    }
  }
});

describe('no secret anywhere', () => {
  test('every log line, response, error, record, audit entry and table is free of every secret the suite created', async () => {
    // Secrets of every kind, through every path: connection keys, BYOK keys (project and user), API keys, user tokens.
    const connKey = 'sk-sec-conn-key-5555555555';
    const projectByok = 'sk-sec-project-byok-6666666';
    const userByok = 'sk-sec-user-byok-7777777777';
    secrets.push(connKey, projectByok, userByok);
    const keep = async (path: string, body: Body, token = ADMIN_TOKEN) => {
      const r = await post(path, body, token);
      seen.push(r.text);
      return r;
    };
    await keep(admin('UpdateProviderConnection'), { customerId: 'acme', projectId: 'default', name: 'mock-openai', apiKey: connKey });
    await keep(byokOp('Register'), { customerId: 'acme', provider: 'PROVIDER_OPENAI', name: 'p', secret: projectByok });
    const sam = await post(
      admin('CreateUserToken'),
      { customerId: 'acme', workspaceId: 'w', userId: 'sam', organizationUnit: 'o', role: 'r' },
      ADMIN_TOKEN,
    );
    const samToken = String(sam.body.accessToken);
    secrets.push(samToken);
    await keep(byokOp('Register'), { provider: 'PROVIDER_OPENAI', name: 'u', secret: userByok, userScope: true }, samToken);
    const k = await post(apikeyOp('CreateApiKey'), { name: 'sec', userId: 'sam', enterpriseContext: { customerId: 'acme' } }, ADMIN_TOKEN);
    secrets.push(String(k.body.apiKey));
    // refusals that carry secrets in their bodies
    await keep(byokOp('Register'), { customerId: 'acme', provider: 'PROVIDER_NONE', name: 'p', secret: projectByok });
    await keep(byokOp('Register'), { customerId: 'ghost', provider: 'PROVIDER_OPENAI', name: 'p', secret: userByok });
    await keep(admin('CreateProviderConnection'), {
      customerId: 'acme',
      projectId: 'default',
      name: 'bad name!',
      provider: 'openai',
      apiKey: connKey,
    });
    // inference with each credential (once the writes above are served); the upstream answers errors that quote the credential it got
    await w.tg.settle();
    w.oa.script((req) => ({
      status: 401,
      errorBody: JSON.stringify({ error: { message: `bad key ${req.headers.authorization}`, type: 'invalid_request_error' } }),
    }));
    try {
      for (const token of [samToken, String(k.body.apiKey), w.p.apiKey]) {
        const r = await fetch(`${w.tg.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'hi' }] }),
        });
        const text = await r.text();
        seen.push(text);
        expect(r.status).toBe(502);
      }
    } finally {
      w.oa.script(undefined);
    }
    const got = w.oa.requests.slice(-3).map((r) => r.headers.authorization);
    expect(got).toEqual([`Bearer ${userByok}`, `Bearer ${projectByok}`, `Bearer ${projectByok}`]);
    await w.tg.gw.records.flush();
    const search = await keep(admin('SearchRequestRecords'), { customerId: 'acme' });
    expect((search.body.records as Body[]).length).toBeGreaterThan(0);
    await keep(admin('QueryAuditLogs'), { pageSize: 1000 });

    const db = w.tg.gw.store.db;
    const rows = async (q: ReturnType<typeof sql>) => {
      const r = (await db.execute(q)) as unknown;
      return (Array.isArray(r) ? r : (r as { rows: Record<string, unknown>[] }).rows) as Record<string, unknown>[];
    };
    const tables = (
      await rows(sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`)
    ).map((r) => String(r.table_name));
    const dump: Record<string, string> = {};
    for (const t of tables) dump[t] = JSON.stringify(await rows(sql.raw(`select * from "${t}"`)));
    const places: Record<string, string> = {
      logs: lines.join('\n'),
      responses: seen.join('\n'),
      ...Object.fromEntries(Object.entries(dump).map(([t, v]) => [`table ${t}`, v])),
    };
    // the scan reads what it should: the tables hold the BYOK rows, the responses were captured
    expect(dump.byok_keys).toContain('7777');
    expect(dump.request_records).toContain('upstream_auth_failed');
    const leaks: string[] = [];
    for (const s of secrets)
      for (const [where, text] of Object.entries(places)) if (s && text.includes(s)) leaks.push(`${s.slice(0, 12)}… in ${where}`);
    expect(leaks).toEqual([]);
  }, 60_000);
});
