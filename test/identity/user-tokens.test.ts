import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { authenticate } from '../../src/pipeline/auth.ts';
import { signingKeys, userTokens } from '../../src/store/schema/index.ts';
import { admin, apikeyOp } from '../support/gateway.ts';
import { startWorld, stopWorld, type World } from '../support/provision.ts';

/**
 * User tokens end to end (Create/Get/Revoke, status, lastUsedAt, impersonation, signing key
 * rotation) and API key revocation, on a running gateway: a revoked credential is refused by the
 * management API at once and by inference within the propagation time.
 */

type Body = Record<string, unknown>;
let w: World;
/** WORKER_POLL_INTERVAL: the propagation time a remote data plane needs at most (the embedded one is woken at once). */
const PROPAGATION_MS = 10_000;

const create = async (userId: string, extra: Body = {}) =>
  (await w.tg.must(admin('CreateUserToken'), {
    customerId: 'acme',
    workspaceId: 'ws1',
    userId,
    organizationUnit: 'eng',
    role: 'dev',
    ...extra,
  })) as Record<string, string>;
const chat = async (token: string): Promise<number> => {
  const r = await fetch(`${w.tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await r.text();
  return r.status;
};
const info = async (jti: string, token?: string) => (await w.tg.call(admin('GetUserToken'), { jti }, token)).body;
/** Milliseconds until `check` holds (polling), failing after the propagation time. */
const within = async (check: () => Promise<boolean>): Promise<number> => {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > PROPAGATION_MS) throw new Error('not within the propagation time');
    await Bun.sleep(50);
  }
  return Date.now() - t0;
};

beforeAll(async () => {
  w = await startWorld();
  await w.tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'default', userId: 'bob', role: 'member' });
  await w.tg.must(admin('CreateCustomer'), { customerId: 'globex' });
}, 60_000);
afterAll(() => stopWorld(w));

describe('GetUserToken and status', () => {
  test('claims and status, never the token; a user sees its own tokens only', async () => {
    const t = await create('bob', { scopes: ['read'] });
    const got = await info(t.jti as string);
    expect(got.token).toMatchObject({
      jti: t.jti,
      userId: 'bob',
      organizationUnit: 'eng',
      role: 'dev',
      status: 'USER_TOKEN_STATUS_ACTIVE',
      expiresAt: t.expiresAt,
    });
    expect(JSON.stringify(got)).not.toContain(t.accessToken as string);
    expect((await info(t.jti as string, t.accessToken)).token).toBeDefined();
    const carol = await create('carol');
    expect((await info(t.jti as string, carol.accessToken)).code).toBe('not_found');
    const zoe = (
      await w.tg.must(admin('CreateUserToken'), { customerId: 'globex', workspaceId: 'w', userId: 'zoe', organizationUnit: 'o', role: 'r' })
    ).accessToken as string;
    expect((await info(t.jti as string, zoe)).code).toBe('permission_denied');
    expect((await info('no-such-jti')).code).toBe('not_found');
    // expiresInDays default: 30 days
    expect(Date.parse(t.expiresAt as string) - Date.now()).toBeGreaterThan(29.9 * 86_400_000);
    expect(t.expiresIn).toBe(String(30 * 86_400));
  });

  test('EXPIRED once expiresAt passed (and refused)', async () => {
    const t = await create('bob');
    await w.tg.gw.store.db
      .update(userTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(userTokens.jti, t.jti as string));
    expect((await info(t.jti as string)).token).toMatchObject({ status: 'USER_TOKEN_STATUS_EXPIRED' });
    expect((await w.tg.call(admin('GetProject'), { customerId: 'acme', projectId: 'default' }, t.accessToken)).status).toBe(401);
  });

  test('lastUsedAt: no database write per request; management and inference use both show', async () => {
    const t = await create('bob');
    expect(((await info(t.jti as string)).token as Body).lastUsedAt).toBeUndefined();
    const t0 = Date.now();
    for (let i = 0; i < 10; i++)
      expect((await w.tg.call(admin('GetProject'), { customerId: 'acme', projectId: 'default' }, t.accessToken)).status).toBe(200);
    // ten authenticated calls, no row write yet (batched: one write per token per flush interval)
    const [row] = await w.tg.gw.store.db
      .select()
      .from(userTokens)
      .where(eq(userTokens.jti, t.jti as string));
    expect(row?.lastUsedAt).toBeNull();
    const used = Date.parse(String(((await info(t.jti as string)).token as Body).lastUsedAt));
    expect(used).toBeGreaterThanOrEqual(t0 - 5);
    // inference use arrives with the request records
    const other = await create('bob');
    const t1 = Date.now();
    expect(await chat(other.accessToken as string)).toBe(200);
    const inf = Date.parse(String(((await info(other.jti as string)).token as Body).lastUsedAt));
    expect(inf).toBeGreaterThanOrEqual(t1 - 5);
  });
});

describe('revocation', () => {
  test('a revoked user token: refused by the management API at once, by inference within the propagation time', async () => {
    const t = await create('bob');
    expect(await chat(t.accessToken as string)).toBe(200);
    const r = await w.tg.must(admin('RevokeUserToken'), { jti: t.jti, reason: 'laptop lost' });
    expect(r.success).toBe(true);
    expect((await w.tg.call(admin('GetProject'), { customerId: 'acme', projectId: 'default' }, t.accessToken)).status).toBe(401);
    const ms = await within(async () => (await chat(t.accessToken as string)) === 401);
    expect(ms).toBeLessThan(PROPAGATION_MS);
    expect((await info(t.jti as string)).token).toMatchObject({
      status: 'USER_TOKEN_STATUS_REVOKED',
      revokedReason: 'laptop lost',
      revokedAt: r.revokedAt,
    });
    // again: nothing changes, the first revocation is kept
    const again = await w.tg.must(admin('RevokeUserToken'), { jti: t.jti, reason: 'other' });
    expect(again.revokedAt).toBe(r.revokedAt);
    expect(((await info(t.jti as string)).token as Body).revokedReason).toBe('laptop lost');
  });

  test("a user revokes its own token; not somebody else's", async () => {
    const mine = await create('bob');
    const carol = await create('carol');
    expect((await w.tg.call(admin('RevokeUserToken'), { jti: mine.jti }, carol.accessToken)).body.code).toBe('not_found');
    expect((await w.tg.call(admin('RevokeUserToken'), { jti: mine.jti }, mine.accessToken)).status).toBe(200);
    expect((await w.tg.call(admin('GetProject'), { customerId: 'acme', projectId: 'default' }, mine.accessToken)).status).toBe(401);
  });

  test('a revoked API key is refused within the propagation time; ListApiKeys pages metadata only', async () => {
    const k = (await w.tg.must(apikeyOp('CreateApiKey'), {
      name: 'rev',
      userId: 'bob',
      userKeyAddress: 'bob@example.com',
      enterpriseContext: { customerId: 'acme' },
    })) as Record<string, string>;
    expect(k.apiKey).toMatch(/^sk-[A-Za-z0-9_-]{32,}$/);
    expect(k.keyAddress).toBe(Bun.hash.xxHash64('bob').toString(16).padStart(16, '0'));
    expect(await chat(k.apiKey as string)).toBe(200);
    await w.tg.must(apikeyOp('RevokeApiKey'), { id: k.id });
    expect(await within(async () => (await chat(k.apiKey as string)) === 401)).toBeLessThan(PROPAGATION_MS);
    const seen: Body[] = [];
    let pageToken = '';
    do {
      const p = await w.tg.must(apikeyOp('ListApiKeys'), {
        customerId: 'acme',
        includeRevoked: true,
        pageSize: 1,
        ...(pageToken ? { pageToken } : {}),
      });
      seen.push(...(p.apiKeys as Body[]));
      pageToken = String(p.nextPageToken);
    } while (pageToken);
    expect(seen.map((x) => x.id)).toContain(k.id);
    expect(seen.find((x) => x.id === k.id)?.revokedAt).toBeDefined();
    const text = JSON.stringify(seen);
    expect(text).not.toContain(k.apiKey as string);
    expect(text).not.toContain('"apiKey"');
  });
});

describe('impersonation and signing keys', () => {
  test('impersonation tokens: not persisted, the metadata in the claims, the metadata required', async () => {
    const t = await create('bob', {
      impersonate: true,
      impersonationMetadata: { impersonatorKey: 'support-7', reason: 'ticket 9', context: { ticket: '9' } },
    });
    expect(decodeJwt(t.accessToken as string)).toMatchObject({
      sub: 'bob',
      imp: true,
      act: { sub: 'support-7', reason: 'ticket 9', ctx: { ticket: '9' } },
    });
    expect((await info(t.jti as string)).code).toBe('not_found');
    expect((await w.tg.call(admin('GetProject'), { customerId: 'acme', projectId: 'default' }, t.accessToken)).status).toBe(200);
    expect(await chat(t.accessToken as string)).toBe(200);
    const bad = await w.tg.call(admin('CreateUserToken'), {
      customerId: 'acme',
      workspaceId: 'w',
      userId: 'bob',
      organizationUnit: 'o',
      role: 'r',
      impersonate: true,
    });
    expect(bad.body.code).toBe('invalid_argument');
  });

  test('rotation: new tokens carry the new kid, live tokens of the old one keep working everywhere', async () => {
    const old = await create('bob');
    const oldKid = String(decodeProtectedHeader(old.accessToken as string).kid);
    const r = await w.tg.must(admin('RotateUserTokenSigningKey'), {});
    expect(r.retiredKid).toBe(oldKid);
    expect(r.kid).not.toBe(oldKid);
    const fresh = await create('bob');
    expect(decodeProtectedHeader(fresh.accessToken as string).kid).toBe(String(r.kid));
    for (const t of [old, fresh]) {
      expect((await w.tg.call(admin('GetProject'), { customerId: 'acme', projectId: 'default' }, t.accessToken)).status).toBe(200);
      expect(await chat(t.accessToken as string)).toBe(200);
    }
    const rows = await w.tg.gw.store.db.select().from(signingKeys).where(eq(signingKeys.purpose, 'user_token'));
    expect(rows.find((k) => k.kid === oldKid)?.retiredAt).toBeInstanceOf(Date);
    expect(rows.find((k) => k.kid === r.kid)?.retiredAt).toBeNull();
    // A key retired longer ago than the longest token lifetime is removed by the next rotation.
    await w.tg.gw.store.db
      .update(signingKeys)
      .set({ retiredAt: new Date(Date.now() - 366 * 86_400_000) })
      .where(eq(signingKeys.kid, oldKid));
    const r2 = await w.tg.must(admin('RotateUserTokenSigningKey'), {});
    expect(r2.deletedKids).toEqual([oldKid]);
    expect(r2.retiredKid).toBe(String(r.kid));
    expect((await w.tg.call(admin('GetProject'), { customerId: 'acme', projectId: 'default' }, fresh.accessToken)).status).toBe(200);
  });
});

describe('verified tokens are remembered, not trusted blindly', () => {
  test('the signature is checked once per token; expiry still holds on every use, and a changed token is checked anew', async () => {
    const t = await create('bob');
    const snapshot = w.tg.gw.snapshots.current;
    if (!snapshot) throw new Error('no snapshot');
    const token = t.accessToken as string;
    const headers = (tok: string) => new Headers({ authorization: `Bearer ${tok}` });
    const now = Date.now();
    const first = await authenticate(headers(token), snapshot, now);
    expect(first).toMatchObject({ userId: 'bob', projectId: 'default' });
    // Remembered: the same answer again.
    expect((await authenticate(headers(token), snapshot, now)).id).toBe(first.id);
    // A snapshot without its signing key (the key deleted after a rotation): refused, remembered or not.
    const keyless = { ...snapshot, userTokenKeys: new Map<string, string>() };
    await expect(Promise.resolve().then(() => authenticate(headers(token), keyless, now))).rejects.toMatchObject({
      message: 'Invalid API key or user token.',
    });
    // Past its exp the remembered token is refused like any other.
    const exp = Number(decodeJwt(token).exp) * 1000;
    await expect(Promise.resolve().then(() => authenticate(headers(token), snapshot, exp + 1000))).rejects.toMatchObject({
      message: 'Invalid or expired user token.',
    });
    // A token never seen, presented after its exp: refused by the signature check's own time test.
    const late = (await create('bob')).accessToken as string;
    await expect(
      Promise.resolve().then(() => authenticate(headers(late), snapshot, Number(decodeJwt(late).exp) * 1000 + 1000)),
    ).rejects.toMatchObject({ message: 'Invalid or expired user token.' });
    // The remembered token with its signature altered is another string: checked, and refused.
    const [h, p, sig] = token.split('.');
    const forged = `${h}.${p}.${(sig as string).slice(0, -4)}${(sig as string).endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    await expect(Promise.resolve().then(() => authenticate(headers(forged), snapshot, now))).rejects.toMatchObject({
      message: 'Invalid or expired user token.',
    });
    // Revocation is read from the snapshot on every use, remembered or not.
    await w.tg.must(admin('RevokeUserToken'), { jti: t.jti });
    const after = w.tg.gw.snapshots.current;
    if (!after) throw new Error('no snapshot');
    await expect(Promise.resolve().then(() => authenticate(headers(token), after, Date.now()))).rejects.toMatchObject({
      message: 'This user token has been revoked.',
    });
  });
});
