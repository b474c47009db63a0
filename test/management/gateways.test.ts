import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { gt } from 'drizzle-orm';
import { configChanges } from '../../src/store/schema/index.ts';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import type { Body } from './support.ts';

/** Data planes / workspaces and project gateways: every rule and warning of the seed. */

let tg: TestGateway;
let modelId: string;
beforeAll(async () => {
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'acme' });
  await tg.must(admin('CreateCustomer'), { customerId: 'globex' });
  for (const p of ['web', 'empty', 'mob']) await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: p });
  const m = (await tg.must(admin('CreateModel'), { model: 'gw-model', provider: 'echo' })) as { model: { id: string } };
  modelId = m.model.id;
  for (const p of ['web', 'mob']) await tg.must(admin('AddProjectModel'), { customerId: 'acme', projectId: p, modelId });
  for (const ws of ['ws-a', 'ws-b', 'ws-c']) await tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: ws });
  await tg.must(admin('CreateWorkspace'), { customerId: 'globex', workspaceId: 'ws-g' });
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

const ok = async (op: string, body: Body) => (await tg.must(admin(op), body)) as Record<string, Body> & { warnings?: string[] };
const fail = async (op: string, body: Body, code: string) => {
  const r = await tg.call(admin(op), body);
  expect({ op, code: r.body.code }).toEqual({ op, code });
  return r;
};
let seq = 0;
const newGateway = async (extra: Body = {}, workspaceId = 'ws-a') =>
  (await ok('CreateProjectGateway', { customerId: 'acme', workspaceId, projectGatewayId: `gw-${++seq}`, ...extra }))
    .projectGateway as Body & { id: string };
const lastChangeId = async () =>
  (await tg.gw.store.db.select({ id: configChanges.id }).from(configChanges)).reduce((m, r) => Math.max(m, r.id), 0);
const changesAfter = (id: number) => tg.gw.store.db.select().from(configChanges).where(gt(configChanges.id, id));

describe('data planes and workspaces (one resource)', () => {
  test('a workspace and a data plane share one slug space per customer; both views read the same row', async () => {
    const ws = (await ok('CreateWorkspace', { customerId: 'acme', workspaceId: 'shared', name: 'S', labels: { k: 'v' } }))
      .workspace as Body;
    expect(ws).toMatchObject({ workspaceId: 'shared', customerId: 'acme', projectId: 'default', name: 'S', labels: { k: 'v' }, url: '' });
    await fail('CreateDataplane', { customerId: 'acme', dataplaneId: 'shared' }, 'already_exists');
    await ok('CreateDataplane', { customerId: 'globex', dataplaneId: 'shared' });
    const dp = (await ok('GetDataplane', { id: ws.id })).dataplane as Body;
    expect(dp).toMatchObject({ id: ws.id, dataplaneId: 'shared', customerId: 'acme' });
    expect(dp.workspaceId).toBeUndefined();
    await fail('CreateWorkspace', { customerId: 'nobody', workspaceId: 'x' }, 'not_found');
    await fail('CreateWorkspace', { customerId: 'acme', workspaceId: 'x', projectId: 'nope' }, 'not_found');
  });

  test('project: given at create, moved by SetWorkspaceProject, cleared back to default', async () => {
    const ws = (await ok('CreateWorkspace', { customerId: 'acme', workspaceId: 'proj-ws', projectId: 'web' })).workspace as Body;
    expect(ws.projectId).toBe('web');
    expect(((await ok('SetWorkspaceProject', { id: ws.id, projectId: 'mob' })).workspace as Body).projectId).toBe('mob');
    expect(((await ok('SetWorkspaceProject', { id: ws.id })).workspace as Body).projectId).toBe('default');
    expect(((await ok('SetDataplaneProject', { id: ws.id, projectId: 'web' })).dataplane as Body).projectId).toBe('web');
    expect(((await ok('SetDataplaneProject', { id: ws.id, projectId: '' })).dataplane as Body).projectId).toBe('default');
    await fail('SetWorkspaceProject', { id: ws.id, projectId: 'nope' }, 'not_found');
  });

  test('update semantics and soft delete', async () => {
    const ws = (await ok('CreateWorkspace', { customerId: 'acme', workspaceId: 'upd-ws', name: 'N', description: 'D', labels: { a: '1' } }))
      .workspace as Body;
    const u = (await ok('UpdateWorkspace', { id: ws.id, name: null, labels: { b: '2' } })).workspace as Body;
    expect(u).toMatchObject({ name: 'N', description: 'D', labels: { b: '2' } });
    const d = (await ok('DeleteWorkspace', { id: ws.id })) as Body;
    expect(d.success as unknown).toBe(true);
    await fail('GetWorkspace', { id: ws.id }, 'not_found');
    await fail('DeleteWorkspace', { id: ws.id }, 'not_found');
    const list = (await ok('ListWorkspaces', { customerId: 'acme', pageSize: 1000 })).workspaces as unknown as Body[];
    expect(list.some((w) => w.id === ws.id)).toBe(false);
    // slug reusable after delete
    await ok('CreateDataplane', { customerId: 'acme', dataplaneId: 'upd-ws' });
  });

  test('SetWorkspaceURL persists the URL; triggerUpdate records a PROXY_URL event for that data plane', async () => {
    const ws = (await ok('CreateWorkspace', { customerId: 'acme', workspaceId: 'url-ws' })).workspace as Body;
    let before = await lastChangeId();
    const quiet = (await ok('SetWorkspaceURL', { id: ws.id, url: 'https://dp1.example.com', triggerUpdate: false })).workspace as Body;
    expect(quiet.url).toBe('https://dp1.example.com');
    expect((await changesAfter(before)).filter((r) => r.kind === 'PROXY_URL')).toEqual([]);
    before = await lastChangeId();
    await ok('SetWorkspaceURL', { id: ws.id, url: 'https://dp2.example.com', triggerUpdate: true });
    const events = (await changesAfter(before)).filter((r) => r.kind === 'PROXY_URL');
    expect(events.map((e) => e.target)).toContain(String(ws.id));
    expect(events[0]?.payload).toEqual({ url: 'https://dp2.example.com' });
    expect(((await ok('GetWorkspace', { id: ws.id })).workspace as Body).url).toBe('https://dp2.example.com');
    await fail('SetWorkspaceURL', { id: ws.id, url: 'not a url' }, 'invalid_argument');
    await ok('SetDataplaneURL', { id: ws.id, url: 'https://dp3.example.com', triggerUpdate: true });
  });

  test('a workspace hosting project gateways cannot be deleted', async () => {
    const ws = (await ok('CreateWorkspace', { customerId: 'acme', workspaceId: 'host-ws' })).workspace as Body;
    const gw = await newGateway({}, 'host-ws');
    await fail('DeleteWorkspace', { id: ws.id }, 'failed_precondition');
    await ok('DeleteProjectGateway', { id: gw.id });
    await ok('DeleteWorkspace', { id: ws.id });
  });
});

describe('project gateways', () => {
  test('create: the workspace must exist for the customer; the slug is unique within the workspace', async () => {
    const g = await newGateway({ name: 'G', labels: { a: 'b' } });
    expect(g).toMatchObject({ customerId: 'acme', workspaceId: 'ws-a', name: 'G', labels: { a: 'b' }, url: '', projectIds: [] });
    await fail('CreateProjectGateway', { customerId: 'acme', workspaceId: 'ws-a', projectGatewayId: g.projectGatewayId }, 'already_exists');
    await ok('CreateProjectGateway', { customerId: 'acme', workspaceId: 'ws-b', projectGatewayId: g.projectGatewayId });
    await fail('CreateProjectGateway', { customerId: 'acme', workspaceId: 'ws-g', projectGatewayId: 'x' }, 'not_found');
    await fail('CreateProjectGateway', { customerId: 'acme', workspaceId: 'nope', projectGatewayId: 'x' }, 'not_found');
  });

  test('attach warns when the project has no assigned models; attach is idempotent; detach', async () => {
    const g = await newGateway();
    const a = await ok('AttachProjectGatewayProject', { id: g.id, projectId: 'web' });
    expect(a.warnings).toEqual([]);
    expect((a.projectGateway as Body).projectIds).toEqual(['web']);
    const b = await ok('AttachProjectGatewayProject', { id: g.id, projectId: 'empty' });
    expect(b.warnings).toHaveLength(1);
    expect(b.warnings?.[0]).toContain("project 'empty' has no assigned models");
    expect(b.warnings?.[0]).toContain('404');
    const again = await ok('AttachProjectGatewayProject', { id: g.id, projectId: 'web' });
    expect((again.projectGateway as Body).projectIds).toEqual(['web', 'empty']);
    await fail('AttachProjectGatewayProject', { id: g.id, projectId: 'nope' }, 'not_found');
    expect((await ok('DetachProjectGatewayProject', { id: g.id, projectId: 'empty' })) as unknown).toEqual({ success: true });
    await fail('DetachProjectGatewayProject', { id: g.id, projectId: 'empty' }, 'not_found');
    expect(((await ok('GetProjectGateway', { id: g.id })).projectGateway as Body).projectIds).toEqual(['web']);
  });

  test('a project from another customer cannot be attached', async () => {
    await tg.must(admin('CreateProject'), { customerId: 'globex', projectId: 'gp' });
    const g = await newGateway();
    await fail('AttachProjectGatewayProject', { id: g.id, projectId: 'gp' }, 'not_found');
  });

  test('SetProjectGatewayURL: warns with no attached project, then about projects without models; none when functional', async () => {
    const g = await newGateway();
    const none = await ok('SetProjectGatewayURL', { id: g.id, url: 'https://alpha.example.com/v1' });
    expect(none.warnings).toHaveLength(1);
    expect(none.warnings?.[0]).toContain('no project is attached');
    expect((none.projectGateway as Body).url).toBe('https://alpha.example.com/v1');
    await ok('AttachProjectGatewayProject', { id: g.id, projectId: 'empty' });
    const empty = await ok('SetProjectGatewayURL', { id: g.id, url: 'https://alpha.example.com' });
    expect(empty.warnings).toEqual([expect.stringContaining("project 'empty' has no assigned models")]);
    await ok('DetachProjectGatewayProject', { id: g.id, projectId: 'empty' });
    await ok('AttachProjectGatewayProject', { id: g.id, projectId: 'web' });
    const fine = await ok('SetProjectGatewayURL', { id: g.id, url: 'alpha.example.com' });
    expect(fine.warnings).toEqual([]);
  });

  test('SetProjectGatewayURL: the URL host is globally unique (case-insensitive, any scheme/port/path); ALREADY_EXISTS', async () => {
    const g1 = await newGateway();
    const g2 = await newGateway({}, 'ws-b');
    await ok('SetProjectGatewayURL', { id: g1.id, url: 'https://Unique.Example.com:8443/a' });
    for (const url of ['https://unique.example.com', 'http://UNIQUE.example.com/b', 'unique.example.com', 'unique.example.com:9000']) {
      const r = await fail('SetProjectGatewayURL', { id: g2.id, url }, 'already_exists');
      expect(r.status).toBe(409);
    }
    // across customers too
    await ok('CreateProjectGateway', { customerId: 'globex', workspaceId: 'ws-g', projectGatewayId: 'gx' }).then(async (r) => {
      await fail('SetProjectGatewayURL', { id: (r.projectGateway as Body).id, url: 'https://unique.example.com' }, 'already_exists');
    });
    // the same gateway may set its own host again; create and update enforce the rule too
    await ok('SetProjectGatewayURL', { id: g1.id, url: 'https://unique.example.com/other' });
    await fail(
      'CreateProjectGateway',
      { customerId: 'acme', workspaceId: 'ws-c', projectGatewayId: 'dup', url: 'unique.example.com' },
      'already_exists',
    );
    await fail('UpdateProjectGateway', { id: g2.id, url: 'https://unique.example.com' }, 'already_exists');
    await fail('SetProjectGatewayURL', { id: g2.id, url: 'https://' }, 'invalid_argument');
    // deleting the gateway frees the host
    await ok('DeleteProjectGateway', { id: g1.id });
    await ok('SetProjectGatewayURL', { id: g2.id, url: 'unique.example.com' });
  });

  test('SetProjectGatewayWorkspace: target must exist for the customer, slug must be free, and the DNS/TLS reminder is always there', async () => {
    const g = await newGateway({ url: 'https://move.example.com' }, 'ws-a');
    await ok('AttachProjectGatewayProject', { id: g.id, projectId: 'web' });
    const before = await lastChangeId();
    const moved = await ok('SetProjectGatewayWorkspace', { id: g.id, workspaceId: 'ws-b' });
    expect((moved.projectGateway as Body).workspaceId).toBe('ws-b');
    expect(moved.warnings).toHaveLength(1);
    expect(moved.warnings?.[0]).toContain("'move.example.com'");
    expect(moved.warnings?.[0]).toMatch(/DNS/);
    expect(moved.warnings?.[0]).toMatch(/TLS/);
    // the change goes to the gateway and both data planes
    const targets = new Set((await changesAfter(before)).map((r) => r.target));
    const planes = (await ok('ListWorkspaces', { customerId: 'acme', pageSize: 1000 })).workspaces as unknown as Body[];
    for (const ws of ['ws-a', 'ws-b']) expect(targets.has(String(planes.find((p) => p.workspaceId === ws)?.id))).toBe(true);
    expect(targets.has(g.id)).toBe(true);
    expect(targets.has('local')).toBe(true);

    // same workspace again: still the reminder
    expect((await ok('SetProjectGatewayWorkspace', { id: g.id, workspaceId: 'ws-b' })).warnings?.[0]).toMatch(/DNS/);
    await fail('SetProjectGatewayWorkspace', { id: g.id, workspaceId: 'ws-g' }, 'not_found');
    await fail('SetProjectGatewayWorkspace', { id: g.id, workspaceId: 'nope' }, 'not_found');
    await ok('CreateProjectGateway', { customerId: 'acme', workspaceId: 'ws-c', projectGatewayId: g.projectGatewayId });
    await fail('SetProjectGatewayWorkspace', { id: g.id, workspaceId: 'ws-c' }, 'already_exists');

    // URL and model advisories may follow the reminder
    const bare = await newGateway();
    await ok('AttachProjectGatewayProject', { id: bare.id, projectId: 'empty' });
    const w = (await ok('SetProjectGatewayWorkspace', { id: bare.id, workspaceId: 'ws-c' })).warnings as unknown as string[];
    expect(w[0]).toMatch(/DNS/);
    expect(w.some((x) => x.includes('no URL is set'))).toBe(true);
    expect(w.some((x) => x.includes("project 'empty' has no assigned models"))).toBe(true);
    const lonely = await newGateway();
    const w2 = (await ok('SetProjectGatewayWorkspace', { id: lonely.id, workspaceId: 'ws-c' })).warnings as unknown as string[];
    expect(w2.some((x) => x.includes('no project is attached'))).toBe(true);
  });

  test('update semantics, list filters, soft delete', async () => {
    const g = await newGateway({ name: 'N', description: 'D', labels: { a: '1' }, url: 'upd.example.com' });
    const u = (await ok('UpdateProjectGateway', { id: g.id, name: null, labels: { b: '2' } })).projectGateway as Body;
    expect(u).toMatchObject({ name: 'N', description: 'D', labels: { b: '2' }, url: 'upd.example.com' });
    const cleared = (await ok('UpdateProjectGateway', { id: g.id, url: '' })).projectGateway as Body;
    expect(cleared.url).toBe('');
    await ok('AttachProjectGatewayProject', { id: g.id, projectId: 'mob' });
    const byProject = (await ok('ListProjectGateways', { customerId: 'acme', projectId: 'mob' })).projectGateways as unknown as Body[];
    expect(byProject.map((x) => x.id)).toContain(g.id);
    expect(byProject.every((x) => (x.projectIds as string[]).includes('mob'))).toBe(true);
    const byWs = (await ok('ListProjectGateways', { customerId: 'acme', workspaceId: 'ws-a', pageSize: 1000 }))
      .projectGateways as unknown as Body[];
    expect(byWs.every((x) => x.workspaceId === 'ws-a')).toBe(true);
    const d = await ok('DeleteProjectGateway', { id: g.id });
    expect(d.success as unknown).toBe(true);
    await fail('GetProjectGateway', { id: g.id }, 'not_found');
    await fail('AttachProjectGatewayProject', { id: g.id, projectId: 'web' }, 'not_found');
    const after = (await ok('ListProjectGateways', { customerId: 'acme', projectId: 'mob' })).projectGateways as unknown as Body[];
    expect(after.map((x) => x.id)).not.toContain(g.id);
    // the slug can be reused in the workspace after delete
    await ok('CreateProjectGateway', { customerId: 'acme', workspaceId: 'ws-a', projectGatewayId: String(g.projectGatewayId) });
  });

  test('deleting a project detaches it from gateways', async () => {
    await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'temp' });
    const g = await newGateway();
    await ok('AttachProjectGatewayProject', { id: g.id, projectId: 'temp' });
    await tg.must(admin('DeleteProject'), { customerId: 'acme', projectId: 'temp' });
    expect(((await ok('GetProjectGateway', { id: g.id })).projectGateway as Body).projectIds).toEqual([]);
  });
});
