import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { gt } from 'drizzle-orm';
import { configChanges } from '../../src/store/schema/index.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from '../support/gateway.ts';
import type { Body } from './support.ts';

/**
 * Customers, projects and assignments: unique slugs, the default project, update semantics, soft
 * delete (and its cascade, down to the inference keys), and the configuration-change records.
 */

let tg: TestGateway;
beforeAll(async () => {
  tg = await startTestGateway();
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

const ok = async (op: string, body: Body) => (await tg.must(admin(op), body)) as Record<string, Body>;
const fail = async (op: string, body: Body, code: string) => {
  const r = await tg.call(admin(op), body);
  expect({ op, code: r.body.code }).toEqual({ op, code });
  return r;
};

const lastChangeId = async (): Promise<number> => {
  const rows = await tg.gw.store.db.select({ id: configChanges.id }).from(configChanges);
  return rows.reduce((m, r) => Math.max(m, r.id), 0);
};
const changesAfter = async (id: number) => tg.gw.store.db.select().from(configChanges).where(gt(configChanges.id, id));

/** Echo-served project with an API key; returns the key. */
const servedProject = async (customerId: string, projectId: string): Promise<string> => {
  const model = `echo-${customerId}-${projectId}`;
  const m = await ok('CreateModel', { model, provider: 'echo', capabilities: ['chat'] });
  await ok('AddProjectModel', { customerId, projectId, modelId: (m.model as Body).id });
  await ok('CreateProviderConnection', { customerId, projectId, name: 'echo', provider: 'echo' });
  await ok('CreateRoute', { customerId, projectId, model, targets: [{ connection: 'echo', model: 'echo' }] });
  const key = (await tg.must(apikeyOp('CreateApiKey'), { name: 'k', userId: 'u', enterpriseContext: { customerId, projectId } })) as {
    apiKey: string;
  };
  return key.apiKey;
};
const chat = (key: string, model: string) =>
  fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('customers', () => {
  test('create → get → list → update → delete, with the default project from the start', async () => {
    const created = (
      await ok('CreateCustomer', { customerId: 'c-life', name: 'Life', description: 'd', labels: { tier: 'gold', region: 'eu' } })
    ).customer as Body;
    expect(created).toMatchObject({ customerId: 'c-life', name: 'Life', description: 'd', labels: { tier: 'gold', region: 'eu' } });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.deletedAt).toBeUndefined();
    expect(Date.parse(String(created.createdAt))).not.toBeNaN();
    const def = (await ok('GetProject', { customerId: 'c-life', projectId: 'default' })).project as Body;
    expect(def.projectId).toBe('default');
    expect(((await ok('GetCustomer', { customerId: 'c-life' })).customer as Body).id).toBe(created.id);

    // unset and null leave values unchanged; labels given replaces the set
    const u1 = (await ok('UpdateCustomer', { customerId: 'c-life', name: null })).customer as Body;
    expect(u1).toMatchObject({ name: 'Life', description: 'd', labels: { tier: 'gold', region: 'eu' } });
    const u2 = (await ok('UpdateCustomer', { customerId: 'c-life', labels: { tier: 'silver' } })).customer as Body;
    expect(u2.labels).toEqual({ tier: 'silver' });
    expect(u2.name).toBe('Life');
    expect(Date.parse(String(u2.updatedAt))).toBeGreaterThanOrEqual(Date.parse(String(created.updatedAt)));
    const u3 = (await ok('UpdateCustomer', { customerId: 'c-life', name: '', labels: {} })).customer as Body;
    expect(u3).toMatchObject({ name: '', labels: {}, description: 'd' });

    const del = (await ok('DeleteCustomer', { customerId: 'c-life' })) as Body;
    expect(del.success).toBe(true);
    expect(Date.parse(String(del.deletedAt))).not.toBeNaN();
    await fail('GetCustomer', { customerId: 'c-life' }, 'not_found');
    await fail('UpdateCustomer', { customerId: 'c-life', name: 'x' }, 'not_found');
    await fail('DeleteCustomer', { customerId: 'c-life' }, 'not_found');
    await fail('GetProject', { customerId: 'c-life', projectId: 'default' }, 'not_found');
    await fail('CreateProject', { customerId: 'c-life', projectId: 'p' }, 'not_found');
    const list = (await ok('ListCustomers', { pageSize: 1000 })).customers as unknown as Body[];
    expect(list.some((c) => c.customerId === 'c-life')).toBe(false);
  });

  test('slugs are unique among active customers; a deleted slug may be reused by a new customer', async () => {
    const first = (await ok('CreateCustomer', { customerId: 'c-reuse' })).customer as Body;
    await fail('CreateCustomer', { customerId: 'c-reuse' }, 'already_exists');
    await ok('CreateProject', { customerId: 'c-reuse', projectId: 'old' });
    await ok('DeleteCustomer', { customerId: 'c-reuse' });
    const second = (await ok('CreateCustomer', { customerId: 'c-reuse' })).customer as Body;
    expect(second.id).not.toBe(first.id);
    // the new customer starts clean: a fresh default project, none of the old projects
    await ok('GetProject', { customerId: 'c-reuse', projectId: 'default' });
    await fail('GetProject', { customerId: 'c-reuse', projectId: 'old' }, 'not_found');
  });

  test('deleting a customer cascades to projects, workspaces, data planes and project gateways, and its keys stop working', async () => {
    await ok('CreateCustomer', { customerId: 'c-cascade' });
    await ok('CreateProject', { customerId: 'c-cascade', projectId: 'p1' });
    const ws = (await ok('CreateWorkspace', { customerId: 'c-cascade', workspaceId: 'ws' })).workspace as Body;
    const dp = (await ok('CreateDataplane', { customerId: 'c-cascade', dataplaneId: 'dp' })).dataplane as Body;
    const gw = (
      await ok('CreateProjectGateway', { customerId: 'c-cascade', workspaceId: 'ws', projectGatewayId: 'gw', url: 'cascade.example.com' })
    ).projectGateway as Body;
    const key = await servedProject('c-cascade', 'p1');
    expect((await chat(key, 'echo-c-cascade-p1')).status).toBe(200);
    await ok('DeleteCustomer', { customerId: 'c-cascade' });
    await fail('GetProject', { customerId: 'c-cascade', projectId: 'p1' }, 'not_found');
    await fail('GetWorkspace', { id: ws.id }, 'not_found');
    await fail('GetDataplane', { id: dp.id }, 'not_found');
    await fail('GetProjectGateway', { id: gw.id }, 'not_found');
    expect((await chat(key, 'echo-c-cascade-p1')).status).toBe(401);
    // the gateway's URL host is free again
    await ok('CreateCustomer', { customerId: 'c-cascade2' });
    await ok('CreateWorkspace', { customerId: 'c-cascade2', workspaceId: 'ws' });
    await ok('CreateProjectGateway', {
      customerId: 'c-cascade2',
      workspaceId: 'ws',
      projectGatewayId: 'gw',
      url: 'https://cascade.example.com',
    });
  });
});

describe('projects', () => {
  beforeAll(async () => {
    await ok('CreateCustomer', { customerId: 'acme' });
  });

  test('unique per customer (the same slug in another customer is fine); default cannot be created again', async () => {
    await ok('CreateProject', { customerId: 'acme', projectId: 'web', name: 'Web', labels: { a: '1' } });
    await fail('CreateProject', { customerId: 'acme', projectId: 'web' }, 'already_exists');
    await fail('CreateProject', { customerId: 'acme', projectId: 'default' }, 'already_exists');
    await ok('CreateCustomer', { customerId: 'other' });
    await ok('CreateProject', { customerId: 'other', projectId: 'web' });
    await fail('CreateProject', { customerId: 'nobody', projectId: 'web' }, 'not_found');
    const listed = (await ok('ListProjects', { customerId: 'acme' })).projects as unknown as Body[];
    expect(listed.map((p) => p.projectId)).toEqual(['default', 'web']);
  });

  test('updates: unset and null leave values unchanged; labels replaces the set', async () => {
    await ok('CreateProject', { customerId: 'acme', projectId: 'upd', name: 'N', description: 'D', labels: { a: '1', b: '2' } });
    const a = (await ok('UpdateProject', { customerId: 'acme', projectId: 'upd', description: null })).project as Body;
    expect(a).toMatchObject({ name: 'N', description: 'D', labels: { a: '1', b: '2' } });
    const b = (await ok('UpdateProject', { customerId: 'acme', projectId: 'upd', labels: { c: '3' }, name: 'M' })).project as Body;
    expect(b).toMatchObject({ name: 'M', description: 'D', labels: { c: '3' } });
  });

  test('the default project cannot be deleted', async () => {
    await fail('DeleteProject', { customerId: 'acme', projectId: 'default' }, 'failed_precondition');
  });

  test('soft delete: gone from Get/List, unusable, keys stop working, slug reusable and the new project starts empty', async () => {
    await ok('CreateProject', { customerId: 'acme', projectId: 'gone' });
    const key = await servedProject('acme', 'gone');
    expect((await chat(key, 'echo-acme-gone')).status).toBe(200);
    await ok('AddProjectMember', { customerId: 'acme', projectId: 'gone', userId: 'u1', role: 'admin' });
    await ok('UpsertProjectSetting', {
      customerId: 'acme',
      projectId: 'gone',
      settingName: 'rate-limit',
      settingValue: '{"requestsPerMinute":10}',
    });
    const del = (await ok('DeleteProject', { customerId: 'acme', projectId: 'gone' })) as Body;
    expect(del).toMatchObject({ success: true });
    await fail('GetProject', { customerId: 'acme', projectId: 'gone' }, 'not_found');
    await fail('DeleteProject', { customerId: 'acme', projectId: 'gone' }, 'not_found');
    await fail('AddProjectMember', { customerId: 'acme', projectId: 'gone', userId: 'u2', role: 'member' }, 'not_found');
    await fail('UpdateProject', { customerId: 'acme', projectId: 'gone', name: 'x' }, 'not_found');
    const listed = (await ok('ListProjects', { customerId: 'acme' })).projects as unknown as Body[];
    expect(listed.some((p) => p.projectId === 'gone')).toBe(false);
    expect((await chat(key, 'echo-acme-gone')).status).toBe(401);
    const keys = (await tg.must(apikeyOp('ListApiKeys'), { customerId: 'acme', projectId: 'gone', includeRevoked: true })) as {
      apiKeys: Body[];
    };
    expect(keys.apiKeys.every((k) => typeof k.revokedAt === 'string')).toBe(true);

    await ok('CreateProject', { customerId: 'acme', projectId: 'gone' });
    expect(((await ok('ListProjectMembers', { customerId: 'acme', projectId: 'gone' })).members as unknown as Body[]).length).toBe(0);
    expect(((await ok('ListProjectModels', { customerId: 'acme', projectId: 'gone' })).entries as unknown as Body[]).length).toBe(0);
    expect(((await ok('GetProjectSettings', { customerId: 'acme', projectId: 'gone' })).settings as unknown as Body[]).length).toBe(0);
    expect(((await ok('ListRoutes', { customerId: 'acme', projectId: 'gone' })).routes as unknown as Body[]).length).toBe(0);
    expect((await chat(key, 'echo-acme-gone')).status).toBe(401);
  });
});

describe('assignments', () => {
  beforeAll(async () => {
    await ok('CreateCustomer', { customerId: 'asg' });
    await ok('CreateProject', { customerId: 'asg', projectId: 'p' });
  });
  const at = { customerId: 'asg', projectId: 'p' };

  test('members: add, duplicate, update role, list, remove', async () => {
    const m = (await ok('AddProjectMember', { ...at, userId: 'ann', role: 'member' })).member as Body;
    expect(m).toMatchObject({ ...at, userId: 'ann', role: 'member' });
    await fail('AddProjectMember', { ...at, userId: 'ann', role: 'admin' }, 'already_exists');
    const u = (await ok('UpdateProjectMember', { ...at, userId: 'ann', role: 'admin' })).member as Body;
    expect(u.role).toBe('admin');
    expect(u.id).toBe(m.id);
    await fail('UpdateProjectMember', { ...at, userId: 'nobody', role: 'admin' }, 'not_found');
    expect(((await ok('ListProjectMembers', at)).members as unknown as Body[]).map((x) => x.userId)).toEqual(['ann']);
    expect((await ok('RemoveProjectMember', { ...at, userId: 'ann' })) as unknown).toEqual({ success: true });
    await fail('RemoveProjectMember', { ...at, userId: 'ann' }, 'not_found');
  });

  test('models: entry carries the full catalog model; duplicates and deleted catalog models are refused', async () => {
    const model = (await ok('CreateModel', { model: 'asg-model', provider: 'echo', contextWindow: 1000 })).model as Body;
    const e = (await ok('AddProjectModel', { ...at, modelId: model.id })).entry as Body;
    expect(e).toMatchObject({ ...at, modelId: model.id, model: { id: model.id, model: 'asg-model', contextWindow: 1000 } });
    await fail('AddProjectModel', { ...at, modelId: model.id }, 'already_exists');
    await fail('AddProjectModel', { ...at, modelId: '00000000-0000-4000-8000-000000000001' }, 'not_found');
    expect(((await ok('ListProjectModels', at)).entries as unknown as Body[]).length).toBe(1);
    await ok('DeleteModel', { modelId: model.id });
    expect(((await ok('ListProjectModels', at)).entries as unknown as Body[]).length).toBe(0);
    await fail('GetModel', { modelId: model.id }, 'not_found');
    expect((await ok('RemoveProjectModel', { ...at, modelId: model.id })) as unknown).toEqual({ success: true });
    await fail('RemoveProjectModel', { ...at, modelId: model.id }, 'not_found');
  });

  test('providers and MCP servers: add, duplicate, list, remove; unknown providers refused', async () => {
    expect(((await ok('AddProjectProvider', { ...at, providerName: 'openai' })).entry as Body).providerName).toBe('openai');
    await fail('AddProjectProvider', { ...at, providerName: 'openai' }, 'already_exists');
    await fail('AddProjectProvider', { ...at, providerName: 'no-such-provider' }, 'invalid_argument');
    expect(((await ok('ListProjectProviders', at)).entries as unknown as Body[]).map((x) => x.providerName)).toEqual(['openai']);
    await ok('RemoveProjectProvider', { ...at, providerName: 'openai' });
    await fail('RemoveProjectProvider', { ...at, providerName: 'openai' }, 'not_found');

    await fail('AddProjectMcpServer', { ...at, serverId: 'github.tools' }, 'not_found');
    await ok('CreateMcpServer', { serverId: 'github.tools', url: 'https://93.184.216.34/mcp' });
    expect(((await ok('AddProjectMcpServer', { ...at, serverId: 'github.tools' })).entry as Body).serverId).toBe('github.tools');
    await fail('AddProjectMcpServer', { ...at, serverId: 'github.tools' }, 'already_exists');
    expect(((await ok('ListProjectMcpServers', at)).entries as unknown as Body[]).length).toBe(1);
    await ok('RemoveProjectMcpServer', { ...at, serverId: 'github.tools' });
    await fail('RemoveProjectMcpServer', { ...at, serverId: 'github.tools' }, 'not_found');
  });

  test('settings: upsert replaces, get lists by name, delete', async () => {
    await ok('UpsertProjectSetting', { ...at, settingName: 'rate-limit', settingValue: '{"requestsPerMinute":100}' });
    const s = (await ok('UpsertProjectSetting', { ...at, settingName: 'rate-limit', settingValue: '{"requestsPerMinute":200}' }))
      .setting as Body;
    expect(s).toMatchObject({ settingName: 'rate-limit', settingValue: '{"requestsPerMinute":200}' });
    await ok('UpsertProjectSetting', {
      ...at,
      settingName: 'global-fallback',
      settingValue: '{"targets":[{"connection":"c1","model":"x"}]}',
    });
    const all = (await ok('GetProjectSettings', at)).settings as unknown as Body[];
    expect(all.map((x) => [x.settingName, x.settingValue])).toEqual([
      ['global-fallback', '{"targets":[{"connection":"c1","model":"x"}]}'],
      ['rate-limit', '{"requestsPerMinute":200}'],
    ]);
    expect((await ok('DeleteProjectSetting', { ...at, settingName: 'rate-limit' })) as unknown).toEqual({ success: true });
    await fail('DeleteProjectSetting', { ...at, settingName: 'rate-limit' }, 'not_found');
  });
});

describe('configuration-change records', () => {
  test("a project change is addressed to 'local', the customer's data planes and the gateways serving the project", async () => {
    await ok('CreateCustomer', { customerId: 'cfg' });
    await ok('CreateProject', { customerId: 'cfg', projectId: 'p' });
    await ok('CreateProject', { customerId: 'cfg', projectId: 'q' });
    const ws = (await ok('CreateWorkspace', { customerId: 'cfg', workspaceId: 'ws' })).workspace as Body;
    const dp = (await ok('CreateDataplane', { customerId: 'cfg', dataplaneId: 'dp' })).dataplane as Body;
    const gwP = (await ok('CreateProjectGateway', { customerId: 'cfg', workspaceId: 'ws', projectGatewayId: 'gp' })).projectGateway as Body;
    const gwQ = (await ok('CreateProjectGateway', { customerId: 'cfg', workspaceId: 'ws', projectGatewayId: 'gq' })).projectGateway as Body;
    await ok('AttachProjectGatewayProject', { id: gwP.id, projectId: 'p' });
    await ok('AttachProjectGatewayProject', { id: gwQ.id, projectId: 'q' });

    const before = await lastChangeId();
    await ok('UpsertProjectSetting', {
      customerId: 'cfg',
      projectId: 'p',
      settingName: 'rate-limit',
      settingValue: '{"requestsPerMinute":60}',
    });
    const rows = await changesAfter(before);
    expect(rows.map((r) => r.target).sort()).toEqual(['local', String(ws.id), String(dp.id), String(gwP.id)].sort());
    expect(new Set(rows.map((r) => r.kind))).toEqual(new Set(['PROJECT_SETTING']));
    expect(rows.every((r) => r.customerId === 'cfg' && r.projectId === 'p')).toBe(true);

    // a catalog change goes everywhere
    const before2 = await lastChangeId();
    await ok('CreateModel', { model: 'cfg-model', provider: 'echo' });
    const targets = new Set((await changesAfter(before2)).map((r) => r.target));
    for (const t of ['local', ws.id, dp.id, gwP.id, gwQ.id]) expect(targets.has(String(t))).toBe(true);

    // rejected mutations write nothing
    const before3 = await lastChangeId();
    await fail('CreateProject', { customerId: 'cfg', projectId: 'p' }, 'already_exists');
    await fail('AddProjectProvider', { customerId: 'cfg', projectId: 'p', providerName: 'bogus' }, 'invalid_argument');
    expect(await changesAfter(before3)).toEqual([]);
  });

  test('every served mutation writes change rows (routes, connections, keys, assignments)', async () => {
    await ok('CreateCustomer', { customerId: 'cfg2' });
    const kinds: string[] = [];
    const track = async (fn: () => Promise<unknown>) => {
      const before = await lastChangeId();
      await fn();
      const rows = await changesAfter(before);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.some((r) => r.target === 'local')).toBe(true);
      kinds.push(...new Set(rows.map((r) => r.kind)));
    };
    await track(() => servedProject('cfg2', 'default'));
    await track(() => ok('CreateMcpServer', { serverId: 's1', url: 'https://93.184.216.34/mcp' }));
    await track(() => ok('AddProjectMcpServer', { customerId: 'cfg2', projectId: 'default', serverId: 's1' }));
    await track(() => ok('UpdateRoute', { customerId: 'cfg2', projectId: 'default', model: 'echo-cfg2-default', enabled: false }));
    expect(kinds).toEqual(
      expect.arrayContaining(['CATALOG', 'PROJECT_MODEL', 'PROVIDER', 'ROUTE', 'API_KEY', 'MCP_SERVER', 'PROJECT_MCP_SERVER']),
    );
  });
});
