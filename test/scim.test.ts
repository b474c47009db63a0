import { afterAll, beforeAll, expect, test } from 'bun:test';
import { admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * SCIM 2.0 at /scim/v2/ (contract §16, RFC 7643/7644) on a real gateway: plain RFC requests, then
 * the request shapes Okta and Entra ID send (their public SCIM guides): Okta deactivates with
 * `{op: "replace", value: {active: false}}` and removes group members with
 * `members[value eq "…"]`; Entra ID capitalises ops ("Replace", "Add", "Remove"), sends booleans as
 * "False", updates `emails[type eq "work"].value` and enterprise-extension paths, removes members with
 * a value list and reads groups with `excludedAttributes=members`.
 */

let tg: TestGateway;
let scim = '';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

beforeAll(async () => {
  tg = await startTestGateway();
  await tg.must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  await tg.must(admin('CreateCustomer'), { customerId: 'other', name: 'Other' });
  await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'web' });
  await tg.must(admin('CreateProject'), { customerId: 'acme', projectId: 'data' });
  const t = await tg.must(admin('CreateScimToken'), { customerId: 'acme', name: 'okta' });
  scim = String(t.token);
}, 60_000);

afterAll(async () => {
  await tg?.stop();
});

type Json = Record<string, unknown>;
const req = async (method: string, path: string, body?: unknown, token = scim, type = 'application/scim+json') => {
  const res = await fetch(`${tg.adminUrl}/scim/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': type } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    body: (text ? JSON.parse(text) : {}) as Json,
    headers: res.headers,
  };
};
const members = async (projectId: string): Promise<Record<string, string>> => {
  const r = await tg.must(admin('ListProjectMembers'), { customerId: 'acme', projectId });
  const list = Array.isArray(r.members) ? (r.members as Json[]) : [];
  return Object.fromEntries(list.map((m) => [String(m.userId), String(m.role)]));
};
const userToken = async (userId: string, projectId = 'web'): Promise<string> =>
  String(
    (await tg.must(admin('CreateUserToken'), { customerId: 'acme', workspaceId: 'w', userId, organizationUnit: 'o', role: 'r', projectId }))
      .accessToken,
  );

test('SCIM tokens: shown once, listed without the token, revoked at once; wrong or missing tokens are 401 in SCIM form', async () => {
  const created = await tg.must(admin('CreateScimToken'), { customerId: 'acme', name: 'temp' });
  const token = String(created.token);
  expect(token).toMatch(/^scim_/);
  const list = await tg.must(admin('ListScimTokens'), { customerId: 'acme' });
  expect(JSON.stringify(list)).not.toContain(token);
  expect((await req('GET', '/Users', undefined, token)).status).toBe(200);
  const id = String((created.scimToken as Json).id);
  await tg.must(admin('RevokeScimToken'), { id });
  const refused = await req('GET', '/Users', undefined, token);
  expect(refused.status).toBe(401);
  expect(refused.type).toContain('application/scim+json');
  expect(refused.body).toMatchObject({ schemas: [ERROR], status: '401' });
  expect((await req('GET', '/Users', undefined, 'scim_nope')).status).toBe(401);
  // A user token is no SCIM credential: SCIM tokens need the platform admin.
  expect((await tg.call(admin('CreateScimToken'), { customerId: 'acme' }, await userToken('nobody', 'default'))).status).toBe(403);
});

test('RFC: create, read, filter, page, conflict, and bodies that are not SCIM', async () => {
  const a = await req('POST', '/Users', { schemas: [USER], userName: 'ann@example.com', name: { givenName: 'Ann' }, active: true });
  expect(a.status).toBe(201);
  expect(a.headers.get('location')).toBe(`${tg.adminUrl}/scim/v2/Users/${a.body.id}`);
  expect(a.body).toMatchObject({ schemas: [USER], userName: 'ann@example.com', active: true, name: { givenName: 'Ann' } });
  expect((a.body.meta as Json).resourceType).toBe('User');
  for (const n of ['bo', 'cy', 'di'])
    expect((await req('POST', '/Users', { schemas: [USER], userName: `${n}@example.com` })).status).toBe(201);
  const got = await req('GET', `/Users/${a.body.id}`);
  expect(got.body.userName).toBe('ann@example.com');
  const byName = await req('GET', `/Users?filter=${encodeURIComponent('userName eq "ANN@example.com"')}`);
  expect(byName.body).toMatchObject({
    schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
    totalResults: 1,
    startIndex: 1,
    itemsPerPage: 1,
  });
  const page = await req('GET', '/Users?startIndex=2&count=2');
  expect(page.body).toMatchObject({ totalResults: 4, startIndex: 2, itemsPerPage: 2 });
  expect(((page.body.Resources as Json[])[0] as Json).userName).toBe('bo@example.com');
  const dup = await req('POST', '/Users', { schemas: [USER], userName: 'ann@example.com' });
  expect(dup.body).toMatchObject({ schemas: [ERROR], status: '409', scimType: 'uniqueness' });
  const notScim = await req('POST', '/Users', { userName: 'x' });
  expect(notScim.body).toMatchObject({ schemas: [ERROR], status: '400', scimType: 'invalidSyntax' });
  expect((await req('POST', '/Users', '{not json')).body).toMatchObject({ status: '400', scimType: 'invalidSyntax' });
  expect((await req('GET', '/Users?filter=name.givenName co "A"')).body).toMatchObject({ status: '400', scimType: 'invalidFilter' });
  expect((await req('PATCH', `/Users/${a.body.id}`, { Operations: [] })).body).toMatchObject({ status: '400', scimType: 'invalidSyntax' });
  expect((await req('GET', '/Users/00000000-0000-4000-8000-000000000000')).body).toMatchObject({ schemas: [ERROR], status: '404' });
  // Nothing of a refused call was stored.
  expect((await req('GET', '/Users')).body.totalResults).toBe(4);
  // Another customer's token sees none of these.
  const other = String((await tg.must(admin('CreateScimToken'), { customerId: 'other' })).token);
  expect((await req('GET', '/Users', undefined, other)).body.totalResults).toBe(0);
  expect((await req('GET', `/Users/${a.body.id}`, undefined, other)).status).toBe(404);
});

test('groups named {projectId}:{role} drive memberships; deactivation removes them and revokes the user tokens', async () => {
  const eve = await req('POST', '/Users', { schemas: [USER], userName: 'eve@example.com' });
  const eveId = String(eve.body.id);
  const g = await req('POST', '/Groups', { schemas: [GROUP], displayName: 'web:admin', members: [{ value: eveId }] });
  expect(g.status).toBe(201);
  expect(g.body.members).toEqual([{ value: eveId, display: 'eve@example.com', $ref: `${tg.adminUrl}/scim/v2/Users/${eveId}` }]);
  expect((await members('web'))['eve@example.com']).toBe('admin');
  // A group of another shape is kept but changes no membership.
  expect((await req('POST', '/Groups', { schemas: [GROUP], displayName: 'Engineering', members: [{ value: eveId }] })).status).toBe(201);
  const token = await userToken('eve@example.com');
  expect((await tg.call(admin('ListProjectMembers'), { customerId: 'acme', projectId: 'web' }, token)).status).toBe(200);

  const off = await req('PATCH', `/Users/${eveId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });
  expect(off.status).toBe(200);
  expect(off.body.active).toBe(false);
  expect((await members('web'))['eve@example.com']).toBeUndefined();
  // The session ends at the next call.
  expect((await tg.call(admin('ListProjectMembers'), { customerId: 'acme', projectId: 'web' }, token)).status).toBe(401);
  const tokens = await tg.must(admin('ListUserTokens'), { customerId: 'acme', userId: 'eve@example.com', includeRevoked: true });
  expect(JSON.stringify(tokens)).toContain('deprovisioned by SCIM');
  // Reactivated: the group's membership is back.
  await req('PATCH', `/Users/${eveId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] });
  expect((await members('web'))['eve@example.com']).toBe('admin');
  // Deleted: gone from the group and from the project.
  expect((await req('DELETE', `/Users/${eveId}`)).status).toBe(204);
  expect((await members('web'))['eve@example.com']).toBeUndefined();
  expect((await req('GET', `/Groups/${g.body.id}`)).body.members).toEqual([]);
  expect((await req('GET', `/Users/${eveId}`)).status).toBe(404);
});

test('Okta shapes: user with password and emails, deactivate by value object, group push add and filtered remove, rename', async () => {
  const u = await req('POST', '/Users', {
    schemas: [USER],
    userName: 'okta.user@example.com',
    name: { givenName: 'Okta', familyName: 'User' },
    emails: [{ primary: true, value: 'okta.user@example.com', type: 'work' }],
    displayName: 'Okta User',
    locale: 'en-US',
    externalId: '00ujl29u0le5T6Aj10h7',
    groups: [],
    password: '1mz050nq',
    active: true,
  });
  expect(u.status).toBe(201);
  expect(JSON.stringify(u.body)).not.toContain('1mz050nq');
  const id = String(u.body.id);
  const found = await req('GET', `/Users?filter=${encodeURIComponent('userName eq "okta.user@example.com"')}&startIndex=1&count=100`);
  expect(found.body.totalResults).toBe(1);
  const g = await req('POST', '/Groups', { schemas: [GROUP], displayName: 'data:member', members: [] });
  const gid = String(g.body.id);
  await req('PATCH', `/Groups/${gid}`, {
    schemas: [PATCH],
    Operations: [{ op: 'add', path: 'members', value: [{ value: id, display: 'okta.user@example.com' }] }],
  });
  expect((await members('data'))['okta.user@example.com']).toBe('member');
  // Renamed to another project's group: the membership moves.
  await req('PATCH', `/Groups/${gid}`, {
    schemas: [PATCH],
    Operations: [{ op: 'replace', value: { id: gid, displayName: 'web:member' } }],
  });
  expect((await members('data'))['okta.user@example.com']).toBeUndefined();
  expect((await members('web'))['okta.user@example.com']).toBe('member');
  await req('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }] });
  expect((await members('web'))['okta.user@example.com']).toBeUndefined();
  await req('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }] });
  const off = await req('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
  expect(off.body.active).toBe(false);
  expect((await members('web'))['okta.user@example.com']).toBeUndefined();
});

test('Entra ID shapes: capitalised ops, "False", filtered and extension paths, remove by value list, excludedAttributes', async () => {
  const u = await req(
    'POST',
    '/Users',
    {
      schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      userName: 'Test_User_ab6490ee@contoso.com',
      active: true,
      emails: [{ primary: true, type: 'work', value: 'Test_User_fd0ea19b@contoso.com' }],
      meta: { resourceType: 'User' },
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      roles: [],
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Eng' },
    },
    scim,
    'application/json',
  );
  expect(u.status).toBe(201);
  const id = String(u.body.id);
  expect((await req('GET', `/Users?filter=userName+eq+%22Test_User_ab6490ee%40contoso.com%22`)).body.totalResults).toBe(1);
  const upd = await req('PATCH', `/Users/${id}`, {
    schemas: [PATCH],
    Operations: [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updated@contoso.com' },
      { op: 'Replace', path: 'name.familyName', value: 'updatedFamily' },
      { op: 'Add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'IT' },
    ],
  });
  expect(upd.status).toBe(200);
  expect(upd.body.emails).toEqual([{ primary: true, type: 'work', value: 'updated@contoso.com' }]);
  expect((upd.body.name as Json).familyName).toBe('updatedFamily');
  expect(upd.body['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User']).toEqual({ department: 'IT' });
  const g = await req('POST', '/Groups', { schemas: [GROUP], externalId: 'e1', displayName: 'data:admin', members: [] });
  const gid = String(g.body.id);
  const listed = await req('GET', `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "data:admin"')}`);
  expect(listed.body.totalResults).toBe(1);
  expect((listed.body.Resources as Json[])[0]).not.toHaveProperty('members');
  await req('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ value: id }] }] });
  expect((await members('data'))['Test_User_ab6490ee@contoso.com']).toBe('admin');
  await req('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'Remove', path: 'members', value: [{ value: id }] }] });
  expect((await members('data'))['Test_User_ab6490ee@contoso.com']).toBeUndefined();
  await req('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ value: id }] }] });
  const off = await req('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
  expect(off.body.active).toBe(false);
  expect((await members('data'))['Test_User_ab6490ee@contoso.com']).toBeUndefined();
  // Reactivated, then the group deleted: the membership it gave goes with it.
  await req('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] });
  expect((await members('data'))['Test_User_ab6490ee@contoso.com']).toBe('admin');
  expect((await req('DELETE', `/Groups/${gid}`)).status).toBe(204);
  expect((await members('data'))['Test_User_ab6490ee@contoso.com']).toBeUndefined();
  expect((await req('GET', '/ServiceProviderConfig')).body).toMatchObject({ patch: { supported: true }, filter: { supported: true } });
});

test('SCIM writes are audited with the SCIM token as actor, without secrets', async () => {
  const r = await tg.must(admin('QueryAuditLogs'), { pageSize: 200 });
  const text = JSON.stringify(r);
  expect(text).toContain('scim_user');
  expect(text).toContain('scim-token:');
  expect(text).not.toContain('1mz050nq');
  expect(text).not.toContain(scim);
});
