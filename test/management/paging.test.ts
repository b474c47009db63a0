import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { customers } from '../../src/store/schema/index.ts';
import { admin, apikeyOp, startTestGateway, type TestGateway } from '../support/gateway.ts';
import type { Body } from './support.ts';

/** Keyset paging: opaque tokens, server default and cap, stable order, no duplicates or gaps under concurrent inserts. */

let tg: TestGateway;
beforeAll(async () => {
  tg = await startTestGateway();
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

/** Walks every page of a list operation. */
const walk = async (path: string, body: Body, field: string, pageSize: number, between?: () => Promise<unknown>): Promise<Body[]> => {
  const out: Body[] = [];
  let token = '';
  for (let guard = 0; guard < 10_000; guard++) {
    const r = (await tg.must(path, { ...body, pageSize, ...(token ? { pageToken: token } : {}) })) as Record<string, unknown>;
    const items = r[field] as Body[];
    expect(items.length).toBeLessThanOrEqual(pageSize);
    out.push(...items);
    token = String(r.nextPageToken);
    if (!token) return out;
    if (between) await between();
  }
  throw new Error('paging did not end');
};

describe('customers list', () => {
  beforeAll(async () => {
    // 1 005 customers, written directly (fast), with a few identical timestamps to exercise the id tie-break.
    const at = new Date('2026-01-01T00:00:00.000Z');
    const rows = Array.from({ length: 1005 }, (_, i) => ({
      customerId: `bulk-${String(i).padStart(4, '0')}`,
      createdAt: new Date(at.getTime() + Math.floor(i / 3)),
      updatedAt: at,
    }));
    await tg.gw.store.db.insert(customers).values(rows);
  });

  test('pageSize 0 or unset is the server default (50); 1000 is the cap; nextPageToken is empty when exhausted', async () => {
    for (const pageSize of [undefined, 0]) {
      const r = (await tg.must(admin('ListCustomers'), pageSize === undefined ? {} : { pageSize })) as {
        customers: Body[];
        nextPageToken: string;
      };
      expect(r.customers).toHaveLength(50);
      expect(r.nextPageToken).not.toBe('');
    }
    const big = (await tg.must(admin('ListCustomers'), { pageSize: 1000 })) as { customers: Body[]; nextPageToken: string };
    expect(big.customers).toHaveLength(1000);
    const rest = (await tg.must(admin('ListCustomers'), { pageSize: 1000, pageToken: big.nextPageToken })) as {
      customers: Body[];
      nextPageToken: string;
    };
    expect(rest.customers).toHaveLength(5);
    expect(rest.nextPageToken).toBe('');
    const tooBig = await tg.call(admin('ListCustomers'), { pageSize: 1001 });
    expect(tooBig.body.code).toBe('invalid_argument');
  });

  test('stable order: the same walk twice gives the same sequence, oldest first, ties broken by id', async () => {
    const a = await walk(admin('ListCustomers'), {}, 'customers', 97);
    const b = await walk(admin('ListCustomers'), {}, 'customers', 250);
    expect(a.map((c) => c.id)).toEqual(b.map((c) => c.id));
    for (let i = 1; i < a.length; i++) {
      const prev = a[i - 1] as Body;
      const cur = a[i] as Body;
      const order = String(prev.createdAt).localeCompare(String(cur.createdAt)) || String(prev.id).localeCompare(String(cur.id));
      expect(order).toBeLessThan(0);
    }
  });

  test('no duplicates and no gaps while rows are inserted concurrently', async () => {
    const existing = await walk(admin('ListCustomers'), {}, 'customers', 1000);
    let n = 0;
    const insertSome = async () => {
      // a burst of concurrent creates between pages
      await Promise.all(Array.from({ length: 3 }, () => tg.must(admin('CreateCustomer'), { customerId: `live-${n++}` })));
    };
    // and one more writer racing the pager the whole time
    let stop = false;
    const racer = (async () => {
      while (!stop) await tg.must(admin('CreateCustomer'), { customerId: `race-${n++}` });
    })();
    const seen = await walk(admin('ListCustomers'), {}, 'customers', 41, insertSome);
    stop = true;
    await racer;
    const ids = seen.map((c) => String(c.id));
    expect(new Set(ids).size).toBe(ids.length);
    const seenSet = new Set(ids);
    const missing = existing.filter((c) => !seenSet.has(String(c.id)));
    expect(missing).toEqual([]);
    expect(n).toBeGreaterThan(10);
  }, 60_000);

  test('tokens are opaque and checked', async () => {
    const r = (await tg.must(admin('ListCustomers'), { pageSize: 2 })) as { nextPageToken: string };
    expect(r.nextPageToken).toMatch(/^[A-Za-z0-9_-]+$/);
    for (const pageToken of [
      'garbage',
      r.nextPageToken.slice(0, -6),
      Buffer.from('{"c":"2026-01-01T00:00:00Z","i":"1; drop table"}').toString('base64url'),
    ]) {
      const bad = await tg.call(admin('ListCustomers'), { pageToken });
      expect(bad.status).toBe(400);
      expect(String(bad.body.message)).toContain("'pageToken'");
    }
  });
});

describe('every list operation pages the same way', () => {
  test('pageSize 1 walks every item once', async () => {
    const c = { customerId: 'pager', projectId: 'p' };
    await tg.must(admin('CreateCustomer'), { customerId: 'pager' });
    await tg.must(admin('CreateProject'), c);
    await tg.must(admin('CreateProject'), { customerId: 'pager', projectId: 'p2' });
    for (let i = 0; i < 3; i++) {
      const m = (await tg.must(admin('CreateModel'), { model: `pager-${i}`, provider: 'echo' })) as { model: { id: string } };
      await tg.must(admin('AddProjectModel'), { ...c, modelId: m.model.id });
      await tg.must(admin('AddProjectMember'), { ...c, userId: `user-${i}`, role: 'member' });
      await tg.must(admin('CreateMcpServer'), { serverId: `srv-${i}`, url: 'https://93.184.216.34/mcp' });
      await tg.must(admin('AddProjectMcpServer'), { ...c, serverId: `srv-${i}` });
      await tg.must(admin('CreateMcpProfile'), { ...c, profileId: `prof-${i}`, servers: [{ serverId: `srv-${i}` }] });
      await tg.must(admin('CreateWorkspace'), { customerId: 'pager', workspaceId: `ws-${i}` });
      await tg.must(admin('CreateProviderConnection'), { ...c, name: `conn-${i}`, provider: ['echo', 'openai', 'anthropic'][i] });
      await tg.must(admin('CreateRoute'), { ...c, model: `pager-${i}`, targets: [{ connection: `conn-${i}`, model: 'x' }] });
      await tg.must(admin('CreateProjectGateway'), { customerId: 'pager', workspaceId: `ws-${i}`, projectGatewayId: 'g' });
      await tg.must(apikeyOp('CreateApiKey'), { name: `k${i}`, enterpriseContext: c });
    }
    const lists: [string, Body, string, number][] = [
      [admin('ListProjects'), { customerId: 'pager' }, 'projects', 3],
      [admin('ListProjectMembers'), c, 'members', 3],
      [admin('ListProjectModels'), c, 'entries', 3],
      [admin('ListProjectProviders'), c, 'entries', 3],
      [admin('ListProjectMcpServers'), c, 'entries', 3],
      [admin('ListMcpProfiles'), c, 'profiles', 3],
      [admin('ListWorkspaces'), { customerId: 'pager' }, 'workspaces', 3],
      [admin('ListDataplanes'), { customerId: 'pager' }, 'dataplanes', 3],
      [admin('ListProjectGateways'), { customerId: 'pager' }, 'projectGateways', 3],
      [admin('ListProviderConnections'), c, 'connections', 3],
      [admin('ListRoutes'), c, 'routes', 3],
      [apikeyOp('ListApiKeys'), c, 'apiKeys', 3],
    ];
    for (const [path, body, field, count] of lists) {
      const items = await walk(path, body, field, 1);
      expect({ path, n: items.length }).toEqual({ path, n: count });
      expect(new Set(items.map((x) => x.id)).size).toBe(count);
    }
    const models = await walk(admin('ListModels'), { provider: 'echo' }, 'models', 1);
    expect(models.filter((m) => String(m.model).startsWith('pager-'))).toHaveLength(3);
  });
});
