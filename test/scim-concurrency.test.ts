import { afterAll, beforeAll, expect, test } from 'bun:test';
import postgres from 'postgres';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * SCIM uniqueness under concurrency (contract §16, RFC 7644 §3.3 and §3.12): identity providers
 * retry and fan out, so the same userName (or group displayName) may arrive several times at once.
 * Exactly one create wins with 201; every other one is the RFC's 409 `uniqueness` body — never a
 * 500 — and leaves nothing behind: one row, one successful audit entry, the losers audited as
 * refusals. Renames (PUT, PATCH) onto a name another resource holds are refused the same way,
 * including a rename that differs only in letter case. Runs on PGlite and, with TEST_DATABASE_URL,
 * on PostgreSQL.
 *
 * The gateway checks a name before it inserts, under its management write lock, so its own
 * requests never reach the store's unique index with a taken name. A writer outside that lock (a
 * second gateway version during a rolling upgrade, an operator's script) can: the name is then
 * claimed between the check and the insert, and the index's unique violation is the answer. The last
 * test stages exactly that on PostgreSQL (PGlite runs one transaction at a time, so it cannot).
 */

let tg: TestGateway;
let scim = '';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const N = 8;

beforeAll(async () => {
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'web' });
  scim = String((await tg.must(admin('CreateScimToken'), { customerId: 'acme', name: 'idp' })).token);
}, 60_000);

afterAll(async () => {
  await tg?.stop();
});

type Json = Record<string, unknown>;
const req = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${tg.adminUrl}/scim/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${scim}`, ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: (text ? JSON.parse(text) : {}) as Json };
};
const audits = async (resourceType: string, success: boolean) => {
  const r = await tg.must(admin('QueryAuditLogs'), { resourceType, actionType: 'CREATE', success, pageSize: 1000 });
  return (r.logs as Json[]).map((l) => l.resourceId);
};
const expectUniqueness = (r: { status: number; type: string; body: Json }) => {
  expect(r.status).toBe(409);
  expect(r.type).toContain('application/scim+json');
  expect(r.body).toEqual({ schemas: [ERROR], status: '409', scimType: 'uniqueness', detail: expect.any(String) });
};

test(`${N} concurrent POST /Users with one userName: one 201, ${N - 1} RFC 409 uniqueness, one user stored and audited`, async () => {
  const before = await audits('scim_user', true);
  const results = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      // Letter case differs between the requests: userName is case-insensitive (RFC 7643 §4.1.1).
      req('POST', '/Users', { schemas: [USER], userName: i % 2 ? 'Race@Example.com' : 'race@example.com', displayName: `try ${i}` }),
    ),
  );
  const won = results.filter((r) => r.status === 201);
  expect(won).toHaveLength(1);
  for (const r of results.filter((r) => r.status !== 201)) expectUniqueness(r);
  const list = await req('GET', `/Users?filter=${encodeURIComponent('userName eq "race@example.com"')}`);
  expect(list.body.totalResults).toBe(1);
  expect(((list.body.Resources as Json[])[0] as Json).id).toBe(won[0]?.body.id);
  const created = (await audits('scim_user', true)).filter((id) => !before.includes(id));
  expect(created).toEqual([won[0]?.body.id]);
  expect((await audits('scim_user', false)).length).toBeGreaterThanOrEqual(N - 1);
});

test('PUT and PATCH renaming a user onto a taken userName are RFC 409 uniqueness, nothing changed', async () => {
  const a = await req('POST', '/Users', { schemas: [USER], userName: 'amy@example.com' });
  const b = await req('POST', '/Users', { schemas: [USER], userName: 'bob@example.com' });
  const g = await req('POST', '/Groups', { schemas: [GROUP], displayName: 'web:member', members: [{ value: b.body.id }] });
  expect(g.status).toBe(201);
  const put = await req('PUT', `/Users/${b.body.id}`, { schemas: [USER], userName: 'AMY@example.com' });
  expectUniqueness(put);
  const patch = await req('PATCH', `/Users/${b.body.id}`, {
    schemas: [PATCH],
    Operations: [{ op: 'replace', path: 'userName', value: 'amy@example.com' }],
  });
  expectUniqueness(patch);
  // Both renamed concurrently onto one free name: one wins, the other is refused.
  const both = await Promise.all(
    [a, b].map((u) =>
      req('PATCH', `/Users/${u.body.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { userName: 'cy@example.com' } }] }),
    ),
  );
  expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
  for (const r of both.filter((r) => r.status !== 200)) expectUniqueness(r);
  const loser = both[0]?.status === 409 ? a : b;
  expect((await req('GET', `/Users/${loser.body.id}`)).body.userName).toBe(loser.body.userName);
  // bob kept his membership when his renames were refused (or moved with him when he won).
  const members = await tg.must(admin('ListProjectMembers'), { customerId: 'acme', projectId: 'web' });
  const ids = (members.members as Json[]).map((m) => m.userId);
  expect(ids).toEqual([loser === b ? 'bob@example.com' : 'cy@example.com']);
});

test(`${N} concurrent POST /Groups with one displayName, and a rename onto it: one group, the rest RFC 409 uniqueness`, async () => {
  const before = await audits('scim_group', true);
  const results = await Promise.all(
    Array.from({ length: N }, () => req('POST', '/Groups', { schemas: [GROUP], displayName: 'web:admin', members: [] })),
  );
  const won = results.filter((r) => r.status === 201);
  expect(won).toHaveLength(1);
  for (const r of results.filter((r) => r.status !== 201)) expectUniqueness(r);
  const list = await req('GET', `/Groups?filter=${encodeURIComponent('displayName eq "web:admin"')}`);
  expect(list.body.totalResults).toBe(1);
  const created = (await audits('scim_group', true)).filter((id) => !before.includes(id));
  expect(created).toEqual([won[0]?.body.id]);
  const other = await req('POST', '/Groups', { schemas: [GROUP], displayName: 'Engineering' });
  expectUniqueness(await req('PUT', `/Groups/${other.body.id}`, { schemas: [GROUP], displayName: 'web:admin' }));
  expectUniqueness(
    await req('PATCH', `/Groups/${other.body.id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', path: 'displayName', value: 'web:admin' }],
    }),
  );
  expect((await req('GET', `/Groups/${other.body.id}`)).body.displayName).toBe('Engineering');
});

test.skipIf(!process.env.TEST_DATABASE_URL)(
  'a userName or group name claimed between the check and the insert (a writer outside the gateway lock): RFC 409 uniqueness, not 500',
  async () => {
    const other = postgres(tg.db.url as string, { max: 1, onnotice: () => undefined });
    try {
      for (const [table, column, path, body] of [
        ['scim_users', 'user_name', '/Users', { schemas: [USER], userName: 'late@example.com' }],
        ['scim_groups', 'display_name', '/Groups', { schemas: [GROUP], displayName: 'late-group' }],
      ] as const) {
        const name = 'userName' in body ? body.userName : body.displayName;
        let commit: () => void = () => undefined;
        let inserted: () => void = () => undefined;
        const claimed = new Promise<void>((resolve) => {
          inserted = resolve;
        });
        // The other writer inserts the name and holds its transaction open: the gateway's check does
        // not see it, its insert waits on the unique index and fails once the other one commits.
        const held = other.begin(async (tx) => {
          await tx`insert into ${tx(table)} (customer_uuid, customer_id, ${tx(column)})
                   select id, customer_id, ${name} from customers where customer_id = 'acme'`;
          inserted();
          await new Promise<void>((resolve) => {
            commit = resolve;
          });
        });
        await claimed;
        const pending = req('POST', path, body);
        await Bun.sleep(300);
        commit();
        await held;
        const r = await pending;
        expectUniqueness(r);
        expect(r.body.detail).toContain(name);
        const [rows] = await other`select count(*)::int as n from ${other(table)} where ${other(column)} = ${name}`;
        expect(rows?.n).toBe(1);
      }
    } finally {
      await other.end();
    }
  },
);
