import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { Type as t } from '@sinclair/typebox';
import { defineOp } from '../src/api/op.ts';
import { connectError } from '../src/core/errors.ts';
import { callInfo, PLATFORM_ADMIN_USER } from '../src/control-plane/audit-record.ts';
import type { OpDef } from '../src/control-plane/connect.ts';
import { managementOps } from '../src/control-plane/index.ts';
import { mutation, rid } from '../src/control-plane/mutation.ts';
import { customers } from '../src/store/schema/index.ts';
import { OPS, GHOST } from './management/op-table.ts';
import { type Body, liveFixture } from './management/support.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from './support/gateway.ts';
import type { Fx } from './management/op-table.ts';

/**
 * The one mutation path (issue 10): every state-changing operation — listed from the operation
 * registry, so a new one is covered without editing this file — leaves exactly one audit entry per
 * call, with the right actor and no secret; refused calls are audited on their own; the entry is in
 * the change's transaction.
 */

let tg: TestGateway;
let fx: Fx;
let aliceToken = '';
const secrets: string[] = [ADMIN_TOKEN];
const mutations: OpDef[] = managementOps(
  { db: null as never, secrets: null as never },
  { flushRecords: async () => {}, localStatus: () => undefined },
).filter((d) => d.audit !== undefined);

interface Answer {
  status: number;
  body: Body;
  requestId: string;
}

const post = async (path: string, body: unknown, token = ADMIN_TOKEN, headers: Record<string, string> = {}): Promise<Answer> => {
  const res = await fetch(`${tg.adminUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'audit-test/1',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Body, requestId: res.headers.get('x-request-id') ?? '' };
};

const rows = async (text: ReturnType<typeof sql>): Promise<Record<string, unknown>[]> => {
  const r = (await tg.gw.store.db.execute(text)) as unknown;
  return (Array.isArray(r) ? r : (r as { rows: unknown[] }).rows) as Record<string, unknown>[];
};

/** The entries of one request, through the API (QueryAuditLogs by correlationId). */
const entriesOf = async (requestId: string): Promise<Body[]> => {
  const r = await post(admin('QueryAuditLogs'), { correlationId: requestId, pageSize: 10 });
  expect(r.status).toBe(200);
  expect(r.body.totalCount).toBe(String((r.body.logs as Body[]).length));
  return r.body.logs as Body[];
};

beforeAll(async () => {
  tg = await startTestGateway();
  fx = await liveFixture(tg);
  await tg.must(admin('AddProjectMember'), { customerId: fx.customerId, projectId: fx.projectId, userId: 'alice', role: 'admin' });
  const tok = await tg.must(admin('CreateUserToken'), {
    customerId: fx.customerId,
    workspaceId: 'ws1',
    userId: 'alice',
    organizationUnit: 'ou',
    role: 'dev',
    projectId: fx.projectId,
  });
  aliceToken = String(tok.accessToken);
  secrets.push(aliceToken);
  await tg.must(admin('CreateModel'), { model: 'audit-route-model', provider: 'echo', capabilities: ['chat'] });
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

const SECRET_KEY = 'sk-upstream-secret-0123456789abcdef';
const SECRET_HEADER = 'header-secret-value-42';
const SECRET_KEY2 = 'rotated-upstream-secret-value-9876';
const SECRET_MCP = 'mcp-catalog-secret-value-5521';
const SECRET_MCP2 = 'mcp-catalog-rotated-secret-8810';

/** A body that succeeds for each operation, in an order where each finds what it needs; ids filled from earlier answers. */
const script = (): [string, (ids: Record<string, string>) => Body][] => {
  const c = fx.customerId;
  const p = fx.projectId;
  return [
    ['CreateCustomer', () => ({ customerId: 'beta', name: 'Beta' })],
    ['UpdateCustomer', () => ({ customerId: 'beta', name: 'Beta 2' })],
    ['CreateProject', () => ({ customerId: c, projectId: 'p2' })],
    ['UpdateProject', () => ({ customerId: c, projectId: 'p2', name: 'P2' })],
    ['AddProjectMember', () => ({ customerId: c, projectId: p, userId: 'bob', role: 'member' })],
    ['UpdateProjectMember', () => ({ customerId: c, projectId: p, userId: 'bob', role: 'admin' })],
    ['RemoveProjectMember', () => ({ customerId: c, projectId: p, userId: 'bob' })],
    ['CreateModel', () => ({ model: 'audit-m2', provider: 'echo', capabilities: ['chat'] })],
    ['UpdateModel', (ids) => ({ modelId: ids.model, contextWindow: 4096 })],
    ['AddProjectModel', (ids) => ({ customerId: c, projectId: p, modelId: ids.model })],
    ['RemoveProjectModel', (ids) => ({ customerId: c, projectId: p, modelId: ids.model })],
    ['DeleteModel', (ids) => ({ modelId: ids.model })],
    ['AddProjectProvider', () => ({ customerId: c, projectId: p, providerName: 'openai' })],
    ['RemoveProjectProvider', () => ({ customerId: c, projectId: p, providerName: 'openai' })],
    ['CreateMcpServer', () => ({ serverId: 'srv1', url: 'https://93.184.216.34/mcp', authType: 'bearer', authValue: SECRET_MCP })],
    ['UpdateMcpServer', () => ({ serverId: 'srv1', authType: 'header', authHeader: 'X-Api-Key', authValue: SECRET_MCP2 })],
    ['AddProjectMcpServer', () => ({ customerId: c, projectId: p, serverId: 'srv1' })],
    ['CreateMcpProfile', () => ({ customerId: c, projectId: p, profileId: 'prof1', servers: [{ serverId: 'srv1' }] })],
    ['UpdateMcpProfile', () => ({ customerId: c, projectId: p, profileId: 'prof1', description: 'tools' })],
    ['DeleteMcpProfile', () => ({ customerId: c, projectId: p, profileId: 'prof1' })],
    ['RemoveProjectMcpServer', () => ({ customerId: c, projectId: p, serverId: 'srv1' })],
    ['DeleteMcpServer', () => ({ serverId: 'srv1' })],
    ['UpsertProjectSetting', () => ({ customerId: c, projectId: p, settingName: 'rate-limit', settingValue: '{"requestsPerMinute":10}' })],
    ['DeleteProjectSetting', () => ({ customerId: c, projectId: p, settingName: 'rate-limit' })],
    ['CreateDataplane', () => ({ customerId: c, dataplaneId: 'dp9' })],
    ['UpdateDataplane', (ids) => ({ id: ids.dataplane, name: 'DP 9' })],
    ['SetDataplaneProject', (ids) => ({ id: ids.dataplane, projectId: p })],
    ['SetDataplaneURL', (ids) => ({ id: ids.dataplane, url: 'https://dp9.example.com', triggerUpdate: true })],
    ['DeleteDataplane', (ids) => ({ id: ids.dataplane })],
    ['CreateWorkspace', () => ({ customerId: c, workspaceId: 'ws9' })],
    ['UpdateWorkspace', (ids) => ({ id: ids.workspace, name: 'WS 9' })],
    ['SetWorkspaceProject', (ids) => ({ id: ids.workspace, projectId: p })],
    ['SetWorkspaceURL', (ids) => ({ id: ids.workspace, url: 'https://ws9.example.com' })],
    ['CreateProjectGateway', () => ({ customerId: c, workspaceId: 'ws9', projectGatewayId: 'gw9' })],
    ['UpdateProjectGateway', (ids) => ({ id: ids.projectGateway, name: 'GW 9' })],
    ['AttachProjectGatewayProject', (ids) => ({ id: ids.projectGateway, projectId: p })],
    ['DetachProjectGatewayProject', (ids) => ({ id: ids.projectGateway, projectId: p })],
    ['SetProjectGatewayURL', (ids) => ({ id: ids.projectGateway, url: 'https://gw9.example.com' })],
    ['SetProjectGatewayWorkspace', (ids) => ({ id: ids.projectGateway, workspaceId: 'ws1' })],
    ['DeleteProjectGateway', (ids) => ({ id: ids.projectGateway })],
    ['DeleteWorkspace', (ids) => ({ id: ids.workspace })],
    ['CreateUserToken', () => ({ customerId: c, workspaceId: 'ws1', userId: 'carol', organizationUnit: 'ou', role: 'dev' })],
    [
      'CreateProviderConnection',
      () => ({
        customerId: c,
        projectId: p,
        name: 'c9',
        provider: 'echo',
        apiKey: SECRET_KEY,
        options: { headers: { 'x-extra': SECRET_HEADER } },
      }),
    ],
    ['UpdateProviderConnection', (ids) => ({ id: ids.connection, apiKey: SECRET_KEY2 })],
    ['DeleteProviderConnection', (ids) => ({ id: ids.connection })],
    [
      'CreateRoute',
      () => ({ customerId: c, projectId: p, model: 'audit-route-model', targets: [{ connection: fx.connection, model: 'echo' }] }),
    ],
    ['UpdateRoute', (ids) => ({ id: ids.route, enabled: false })],
    ['DeleteRoute', (ids) => ({ id: ids.route })],
    ['CreateApiKey', () => ({ name: 'audit', userId: 'u', enterpriseContext: { customerId: c, projectId: p } })],
    ['RevokeApiKey', (ids) => ({ id: ids.apiKey })],
    ['DeleteProject', () => ({ customerId: c, projectId: 'p2' })],
    ['DeleteCustomer', () => ({ customerId: 'beta' })],
  ];
};

/** Remembers the ids an answer introduces, and every secret it returns. */
const collect = (name: string, body: Body, ids: Record<string, string>) => {
  for (const k of ['model', 'dataplane', 'workspace', 'projectGateway', 'connection', 'route'] as const) {
    const v = body[k] as Body | undefined;
    if (v && typeof v === 'object' && typeof v.id === 'string' && name.startsWith('Create')) ids[k] = v.id;
  }
  if (name === 'CreateApiKey') {
    ids.apiKey = String(body.id);
    secrets.push(String(body.apiKey));
  }
  if (name === 'CreateUserToken') secrets.push(String(body.accessToken));
};

describe('every state-changing operation, from the registry', () => {
  test('the registry marks exactly the state-changing operations (reads are not audited)', () => {
    const names = mutations.map((d) => d.name);
    expect(names.length).toBeGreaterThanOrEqual(46);
    for (const n of names) expect(n).not.toMatch(/^(Get|List|Search|Query)/);
  });

  test('one call each: exactly one entry, with the actor, the declared action and resource, and no secret', async () => {
    const scripted = new Map(script());
    const ids: Record<string, string> = {};
    const problems: string[] = [];
    const order = [...scripted.keys(), ...mutations.map((d) => d.name).filter((n) => !scripted.has(n))];
    for (const name of order) {
      const def = mutations.find((d) => d.name === name);
      if (!def) {
        problems.push(`${name}: scripted but not a state-changing operation of the registry`);
        continue;
      }
      const path = `/${def.service}/${def.name}`;
      // An operation without a script (a new one) is called with its validation-table body: refused or applied, one entry.
      const body = scripted.get(name)?.(ids) ?? OPS.find((o) => o.path === path)?.base(GHOST) ?? {};
      const r = await post(path, body);
      if (scripted.has(name) && r.status !== 200) problems.push(`${name}: ${r.status} ${JSON.stringify(r.body)}`);
      collect(name, r.body, ids);
      expect(r.requestId).toMatch(/^[0-9a-f-]{36}$/);
      const entries = await entriesOf(r.requestId);
      if (entries.length !== 1) {
        problems.push(`${name}: ${entries.length} entries`);
        continue;
      }
      const e = entries[0] as Body;
      const expected = {
        actorType: 'user',
        // A public operation (ExchangeOidcToken) reads no credential: its caller is anonymous.
        userId: def.permission === 'public' ? '' : PLATFORM_ADMIN_USER,
        actionType: def.audit?.actionType,
        resourceType: def.audit?.resourceType,
        endpoint: path,
        httpMethod: 'POST',
        statusCode: r.status,
        success: r.status === 200,
        userAgent: 'audit-test/1',
      };
      const got = Object.fromEntries(Object.keys(expected).map((k) => [k, e[k]]));
      if (JSON.stringify(got) !== JSON.stringify(expected)) problems.push(`${name}: ${JSON.stringify(got)} ≠ ${JSON.stringify(expected)}`);
      if (r.status === 200 && !e.resourceId) problems.push(`${name}: no resourceId`);
      if (!/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/.test(String(e.sourceIp))) problems.push(`${name}: sourceIp ${String(e.sourceIp)}`);
    }
    expect(problems).toEqual([]);
    // Every secret sent or returned above is absent from every entry.
    const all = JSON.stringify(await rows(sql`select * from audit_logs`));
    for (const s of [...secrets, SECRET_KEY, SECRET_HEADER, SECRET_KEY2, SECRET_MCP, SECRET_MCP2]) expect(all.includes(s)).toBe(false);
    const created = (await entriesOf((await post(admin('QueryAuditLogs'), {})).requestId)).length;
    expect(created).toBe(0); // reads leave nothing
  }, 120_000);

  test('secrets are redacted, not dropped: the entry shows where they were', async () => {
    const r = await post(admin('QueryAuditLogs'), { resourceType: 'provider_connection', actionType: 'CREATE', pageSize: 1 });
    const e = (r.body.logs as Body[])[0] as Body;
    expect((e.requestBody as Body).apiKey).toBe('[REDACTED]');
    expect(((e.requestBody as Body).options as Body).headers).toEqual({ 'x-extra': '[REDACTED]' });
    const key = await post(admin('QueryAuditLogs'), { resourceType: 'api_key', actionType: 'CREATE', pageSize: 1 });
    expect(((key.body.logs as Body[])[0] as Body).responseData).toMatchObject({ apiKey: '[REDACTED]' });
  });

  test('a user token is recorded as that user; a client X-Request-ID is kept beside the gateway id', async () => {
    const r = await post(
      admin('UpsertProjectSetting'),
      { customerId: fx.customerId, projectId: fx.projectId, settingName: 'rate-limit', settingValue: '{"requestsPerMinute":5}' },
      aliceToken,
      {
        'x-request-id': 'client-chosen-1',
      },
    );
    expect(r.status).toBe(200);
    expect(r.requestId).not.toBe('client-chosen-1');
    const [e] = await entriesOf(r.requestId);
    expect(e).toMatchObject({
      actorType: 'user',
      userId: 'alice',
      success: true,
      resourceId: `${fx.customerId}/${fx.projectId}/rate-limit`,
    });
    expect(e?.metadata).toMatchObject({ principal: 'user_token', customerId: fx.customerId, clientRequestId: 'client-chosen-1' });
  });

  test('the signing key created on first use is a system entry caused by that request', async () => {
    const r = await post(admin('QueryAuditLogs'), { actorType: 'system', resourceType: 'signing_key' });
    expect(r.body.totalCount).toBe('1');
    const e = (r.body.logs as Body[])[0] as Body;
    expect(e).toMatchObject({ userId: 'system', actionType: 'CREATE', success: true });
    expect(((e.metadata as Body).cause as Body).endpoint).toBe(admin('CreateUserToken'));
  });
});

describe('refused calls', () => {
  const refusal = async (r: Answer) => {
    const entries = await entriesOf(r.requestId);
    expect(entries.length).toBe(1);
    const e = entries[0] as Body;
    expect(e.success).toBe(false);
    expect(e.statusCode).toBe(r.status);
    expect(e.errorMessage).toBe(String(r.body.message));
    expect(e.responseData).toEqual({});
    return e;
  };

  test('authentication, permission, validation, not_found and conflict each leave one refusal entry', async () => {
    const anon = await refusal(await post(admin('CreateCustomer'), { customerId: 'x1' }, ''));
    expect(anon).toMatchObject({ statusCode: 401, userId: '', actorType: 'user', resourceType: 'customer', resourceId: 'x1' });
    expect(anon.metadata).toMatchObject({ principal: 'unauthenticated' });
    const wrong = await refusal(await post(admin('CreateCustomer'), { customerId: 'x1' }, 'not-a-token'));
    expect(wrong.statusCode).toBe(401);
    const denied = await refusal(await post(admin('CreateCustomer'), { customerId: 'x1' }, aliceToken));
    expect(denied).toMatchObject({ statusCode: 403, userId: 'alice' });
    const invalid = await refusal(await post(admin('CreateCustomer'), { customerId: 'Not A Slug', apiKey: SECRET_KEY }));
    expect(invalid).toMatchObject({ statusCode: 400, userId: PLATFORM_ADMIN_USER });
    expect((invalid.requestBody as Body).apiKey).toBe('[REDACTED]');
    const missing = await refusal(await post(admin('DeleteCustomer'), { customerId: 'ghost' }));
    expect(missing.statusCode).toBe(404);
    const dup = await refusal(await post(admin('CreateCustomer'), { customerId: fx.customerId }));
    expect(dup.statusCode).toBe(409);
    const malformed = await fetch(`${tg.adminUrl}${admin('CreateCustomer')}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: '{nope',
    });
    expect(malformed.status).toBe(400);
    await refusal({ status: 400, body: (await malformed.json()) as Body, requestId: malformed.headers.get('x-request-id') ?? '' });
  });

  test('every management answer carries X-Request-ID: reads, errors, health, unknown paths', async () => {
    for (const res of [
      await fetch(`${tg.adminUrl}${admin('ListCustomers')}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        body: '{}',
      }),
      await fetch(`${tg.adminUrl}${admin('GetCustomer')}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        body: '{"customerId":"ghost"}',
      }),
      await fetch(`${tg.adminUrl}/healthz`),
      await fetch(`${tg.adminUrl}/nowhere`, { method: 'POST' }),
    ])
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the entry is part of the change', () => {
  test('entry, change rows and the changed row are written by one transaction', async () => {
    const r = await post(admin('CreateCustomer'), { customerId: 'same-tx' });
    expect(r.status).toBe(200);
    const [a] = await rows(sql`select xmin::text as x from audit_logs where correlation_id = ${r.requestId}`);
    const [c] = await rows(sql`select xmin::text as x from customers where customer_id = 'same-tx'`);
    const changes = await rows(
      sql`select distinct xmin::text as x from config_changes where entity = 'customer' and entity_id = 'same-tx'`,
    );
    expect(a?.x).toBeDefined();
    expect(c?.x).toBe(a?.x);
    expect(changes.map((x) => x.x)).toEqual([a?.x]);
  });

  test('a change that fails after writing leaves only the refusal entry', async () => {
    const deps = { db: tg.gw.store.db, secrets: null as never };
    const spec = defineOp({
      service: 'admin.v1.AdminService',
      group: 'test',
      name: 'FailingCreate',
      summary: 'writes, records a change, then fails',
      permission: 'platform_admin',
      mutates: { action: 'CREATE', resource: 'customer' },
      input: t.Object({ customerId: t.String() }),
      output: t.Object({}),
    });
    const def = mutation(deps, spec, {
      resourceId: (i) => rid(i.customerId),
      handler: async (input, { tx, change }) => {
        await tx.insert(customers).values({ customerId: input.customerId, labels: {} });
        await change({ resource: 'customer', entityId: input.customerId, customerId: input.customerId });
        throw connectError('failed_precondition', 'refused after writing');
      },
    });
    const request = new Request('http://localhost/admin.v1.AdminService/FailingCreate', { method: 'POST' });
    const call = callInfo(request);
    const principal = { kind: 'platform_admin' } as const;
    const error = await def.handler({ customerId: 'half-done' }, { principal, request, call }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    await def.audit?.refused(call, principal, { customerId: 'half-done' }, error);
    expect(await rows(sql`select 1 from customers where customer_id = 'half-done'`)).toEqual([]);
    expect(await rows(sql`select 1 from config_changes where entity_id = 'half-done'`)).toEqual([]);
    const entries = await rows(sql`select success, status_code, error_message from audit_logs where correlation_id = ${call.requestId}`);
    expect(entries).toEqual([{ success: false, status_code: 400, error_message: 'refused after writing' }]);
  });
});
