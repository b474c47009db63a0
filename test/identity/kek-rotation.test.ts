import { afterAll, expect, test } from 'bun:test';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { type Gateway, startGateway } from '../../src/app.ts';
import { loadConfig } from '../../src/config/env.ts';
import { generateKek, SecretBox } from '../../src/core/secrets.ts';
import { rewrapStore, staleWrapped, wrappedColumns } from '../../src/store/rewrap.ts';
import { testDatabase } from '../support/db.ts';
import { admin, ADMIN_TOKEN, byokOp } from '../support/gateway.ts';
import { startMockUpstream } from '../support/mock-upstreams.ts';

/**
 * KEK rotation: start under KEK A; restart under B with A as previous (everything still readable,
 * new secrets wrapped under B); re-wrap the store while that gateway serves; then the command
 * (`bun run kek:rotate`) rotates again to C; restart with C alone: every wrapped secret of the store
 * decrypts, the connection key reaches the upstream, the BYOK keys fetch, the signing key signs,
 * and neither A nor B is needed.
 */

const db = await testDatabase();
const dir = mkdtempSync(join(tmpdir(), 'gw-kek-'));
const oa = startMockUpstream('openai');
const [A, B, C] = [generateKek(), generateKek(), generateKek()];
const CONN_KEY = 'sk-upstream-rotation-secret-1';
const BYOK_1 = 'sk-byok-rotation-before-0001';
const BYOK_2 = 'sk-byok-rotation-during-0002';

afterAll(async () => {
  oa.stop();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (kek: string, previous?: string): Record<string, string> => ({
  GATEWAY_PORT: '0',
  GATEWAY_ADMIN_PORT: '0',
  GATEWAY_DATA_DIR: dir,
  GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
  GATEWAY_DEMO: '0',
  GATEWAY_LOG_LEVEL: 'error',
  GATEWAY_SHUTDOWN_GRACE: '1s',
  GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1',
  GATEWAY_KEK: kek,
  ...(previous ? { GATEWAY_KEK_PREVIOUS: previous } : {}),
  ...(db.url ? { DATABASE_URL: db.url } : {}),
});
const start = (kek: string, previous?: string) => startGateway(loadConfig([], env(kek, previous)));

const call = async (gw: Gateway, path: string, body: unknown, token = ADMIN_TOKEN) => {
  const r = await fetch(`${gw.adminUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const json = (await r.json()) as Record<string, unknown>;
  if (r.status !== 200) throw new Error(`${path} → ${r.status} ${JSON.stringify(json)}`);
  // A write returns at commit: wait until the embedded data plane serves it.
  await gw.controller.settled();
  return json;
};
/** One inference call with the user token; returns the credential the upstream received. */
const infer = async (gw: Gateway, token: string): Promise<string> => {
  const r = await fetch(`${gw.inferenceUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'rot-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(r.status).toBe(200);
  await r.text();
  return String(oa.requests.at(-1)?.headers.authorization);
};
const rowsOf = (r: unknown) => (Array.isArray(r) ? r : (r as { rows: Record<string, unknown>[] }).rows) as Record<string, unknown>[];
/** Every wrapped value of the store. */
const allWrapped = async (gw: Gateway): Promise<string[]> => {
  const out: string[] = [];
  for (const { table, column } of await wrappedColumns(gw.store.db)) {
    const r = await gw.store.db.execute(sql.raw(`select "${column}" as v from "${table}" where "${column}" is not null`));
    out.push(...rowsOf(r).map((x) => String(x.v)));
  }
  return out;
};
/** The legacy form (v1: directly under a KEK), as stores written before envelope encryption hold it. */
const legacyWrap = (kek: string, plaintext: string): string => {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', Buffer.from(kek, 'base64'), iv);
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return `v1:${Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64')}`;
};

test('rotate, restart, every wrapped secret still decrypts, the old KEK no longer needed', async () => {
  // 1. under A: a connection key (then rewritten in the legacy v1 form), a BYOK key, a signing key
  let gw = await start(A);
  await call(gw, admin('CreateCustomer'), { customerId: 'rot' });
  await call(gw, admin('AddProjectMember'), { customerId: 'rot', projectId: 'default', userId: 'ursula', role: 'admin' });
  const m = (await call(gw, admin('CreateModel'), { model: 'rot-model', provider: 'openai', capabilities: ['chat'] })) as {
    model: { id: string };
  };
  await call(gw, admin('AddProjectModel'), { customerId: 'rot', projectId: 'default', modelId: m.model.id });
  await call(gw, admin('CreateProviderConnection'), {
    customerId: 'rot',
    projectId: 'default',
    name: 'up',
    provider: 'openai',
    baseUrl: `${oa.url}/v1`,
    apiKey: CONN_KEY,
  });
  await call(gw, admin('CreateRoute'), {
    customerId: 'rot',
    projectId: 'default',
    model: 'rot-model',
    targets: [{ connection: 'up', model: 'gpt-4o-mini' }],
  });
  await gw.store.db.execute(sql`update provider_connections set api_key_wrapped = ${legacyWrap(A, CONN_KEY)}`);
  const token = String(
    (await call(gw, admin('CreateUserToken'), { customerId: 'rot', workspaceId: 'w', userId: 'ursula', organizationUnit: 'o', role: 'r' }))
      .accessToken,
  );
  const k1 = (
    (await call(gw, byokOp('Register'), { customerId: 'rot', provider: 'PROVIDER_ANTHROPIC', name: 'one', secret: BYOK_1 })).key as {
      id: string;
    }
  ).id;
  await gw.stop();

  // 2. under B with A as previous: A's secrets are read, new ones are wrapped under B
  gw = await start(B, A);
  expect(await infer(gw, token)).toBe(`Bearer ${CONN_KEY}`);
  expect((await call(gw, byokOp('Fetch'), { id: k1 })).secret).toBe(BYOK_1);
  const k2 = (
    (await call(gw, byokOp('Register'), { customerId: 'rot', provider: 'PROVIDER_OPENAI', name: 'two', secret: BYOK_2 })).key as {
      id: string;
    }
  ).id;
  expect(await infer(gw, token)).toBe(`Bearer ${BYOK_2}`);
  const ringB = new SecretBox(B, [A]);
  expect(await staleWrapped(gw.store.db, ringB)).toBeGreaterThanOrEqual(3);
  // re-wrap while this gateway serves: no downtime
  const serving = Promise.all(Array.from({ length: 5 }, () => infer(gw, token)));
  const report = await rewrapStore(gw.store.db, ringB);
  expect(await serving).toEqual(Array(5).fill(`Bearer ${BYOK_2}`));
  expect(report.failed).toEqual([]);
  expect(report.columns.map((c) => `${c.table}.${c.column}`)).toEqual(
    expect.arrayContaining([
      'byok_keys.secret_wrapped',
      'mcp_server_credentials.auth_value_wrapped',
      'mcp_servers.auth_value_wrapped',
      'provider_connections.api_key_wrapped',
      'signing_keys.private_key_wrapped',
    ]),
  );
  expect(await staleWrapped(gw.store.db, ringB)).toBe(0);
  for (const v of await allWrapped(gw)) expect(() => new SecretBox(B).unwrap(v)).not.toThrow();
  await gw.stop();

  // 3. the command rotates to C (B previous), with the gateway stopped (embedded database: one process at a time)
  const cmd = Bun.spawn(['bun', 'src/kek-rotate.ts'], { env: { ...process.env, ...env(C, B) }, stdout: 'pipe', stderr: 'pipe' });
  const out = await new Response(cmd.stdout).text();
  const code = await cmd.exited;
  expect({ code, err: await new Response(cmd.stderr).text() }).toEqual({ code: 0, err: '' });
  expect(out).toContain('left under an old KEK 0');
  for (const s of [A, B, C, CONN_KEY, BYOK_1, BYOK_2]) expect(out).not.toContain(s);

  // 4. under C alone: everything decrypts
  gw = await start(C);
  try {
    for (const v of await allWrapped(gw)) expect(() => new SecretBox(C).unwrap(v)).not.toThrow();
    expect((await call(gw, byokOp('Fetch'), { id: k1 })).secret).toBe(BYOK_1);
    expect((await call(gw, byokOp('Fetch'), { id: k2 })).secret).toBe(BYOK_2);
    await call(gw, byokOp('Revoke'), { customerId: 'rot', id: k2 });
    expect(await infer(gw, token)).toBe(`Bearer ${CONN_KEY}`);
    // the signing key's private key unwraps: a new token is signed and works
    const fresh = String(
      (
        await call(gw, admin('CreateUserToken'), {
          customerId: 'rot',
          workspaceId: 'w',
          userId: 'ursula',
          organizationUnit: 'o',
          role: 'r',
        })
      ).accessToken,
    );
    expect(await infer(gw, fresh)).toBe(`Bearer ${CONN_KEY}`);
    // the old KEKs unwrap nothing any more
    const [one] = await allWrapped(gw);
    expect(() => new SecretBox(B, [A]).unwrap(String(one))).toThrow();
  } finally {
    await gw.stop();
  }
}, 120_000);

test('a secret under an unknown KEK names the setting; a bad GATEWAY_KEK_PREVIOUS stops start-up', () => {
  const wrapped = new SecretBox(A).wrap('x');
  expect(() => new SecretBox(B).unwrap(wrapped)).toThrow(/GATEWAY_KEK_PREVIOUS/);
  expect(new SecretBox(B, [A]).unwrap(wrapped)).toBe('x');
  expect(() => loadConfig([], { GATEWAY_KEK: B, GATEWAY_KEK_PREVIOUS: 'short' })).toThrow(/GATEWAY_KEK_PREVIOUS/);
  expect(() => loadConfig([], { GATEWAY_KEK_PREVIOUS: A })).toThrow(/GATEWAY_KEK/);
});
