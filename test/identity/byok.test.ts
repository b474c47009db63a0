import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { byokKeys } from '../../src/store/schema/index.ts';
import { admin, byokOp } from '../support/gateway.ts';
import { startWorld, stopWorld, type World } from '../support/provision.ts';

/**
 * BYOK keys (byok.v1.ByokService): the Register rules, visibility, Fetch, and — end to end, with
 * the mock upstreams recording the credential that arrived — the resolver's preference order:
 * the caller's user-scoped key, then the project-level key, then the route target's connection key.
 */

type Body = Record<string, unknown>;
let w: World;
const tok: Record<string, string> = {};
const ids: Record<string, string> = {};
const ANN_OPENAI = 'sk-ann-own-openai-key-0001';
const PROJECT_OPENAI = 'sk-project-byok-openai-0002';
const PROJECT_ANTHROPIC = 'sk-ant-project-byok-0003';

const issue = async (userId: string) =>
  String(
    (await w.tg.must(admin('CreateUserToken'), { customerId: 'acme', workspaceId: 'ws1', userId, organizationUnit: 'eng', role: 'dev' }))
      .accessToken,
  );
const byok = (op: string, body: Body, token: string) => w.tg.call(byokOp(op), body, token);

const chat = async (model: string, token: string): Promise<number> => {
  const r = await fetch(`${w.tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await r.text();
  return r.status;
};
/** The credential the upstream of `kind` received last. */
const lastOpenai = () => String(w.oa.requests.at(-1)?.headers.authorization);
const lastAnthropic = () => String(w.an.requests.at(-1)?.headers['x-api-key']);

beforeAll(async () => {
  w = await startWorld();
  await w.tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'default', userId: 'owen', role: 'admin' });
  await w.tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'default', userId: 'ann', role: 'member' });
  await w.tg.must(admin('AddProjectMember'), { customerId: 'acme', projectId: 'default', userId: 'max', role: 'member' });
  await w.tg.must(admin('CreateCustomer'), { customerId: 'other' });
  tok.owen = await issue('owen');
  tok.ann = await issue('ann');
  tok.max = await issue('max');
  tok.stranger = String(
    (
      await w.tg.must(admin('CreateUserToken'), {
        customerId: 'other',
        workspaceId: 'ws1',
        userId: 'zoe',
        organizationUnit: 'o',
        role: 'r',
      })
    ).accessToken,
  );
}, 60_000);
afterAll(() => stopWorld(w));

describe('Register', () => {
  test('a project-level key needs the project owner; scope defaults from the session', async () => {
    const denied = await byok('Register', { provider: 'PROVIDER_OPENAI', name: 'team', secret: PROJECT_OPENAI }, tok.ann as string);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('permission_denied');
    const r = await byok('Register', { provider: 'PROVIDER_OPENAI', name: 'team', secret: PROJECT_OPENAI }, tok.owen as string);
    expect(r.status).toBe(200);
    const key = r.body.key as Body;
    expect(key).toMatchObject({
      name: 'team',
      provider: 'PROVIDER_OPENAI',
      customerId: 'acme',
      projectId: 'default',
      displaySuffix: '0002',
      userScope: false,
      scopeUserId: '',
    });
    expect(String(key.id)).toMatch(/^byok_/);
    expect(key.secretRef).toBe(`byok://acme/default/${String(key.id)}`);
    expect(key.revokedAt).toBeUndefined();
    expect(JSON.stringify(r.body)).not.toContain(PROJECT_OPENAI);
    ids.projectOpenai = String(key.id);
  });

  test('a user-scoped key: any member, for themself; never through the platform-admin token', async () => {
    const r = await byok('Register', { provider: 'PROVIDER_OPENAI', name: 'mine', secret: ANN_OPENAI, userScope: true }, tok.ann as string);
    expect(r.status).toBe(200);
    expect(r.body.key).toMatchObject({
      userScope: true,
      scopeUserId: 'ann',
      customerId: 'acme',
      projectId: 'default',
      displaySuffix: '0001',
    });
    ids.annOpenai = String((r.body.key as Body).id);
    const adminUser = await w.tg.call(byokOp('Register'), {
      customerId: 'acme',
      provider: 'PROVIDER_OPENAI',
      name: 'x',
      secret: 'sk-x-1234',
      userScope: true,
    });
    expect(adminUser.body.code).toBe('failed_precondition');
    // the platform admin has no session: customerId is required
    const noScope = await w.tg.call(byokOp('Register'), { provider: 'PROVIDER_OPENAI', name: 'x', secret: 'sk-x-1234' });
    expect(noScope.body.code).toBe('invalid_argument');
    expect(String(noScope.body.message)).toContain('customerId');
    // the platform admin registers project-level keys
    const a = await w.tg.call(byokOp('Register'), {
      customerId: 'acme',
      provider: 'PROVIDER_ANTHROPIC',
      name: 'ant',
      secret: PROJECT_ANTHROPIC,
    });
    expect(a.status).toBe(200);
    ids.projectAnthropic = String((a.body.key as Body).id);
  });

  test('another customer, an unknown provider, a missing secret', async () => {
    const other = await byok(
      'Register',
      { customerId: 'acme', provider: 'PROVIDER_OPENAI', name: 'x', secret: 'sk-x-1234', userScope: true },
      tok.stranger as string,
    );
    expect(other.body.code).toBe('permission_denied');
    for (const bad of [{ provider: 'PROVIDER_UNSPECIFIED' }, { provider: 'PROVIDER_GROQ' }, { secret: '' }]) {
      const r = await byok(
        'Register',
        { provider: 'PROVIDER_OPENAI', name: 'x', secret: 'sk-x-1234', userScope: true, ...bad },
        tok.ann as string,
      );
      expect(r.body.code).toBe('invalid_argument');
    }
  });
});

describe('Get, List, Fetch', () => {
  test('user-scoped keys are private to their owner; project keys visible to every member', async () => {
    const names = async (token: string) => ((await byok('List', {}, token)).body.keys as Body[]).map((k) => k.name).sort();
    expect(await names(tok.ann as string)).toEqual(['ant', 'mine', 'team']);
    expect(await names(tok.owen as string)).toEqual(['ant', 'team']);
    expect(await names(tok.max as string)).toEqual(['ant', 'team']);
    expect((await byok('Get', { id: ids.annOpenai }, tok.owen as string)).body.code).toBe('not_found');
    expect((await byok('Get', { id: ids.annOpenai }, tok.ann as string)).status).toBe(200);
    expect((await byok('Get', { id: ids.projectOpenai }, tok.max as string)).status).toBe(200);
    const all = JSON.stringify((await w.tg.call(byokOp('List'), { customerId: 'acme' })).body);
    for (const s of [ANN_OPENAI, PROJECT_OPENAI, PROJECT_ANTHROPIC]) expect(all).not.toContain(s);
    expect((await w.tg.call(byokOp('List'), { customerId: 'acme' })).body.keys).toHaveLength(3);
  });

  test('Fetch returns the plaintext of an active key to its owner only', async () => {
    const own = await w.tg.call(byokOp('Fetch'), { id: ids.annOpenai }, tok.ann);
    expect(own.body).toEqual({ provider: 'PROVIDER_OPENAI', displaySuffix: '0001', secret: ANN_OPENAI });
    expect((await w.tg.call(byokOp('Fetch'), { id: ids.projectOpenai }, tok.owen)).body.secret).toBe(PROJECT_OPENAI);
    expect((await w.tg.call(byokOp('Fetch'), { id: ids.projectOpenai }, tok.ann)).body.code).toBe('permission_denied');
    expect((await w.tg.call(byokOp('Fetch'), { id: ids.annOpenai }, tok.owen)).body.code).toBe('not_found');
    expect((await w.tg.call(byokOp('Fetch'), { id: ids.annOpenai }, tok.stranger)).body.code).toBe('permission_denied');
    expect((await w.tg.call(byokOp('Fetch'), { id: 'byok_nothing' })).body.code).toBe('not_found');
  });
});

describe('at inference: user key, then project key, then the connection key', () => {
  test('who calls decides which key reaches the upstream', async () => {
    expect(await chat('gpt-mini', tok.ann as string)).toBe(200);
    expect(lastOpenai()).toBe(`Bearer ${ANN_OPENAI}`);
    expect(await chat('gpt-mini', tok.max as string)).toBe(200);
    expect(lastOpenai()).toBe(`Bearer ${PROJECT_OPENAI}`);
    // An API key's owner is a label, not an authenticated user: the project key.
    expect(await chat('gpt-mini', w.p.apiKey)).toBe(200);
    expect(lastOpenai()).toBe(`Bearer ${PROJECT_OPENAI}`);
    expect(await chat('claude-mini', w.p.apiKey)).toBe(200);
    expect(lastAnthropic()).toBe(PROJECT_ANTHROPIC);
  });

  test("the choice is made per attempt: a fallback to another provider takes that provider's key", async () => {
    const m = (await w.tg.must(admin('CreateModel'), { model: 'mix', provider: 'openai', capabilities: ['chat'] })) as {
      model: { id: string };
    };
    await w.tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: 'default', modelId: m.model.id });
    await w.tg.must(admin('CreateRoute'), {
      customerId: 'acme',
      projectId: 'default',
      model: 'mix',
      targets: [
        { connection: 'mock-openai', model: 'gpt-4o-mini', priority: 0 },
        { connection: 'mock-anthropic', model: 'claude-haiku-4-5', priority: 1 },
      ],
    });
    w.oa.script(() => ({ status: 500, errorBody: '{"error":{"message":"down","type":"server_error"}}' }));
    try {
      const before = w.oa.requests.length;
      expect(await chat('mix', tok.ann as string)).toBe(200);
      expect(w.oa.requests.length).toBe(before + 1);
      expect(lastOpenai()).toBe(`Bearer ${ANN_OPENAI}`);
      expect(lastAnthropic()).toBe(PROJECT_ANTHROPIC);
    } finally {
      w.oa.script(undefined);
    }
  });

  test('revoked keys stop being used: back to the project key, then to the connection key', async () => {
    expect((await byok('Revoke', { id: ids.annOpenai }, tok.owen as string)).body.code).toBe('not_found');
    expect((await byok('Revoke', { id: ids.projectOpenai }, tok.ann as string)).body.code).toBe('permission_denied');
    expect((await byok('Revoke', { id: ids.annOpenai }, tok.ann as string)).status).toBe(200);
    expect(await chat('gpt-mini', tok.ann as string)).toBe(200);
    expect(lastOpenai()).toBe(`Bearer ${PROJECT_OPENAI}`);
    expect((await byok('Revoke', { id: ids.projectOpenai }, tok.owen as string)).status).toBe(200);
    expect(await chat('gpt-mini', tok.ann as string)).toBe(200);
    expect(lastOpenai()).toBe('Bearer sk-upstream-openai-secret');
    expect(await chat('gpt-mini', w.p.apiKey)).toBe(200);
    expect(lastOpenai()).toBe('Bearer sk-upstream-openai-secret');
    // Fetch only for an active key; the revoked key is listed with revokedAt.
    expect((await w.tg.call(byokOp('Fetch'), { id: ids.annOpenai }, tok.ann)).body.code).toBe('failed_precondition');
    const got = (await byok('Get', { id: ids.annOpenai }, tok.ann as string)).body.key as Body;
    expect(typeof got.revokedAt).toBe('string');
    // Revoking again changes nothing.
    expect((await byok('Revoke', { id: ids.annOpenai }, tok.ann as string)).status).toBe(200);
  });

  test('deleting the project revokes its BYOK keys', async () => {
    await w.tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'temp' });
    const k = (await w.tg.must(byokOp('Register'), {
      customerId: 'acme',
      projectId: 'temp',
      provider: 'PROVIDER_VERTEX',
      name: 'v',
      secret: 'vertex-json-7777',
    })) as { key: Body };
    await w.tg.must(admin('DeleteProject'), { customerId: 'acme', projectId: 'temp' });
    const f = await w.tg.call(byokOp('Fetch'), { id: k.key.id });
    expect(f.body.code).toBe('not_found');
    const [row] = await w.tg.gw.store.db
      .select({ revokedAt: byokKeys.revokedAt })
      .from(byokKeys)
      .where(eq(byokKeys.id, String(k.key.id)));
    expect(row?.revokedAt).toBeInstanceOf(Date);
  });
});
