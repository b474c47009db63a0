import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import type { Body } from './support.ts';

/**
 * ListServiceAccounts, ListTelemetryConfigs and ListUserTokens: paged like every list (keyset,
 * oldest first, nextPageToken), revoked entries left out unless asked for, and a user sees only
 * what its Get would show it (its customer's accounts, its own tokens).
 */

let tg: TestGateway;
const ok = async (op: string, body: Body) => (await tg.must(admin(op), body)) as Record<string, Body>;
const tokenFor = async (userId: string, customerId: string): Promise<{ jti: string; accessToken: string }> => {
  const r = await tg.must(admin('CreateUserToken'), { customerId, workspaceId: 'ws1', userId, organizationUnit: 'eng', role: 'developer' });
  return { jti: String(r.jti), accessToken: String(r.accessToken) };
};

/** Every page of a list, following nextPageToken. */
const all = async (op: string, body: Body, field: string, token?: string): Promise<Body[]> => {
  const out: Body[] = [];
  let pageToken = '';
  for (let i = 0; i < 50; i++) {
    const r = await tg.call(admin(op), { ...body, pageSize: 2, ...(pageToken ? { pageToken } : {}) }, token);
    expect(r.status).toBe(200);
    const items = r.body[field] as Body[];
    expect(items.length).toBeLessThanOrEqual(2);
    out.push(...items);
    pageToken = String(r.body.nextPageToken);
    if (!pageToken) return out;
  }
  throw new Error('paging did not end');
};

beforeAll(async () => {
  tg = await startTestGateway();
  for (const c of ['acme', 'globex']) {
    await ok('CreateCustomer', { customerId: c });
    await ok('CreateWorkspace', { customerId: c, workspaceId: 'ws1' });
  }
  await ok('CreateWorkspace', { customerId: 'acme', workspaceId: 'ws2' });
  await ok('AddProjectMember', { customerId: 'acme', projectId: 'default', userId: 'bob', role: 'member' });
}, 60_000);
afterAll(async () => tg?.stop());

describe('ListServiceAccounts', () => {
  test('pages every account of the customer, oldest first; revoked only on request; workspace filter; never a private key', async () => {
    const ids: string[] = [];
    for (const ws of ['ws1', 'ws1', 'ws2', 'ws1', 'ws2'])
      ids.push(String(((await ok('CreateServiceAccount', { customerId: 'acme', workspaceId: ws })).serviceAccount as Body).id));
    await ok('CreateServiceAccount', { customerId: 'globex', workspaceId: 'ws1' });
    await ok('RevokeServiceAccount', { id: ids[1], reason: 'test' });

    const live = await all('ListServiceAccounts', { customerId: 'acme' }, 'serviceAccounts');
    expect(live.map((a) => a.id)).toEqual(ids.filter((_, i) => i !== 1));
    expect(live.every((a) => a.status === 'SERVICE_ACCOUNT_STATUS_ACTIVE' && a.customerId === 'acme' && !('privateKey' in a))).toBe(true);
    const withRevoked = await all('ListServiceAccounts', { customerId: 'acme', includeRevoked: true }, 'serviceAccounts');
    expect(withRevoked.map((a) => a.id)).toEqual(ids);
    expect(withRevoked[1]?.status).toBe('SERVICE_ACCOUNT_STATUS_REVOKED');
    const ws2 = await all('ListServiceAccounts', { customerId: 'acme', workspaceId: 'ws2' }, 'serviceAccounts');
    expect(ws2.map((a) => a.id)).toEqual([ids[2], ids[4]]);
  });

  test("a user of the customer lists its customer's accounts; another customer's user is denied", async () => {
    const bob = (await tokenFor('bob', 'acme')).accessToken;
    const r = await tg.call(admin('ListServiceAccounts'), { customerId: 'acme' }, bob);
    expect(r.status).toBe(200);
    expect((r.body.serviceAccounts as Body[]).length).toBeGreaterThan(0);
    expect((await tg.call(admin('ListServiceAccounts'), { customerId: 'globex' }, bob)).body.code).toBe('permission_denied');
  });
});

describe('ListTelemetryConfigs', () => {
  test('pages every config, filters by type, never returns authValue', async () => {
    const made: string[] = [];
    for (const telemetryType of ['traces', 'metrics', 'traces', 'logs', 'traces']) {
      const c = await ok('CreateTelemetryConfig', {
        userId: 'ops',
        telemetryType,
        sinkUrl: 'http://sink.invalid:1',
        protocol: 'http/json',
        authType: 'bearer',
        authValue: 'sk-sink-secret-777',
      });
      made.push(String((c.config as Body).id));
    }
    const every = await all('ListTelemetryConfigs', {}, 'configs');
    expect(every.map((c) => c.id)).toEqual(made);
    expect(JSON.stringify(every)).not.toContain('sk-sink-secret-777');
    const traces = await all('ListTelemetryConfigs', { telemetryType: 'traces' }, 'configs');
    expect(traces.map((c) => c.id)).toEqual([made[0], made[2], made[4]]);
    const bob = (await tokenFor('bob', 'acme')).accessToken;
    expect((await tg.call(admin('ListTelemetryConfigs'), {}, bob)).body.code).toBe('permission_denied');
  });
});

describe('ListUserTokens', () => {
  test('the admin pages every token of a customer; a user sees only its own; revoked only on request', async () => {
    const bobTokens = [await tokenFor('bob', 'acme'), await tokenFor('bob', 'acme'), await tokenFor('bob', 'acme')];
    const carol = await tokenFor('carol', 'acme');
    await tokenFor('dave', 'globex');
    await ok('RevokeUserToken', { jti: bobTokens[1]?.jti, reason: 'lost' });

    const acme = await all('ListUserTokens', { customerId: 'acme' }, 'tokens');
    const jtis = acme.map((t) => t.jti);
    expect(jtis).toContain(carol.jti);
    expect(jtis).toContain(bobTokens[0]?.jti);
    expect(jtis).not.toContain(bobTokens[1]?.jti);
    expect(acme.every((t) => t.status === 'USER_TOKEN_STATUS_ACTIVE' && !('accessToken' in t))).toBe(true);
    const bobAll = await all('ListUserTokens', { customerId: 'acme', userId: 'bob', includeRevoked: true }, 'tokens');
    expect(bobAll.map((t) => t.jti)).toEqual(expect.arrayContaining(bobTokens.map((t) => t.jti)));
    expect(bobAll.find((t) => t.jti === bobTokens[1]?.jti)?.revokedReason).toBe('lost');

    // bob with his own token: only bob's tokens, even when asking for carol's.
    const asBob = await all('ListUserTokens', { customerId: 'acme' }, 'tokens', bobTokens[0]?.accessToken);
    expect(asBob.length).toBeGreaterThanOrEqual(2);
    expect(asBob.every((t) => t.userId === 'bob')).toBe(true);
    expect(await all('ListUserTokens', { customerId: 'acme', userId: 'carol' }, 'tokens', bobTokens[0]?.accessToken)).toEqual([]);
    expect((await tg.call(admin('ListUserTokens'), { customerId: 'globex' }, bobTokens[0]?.accessToken)).body.code).toBe(
      'permission_denied',
    );
  });
});
