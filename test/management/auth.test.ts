import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt, decodeProtectedHeader, exportPKCS8, generateKeyPair, SignJWT } from 'jose';
import { admin, apikeyOp, byokOp, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Body, documentedOps } from './support.ts';

/**
 * Management auth: the platform-admin token, user tokens (CreateUserToken) whose project roles come
 * from project members, the owner scope of project gateways, and the role matrix: every operation
 * called by every role, allowed exactly as its documented permission says.
 */

let tg: TestGateway;
const tokens: Record<string, string> = {};
const fx = { modelId: '', dpId: '', wsId: '', gwId: '', byokId: '', bobJti: '', saId: '' };
let uniq = 0;
const U0 = '00000000-0000-4000-8000-000000000000';

const ok = async (op: string, body: Body) => (await tg.must(admin(op), body)) as Record<string, Body>;
const issue = async (userId: string, customerId: string, extra: Body = {}) =>
  (
    (await ok('CreateUserToken', {
      customerId,
      workspaceId: 'ws1',
      userId,
      organizationUnit: 'eng',
      role: 'developer',
      ...extra,
    })) as unknown as { accessToken: string }
  ).accessToken;
const issueJti = async (userId: string, customerId: string) =>
  String((await ok('CreateUserToken', { customerId, workspaceId: 'ws1', userId, organizationUnit: 'eng', role: 'developer' })).jti);
const freshGateway = async () => {
  const g = (await ok('CreateProjectGateway', { customerId: 'acme', workspaceId: 'ws1', projectGatewayId: `fresh-${++uniq}` }))
    .projectGateway as { id: string };
  await ok('AttachProjectGatewayProject', { id: g.id, projectId: 'web' });
  return g.id;
};

beforeAll(async () => {
  tg = await startTestGateway();
  await ok('CreateCustomer', { customerId: 'acme' });
  await ok('CreateCustomer', { customerId: 'globex' });
  await ok('CreateProject', { customerId: 'acme', projectId: 'web' });
  await ok('CreateProject', { customerId: 'acme', projectId: 'other' });
  const members: [string, string, string, 'admin' | 'member'][] = [
    ['alice', 'acme', 'web', 'admin'],
    ['bob', 'acme', 'web', 'member'],
    ['carol', 'acme', 'other', 'admin'],
    ['dave', 'globex', 'default', 'admin'],
    ['zed', 'acme', 'web', 'member'],
  ];
  for (const [userId, customerId, projectId, role] of members) await ok('AddProjectMember', { customerId, projectId, userId, role });
  tokens.alice = await issue('alice', 'acme', { projectId: 'web' });
  tokens.bob = await issue('bob', 'acme');
  tokens.carol = await issue('carol', 'acme');
  tokens.dave = await issue('dave', 'globex');
  fx.modelId = String(((await ok('CreateModel', { model: 'role-model', provider: 'echo' })).model as Body).id);
  await ok('CreateModel', { model: 'fx-route', provider: 'echo' });
  fx.wsId = String(((await ok('CreateWorkspace', { customerId: 'acme', workspaceId: 'ws1' })).workspace as Body).id);
  fx.dpId = String(((await ok('CreateDataplane', { customerId: 'acme', dataplaneId: 'dp1' })).dataplane as Body).id);
  fx.gwId = String(
    ((await ok('CreateProjectGateway', { customerId: 'acme', workspaceId: 'ws1', projectGatewayId: 'gw-main' })).projectGateway as Body).id,
  );
  await ok('AttachProjectGatewayProject', { id: fx.gwId, projectId: 'web' });
  fx.saId = String(((await ok('CreateServiceAccount', { customerId: 'acme', workspaceId: 'ws1' })).serviceAccount as Body).id);
  await ok('CreateProviderConnection', { customerId: 'acme', projectId: 'web', name: 'conn1', provider: 'echo' });
  await ok('CreateRoute', { customerId: 'acme', projectId: 'web', model: 'fx-route', targets: [{ connection: 'conn1', model: 'echo' }] });
  fx.byokId = String(
    (
      (
        await tg.must(byokOp('Register'), {
          customerId: 'acme',
          projectId: 'web',
          provider: 'PROVIDER_OPENAI',
          name: 'fx',
          secret: 'sk-byok-fx-1234',
        })
      ).key as Body
    ).id,
  );
  fx.bobJti = await issueJti('bob', 'acme');
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

type Perm = 'platform_admin' | 'customer_member' | 'project_admin' | 'project_member' | 'authenticated' | 'public';
const ROLES = ['admin', 'alice', 'bob', 'carol', 'dave'] as const;
type Role = (typeof ROLES)[number];
/** Who may call an operation of each permission (scoped to customer acme, project web). */
const ALLOWED: Record<Perm, Role[]> = {
  platform_admin: ['admin'],
  customer_member: ['admin', 'alice', 'bob', 'carol'],
  project_admin: ['admin', 'alice'],
  project_member: ['admin', 'alice', 'bob'],
  authenticated: ['admin', 'alice', 'bob', 'carol', 'dave'],
  public: ['admin', 'alice', 'bob', 'carol', 'dave'],
};

const web = { customerId: 'acme', projectId: 'web' };
const A = (op: string) => admin(op);
/** `allowed`: the roles a handler-level rule narrows the permission to (e.g. BYOK: only the project owner manages project-level keys). */
type Row = [path: string, perm: Perm, body: () => Body | Promise<Body>, allowed?: Role[]];
const flavor = (n: 'Dataplane' | 'Workspace', key: string, id: () => string): Row[] => [
  [A(`Create${n}`), 'platform_admin', () => ({ customerId: 'acme', [key]: `role-${++uniq}` })],
  [A(`Get${n}`), 'customer_member', () => ({ id: id() })],
  [A(`List${n}s`), 'customer_member', () => ({ customerId: 'acme' })],
  [A(`Update${n}`), 'platform_admin', () => ({ id: id(), name: 'n' })],
  [A(`Delete${n}`), 'platform_admin', () => ({ id: U0 })],
  [A(`Set${n}Project`), 'platform_admin', () => ({ id: id(), projectId: 'web' })],
  [A(`Set${n}URL`), 'platform_admin', () => ({ id: id(), url: 'https://plane.example.com' })],
];
const MATRIX: Row[] = [
  [A('CreateModel'), 'platform_admin', () => ({ model: `rm-${++uniq}`, provider: 'echo' })],
  [A('GetModel'), 'authenticated', () => ({ modelId: fx.modelId })],
  [A('ListModels'), 'authenticated', () => ({})],
  [A('UpdateModel'), 'platform_admin', () => ({ modelId: fx.modelId, isEnabled: true })],
  [A('DeleteModel'), 'platform_admin', () => ({ modelId: U0 })],
  [A('CreateCustomer'), 'platform_admin', () => ({ customerId: `rc-${++uniq}` })],
  [A('GetCustomer'), 'customer_member', () => ({ customerId: 'acme' })],
  [A('ListCustomers'), 'platform_admin', () => ({})],
  [A('UpdateCustomer'), 'platform_admin', () => ({ customerId: 'acme', description: 'd' })],
  [A('DeleteCustomer'), 'platform_admin', () => ({ customerId: 'ghost' })],
  [A('CreateProject'), 'platform_admin', () => ({ customerId: 'acme', projectId: `rp-${++uniq}` })],
  [A('GetProject'), 'project_member', () => web],
  [A('ListProjects'), 'customer_member', () => ({ customerId: 'acme' })],
  [A('UpdateProject'), 'project_admin', () => ({ ...web, description: 'd' })],
  [A('DeleteProject'), 'platform_admin', () => ({ customerId: 'acme', projectId: 'ghost' })],
  [A('AddProjectMember'), 'project_admin', () => ({ ...web, userId: `m-${++uniq}`, role: 'member' })],
  [A('UpdateProjectMember'), 'project_admin', () => ({ ...web, userId: 'zed', role: 'member' })],
  [A('RemoveProjectMember'), 'project_admin', () => ({ ...web, userId: 'nobody' })],
  [A('ListProjectMembers'), 'project_member', () => web],
  [A('AddProjectModel'), 'project_admin', () => ({ ...web, modelId: fx.modelId })],
  [A('RemoveProjectModel'), 'project_admin', () => ({ ...web, modelId: U0 })],
  [A('ListProjectModels'), 'project_member', () => web],
  [A('AddProjectProvider'), 'project_admin', () => ({ ...web, providerName: 'openai' })],
  [A('RemoveProjectProvider'), 'project_admin', () => ({ ...web, providerName: 'cohere' })],
  [A('ListProjectProviders'), 'project_member', () => web],
  [A('AddProjectMcpServer'), 'project_admin', () => ({ ...web, serverId: 'srv' })],
  [A('RemoveProjectMcpServer'), 'project_admin', () => ({ ...web, serverId: 'none' })],
  [A('ListProjectMcpServers'), 'project_member', () => web],
  [A('CreateMcpServer'), 'platform_admin', () => ({ serverId: `mcp-${++uniq}`, url: 'https://93.184.216.34/mcp' })],
  [A('GetMcpServer'), 'authenticated', () => ({ serverId: 'none' })],
  [A('ListMcpServers'), 'authenticated', () => ({})],
  [A('UpdateMcpServer'), 'platform_admin', () => ({ serverId: 'none' })],
  [A('DeleteMcpServer'), 'platform_admin', () => ({ serverId: 'none' })],
  [A('CreateMcpProfile'), 'project_admin', () => ({ ...web, profileId: `p-${++uniq}`, servers: [{ serverId: 'none' }] })],
  [A('GetMcpProfile'), 'project_member', () => ({ ...web, profileId: 'none' })],
  [A('ListMcpProfiles'), 'project_member', () => web],
  [A('UpdateMcpProfile'), 'project_admin', () => ({ ...web, profileId: 'none' })],
  [A('DeleteMcpProfile'), 'project_admin', () => ({ ...web, profileId: 'none' })],
  [A('ApproveMcpTools'), 'project_admin', () => ({ ...web, profileId: 'none' })],
  // A2A agents: the catalog is the platform admin's (its card fetched before the write: authorised first).
  [A('CreateA2aAgent'), 'platform_admin', () => ({ agentId: `a-${++uniq}`, cardUrl: 'http://127.0.0.1:9/.well-known/agent-card.json' })],
  [A('GetA2aAgent'), 'authenticated', () => ({ agentId: 'none' })],
  [A('ListA2aAgents'), 'authenticated', () => ({})],
  [A('UpdateA2aAgent'), 'platform_admin', () => ({ agentId: 'none', description: 'matrix' })],
  [A('RefreshA2aAgent'), 'platform_admin', () => ({ agentId: 'none' })],
  [A('DeleteA2aAgent'), 'platform_admin', () => ({ agentId: 'none' })],
  [A('AddProjectA2aAgent'), 'project_admin', () => ({ ...web, agentId: 'none' })],
  [A('RemoveProjectA2aAgent'), 'project_admin', () => ({ ...web, agentId: 'none' })],
  [A('ListProjectA2aAgents'), 'project_member', () => web],
  // The project's credential: its admins (a member's own: that member; see test/mcp-credentials.test.ts).
  [A('SetMcpServerCredential'), 'project_member', () => ({ ...web, serverId: 'none', authValue: 'matrix-credential' }), ['admin', 'alice']],
  [A('DeleteMcpServerCredential'), 'project_member', () => ({ ...web, serverId: 'none' }), ['admin', 'alice']],
  [A('ListMcpServerCredentials'), 'project_member', () => web],
  [A('GetProjectSettings'), 'project_member', () => web],
  [A('GetTargetHealth'), 'project_member', () => web],
  [A('UpsertProjectSetting'), 'project_admin', () => ({ ...web, settingName: 'rate-limit', settingValue: '{"requestsPerMinute":300}' })],
  [A('DeleteProjectSetting'), 'project_admin', () => ({ ...web, settingName: 'global-fallback' })],
  [A('UpsertBudget'), 'project_admin', () => ({ ...web, name: `b-${++uniq}`, limitUsd: '10', period: 'day' })],
  [A('GetBudget'), 'project_member', () => ({ ...web, name: 'none' })],
  [A('ListBudgets'), 'project_member', () => web],
  [A('DeleteBudget'), 'project_admin', () => ({ ...web, name: 'none' })],
  [
    A('CreateGuardrail'),
    'project_admin',
    () => ({ ...web, name: `g-${++uniq}`, stage: 'input', kind: 'pii', piiTypes: ['email'], action: 'flag' }),
  ],
  [A('GetGuardrail'), 'project_member', () => ({ ...web, name: 'none' })],
  [A('ListGuardrails'), 'project_member', () => web],
  [A('UpdateGuardrail'), 'project_admin', () => ({ ...web, name: 'none', action: 'flag' })],
  [A('DeleteGuardrail'), 'project_admin', () => ({ ...web, name: 'none' })],
  ...flavor('Dataplane', 'dataplaneId', () => fx.dpId),
  ...flavor('Workspace', 'workspaceId', () => fx.wsId),
  [A('CreateProjectGateway'), 'platform_admin', () => ({ customerId: 'acme', workspaceId: 'ws1', projectGatewayId: `rg-${++uniq}` })],
  [A('GetProjectGateway'), 'project_member', () => ({ id: fx.gwId, projectId: 'web' })],
  [A('ListProjectGateways'), 'customer_member', () => ({ customerId: 'acme' })],
  [A('UpdateProjectGateway'), 'project_admin', () => ({ id: fx.gwId, projectId: 'web', name: 'n' })],
  [A('DeleteProjectGateway'), 'project_admin', async () => ({ id: await freshGateway(), projectId: 'web' })],
  [A('AttachProjectGatewayProject'), 'project_admin', () => ({ id: fx.gwId, projectId: 'web' })],
  [A('DetachProjectGatewayProject'), 'project_admin', async () => ({ id: await freshGateway(), projectId: 'web' })],
  [A('SetProjectGatewayURL'), 'project_admin', () => ({ id: fx.gwId, projectId: 'web', url: 'https://role.example.com' })],
  [A('SetProjectGatewayWorkspace'), 'platform_admin', () => ({ id: fx.gwId, workspaceId: 'ws1' })],
  [A('CreateUserToken'), 'platform_admin', () => ({ customerId: 'acme', workspaceId: 'w', userId: 'x', organizationUnit: 'o', role: 'r' })],
  [A('GetUserToken'), 'customer_member', () => ({ jti: fx.bobJti })],
  [A('ListUserTokens'), 'customer_member', () => ({ customerId: 'acme' })],
  [A('RevokeUserToken'), 'customer_member', async () => ({ jti: await issueJti('bob', 'acme'), reason: 'matrix' })],
  [A('RotateUserTokenSigningKey'), 'platform_admin', () => ({})],
  [A('CreateScimToken'), 'platform_admin', () => ({ customerId: 'acme' })],
  [A('ListScimTokens'), 'platform_admin', () => ({ customerId: 'acme' })],
  [A('RevokeScimToken'), 'platform_admin', () => ({ id: U0 })],
  // No credential needed (the ID token is one); without an issuer configured: failed_precondition, never 401/403.
  [A('ExchangeOidcToken'), 'public', () => ({ idToken: 'h.p.s' })],
  [
    byokOp('Register'),
    'project_member',
    () => ({ ...web, provider: 'PROVIDER_ANTHROPIC', name: `r-${++uniq}`, secret: 'sk-ant-matrix-9876' }),
    ['admin', 'alice'],
  ],
  [byokOp('Get'), 'project_member', () => ({ ...web, id: fx.byokId })],
  [byokOp('List'), 'project_member', () => web],
  [byokOp('Revoke'), 'project_member', () => ({ ...web, id: 'byok_none' })],
  [byokOp('Fetch'), 'project_member', () => ({ id: fx.byokId }), ['admin', 'alice']],
  [A('CreateServiceAccount'), 'platform_admin', () => ({ customerId: 'acme', workspaceId: 'ws1' })],
  [A('GetServiceAccount'), 'customer_member', () => ({ id: fx.saId })],
  [A('ListServiceAccounts'), 'customer_member', () => ({ customerId: 'acme' })],
  [A('RevokeServiceAccount'), 'platform_admin', () => ({ id: U0 })],
  [A('RestoreServiceAccount'), 'platform_admin', () => ({ id: U0 })],
  [A('CreateProviderConnection'), 'project_admin', () => ({ ...web, name: `rconn-${++uniq}`, provider: 'echo' })],
  [A('GetProviderConnection'), 'project_member', () => ({ ...web, name: 'conn1' })],
  [A('ListProviderConnections'), 'project_member', () => web],
  [A('UpdateProviderConnection'), 'project_admin', () => ({ ...web, name: 'conn1', baseUrl: 'http://upstream.example' })],
  [A('DeleteProviderConnection'), 'project_admin', () => ({ ...web, name: 'none' })],
  [A('CreateRoute'), 'project_admin', () => ({ ...web, model: 'role-model', targets: [{ connection: 'conn1', model: 'echo' }] })],
  [A('GetRoute'), 'project_member', () => ({ ...web, model: 'fx-route' })],
  [A('ListRoutes'), 'project_member', () => web],
  [A('UpdateRoute'), 'project_admin', () => ({ ...web, model: 'fx-route', enabled: true })],
  [A('DeleteRoute'), 'project_admin', () => ({ ...web, model: 'none' })],
  [apikeyOp('CreateApiKey'), 'project_admin', () => ({ name: 'k', enterpriseContext: web })],
  [apikeyOp('ListApiKeys'), 'project_member', () => web],
  [apikeyOp('RevokeApiKey'), 'project_admin', () => ({ id: U0, ...web })],
  [A('SearchRequestRecords'), 'project_member', () => web],
  [A('GetUsage'), 'project_member', () => web],
  [A('GetConfigStatus'), 'authenticated', () => ({})],
  [A('QueryAuditLogs'), 'platform_admin', () => ({})],
  [A('GetAuditLog'), 'platform_admin', () => ({ id: U0 })],
  [A('ListAuditCheckpoints'), 'platform_admin', () => ({})],
  [A('GetAuditInclusionProof'), 'platform_admin', () => ({ auditLogId: U0 })],
  [A('RotateAuditSigningKey'), 'platform_admin', () => ({})],
  [
    A('CreateTelemetryConfig'),
    'platform_admin',
    () => ({ userId: 'ops', telemetryType: 'traces', sinkUrl: 'http://sink.invalid:1', protocol: 'http/json', authType: 'none' }),
  ],
  [A('GetTelemetryConfig'), 'platform_admin', () => ({ id: U0 })],
  [A('ListTelemetryConfigs'), 'platform_admin', () => ({})],
  [A('UpdateTelemetryConfig'), 'platform_admin', () => ({ id: U0, enabled: false })],
  [A('DeleteTelemetryConfig'), 'platform_admin', () => ({ id: U0 })],
  [A('TestAuditForward'), 'platform_admin', () => ({ sinkUrl: 'http://sink.invalid:1', protocol: 'http/json', authType: 'none' })],
  [A('TriggerAuditForward'), 'platform_admin', () => ({})],
];

const tokenOf = (role: Role): string => (role === 'admin' ? 'test-admin-token-0123456789' : (tokens[role] as string));

describe('role matrix', () => {
  test('every documented operation is in the matrix, with its documented permission', async () => {
    const documented = await documentedOps(tg);
    const paths = [...documented.keys()];
    expect(MATRIX.map((r) => r[0]).sort()).toEqual(paths.sort());
    for (const [path, perm] of MATRIX) {
      const d = documented.get(path);
      expect({ path, perm: d?.permission }).toEqual({ path, perm });
      expect(d?.description).toContain(`Required permission:** \`${perm}\``);
    }
  });

  // One test per cell (operation × role); denied roles first: allowed calls may change what later calls see.
  for (const [path, perm, body, narrowed] of MATRIX) {
    const name = path.split('/').pop() as string;
    const allowedRoles = narrowed ?? ALLOWED[perm];
    const order = [...ROLES].sort((a, b) => Number(allowedRoles.includes(a)) - Number(allowedRoles.includes(b)));
    for (const role of order) {
      const allowed = allowedRoles.includes(role);
      test(`${name} (${perm}) × ${role}: ${allowed ? 'allowed' : 'permission_denied'}`, async () => {
        const r = await tg.call(path, await body(), tokenOf(role));
        const got = `${r.status === 403 ? String(r.body.code) : r.status === 401 ? 'unauthenticated' : 'allowed'}${r.status >= 500 ? ` (${r.status})` : ''}`;
        expect(got).toBe(allowed ? 'allowed' : 'permission_denied');
      });
    }
  }

  test('no token, a malformed header, a wrong token: unauthenticated on every operation', async () => {
    for (const [path, , body] of MATRIX.slice(0, 8)) {
      for (const token of ['', 'wrong-token', 'a.b.c']) {
        const r = await tg.call(path, await body(), token);
        expect(r.status).toBe(401);
        expect(r.body.code).toBe('unauthenticated');
      }
    }
    const raw = await fetch(`${tg.adminUrl}${admin('GetModel')}`, {
      method: 'POST',
      headers: { authorization: 'Basic abc', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(raw.status).toBe(401);
  });

  test('authentication comes before validation: an unauthenticated caller learns nothing about the schema', async () => {
    const r = await tg.call(admin('CreateCustomer'), { bogus: 1 }, '');
    expect(r.status).toBe(401);
  });
});

describe('user tokens', () => {
  test('CreateUserToken: response shape and claims (sub, customer, project, role, jti; RS256 with kid)', async () => {
    const r = (await ok('CreateUserToken', {
      customerId: 'acme',
      workspaceId: 'ws1',
      userId: 'alice',
      organizationUnit: 'eng',
      role: 'lead',
      projectId: 'web',
      scopes: ['read', 'write'],
      expiresInDays: '2',
    })) as unknown as Record<string, string>;
    expect(r.tokenType).toBe('Bearer');
    expect(r.expiresIn).toBe(String(2 * 86_400));
    expect(r.keyHash).toBe(r.jti);
    expect(r.keyAddress).toBe(Bun.hash.xxHash64('alice').toString(16).padStart(16, '0'));
    expect(r.keyPrefix).toBe(Bun.hash.xxHash64(String(r.jti)).toString(16).padStart(16, '0').slice(0, 12));
    const header = decodeProtectedHeader(String(r.accessToken));
    expect(header.alg).toBe('RS256');
    expect(typeof header.kid).toBe('string');
    const claims = decodeJwt(String(r.accessToken));
    expect(claims).toMatchObject({ sub: 'alice', customer: 'acme', project: 'web', role: 'lead', jti: r.jti, scopes: ['read', 'write'] });
    expect(Math.abs(Number(claims.exp) * 1000 - Date.parse(String(r.expiresAt)))).toBeLessThan(1000);
    // no project given: no project claim (the default project)
    expect(decodeJwt(await issue('bob', 'acme')).project).toBeUndefined();
  });

  test('a non-default project requires membership; an unknown customer or project is not_found', async () => {
    const r = await tg.call(admin('CreateUserToken'), {
      customerId: 'acme',
      workspaceId: 'w',
      userId: 'bob',
      organizationUnit: 'o',
      role: 'r',
      projectId: 'other',
    });
    expect(r.body.code).toBe('failed_precondition');
    expect(
      (await tg.call(admin('CreateUserToken'), { customerId: 'nope', workspaceId: 'w', userId: 'u', organizationUnit: 'o', role: 'r' }))
        .body.code,
    ).toBe('not_found');
    expect(
      (
        await tg.call(admin('CreateUserToken'), {
          customerId: 'acme',
          workspaceId: 'w',
          userId: 'u',
          organizationUnit: 'o',
          role: 'r',
          projectId: 'nope',
        })
      ).body.code,
    ).toBe('not_found');
  });

  test('roles follow project membership at once: promote, demote, remove', async () => {
    await ok('AddProjectMember', { ...web, userId: 'erin', role: 'member' });
    const erin = await issue('erin', 'acme');
    const update = () => tg.call(admin('UpdateProject'), { ...web, description: 'by erin' }, erin);
    expect((await update()).status).toBe(403);
    await ok('UpdateProjectMember', { ...web, userId: 'erin', role: 'admin' });
    expect((await update()).status).toBe(200);
    await ok('UpdateProjectMember', { ...web, userId: 'erin', role: 'member' });
    expect((await update()).status).toBe(403);
    expect((await tg.call(admin('GetProject'), web, erin)).status).toBe(200);
    await ok('RemoveProjectMember', { ...web, userId: 'erin' });
    expect((await tg.call(admin('GetProject'), web, erin)).status).toBe(403);
  });

  test('a user sees only the projects it has a role in', async () => {
    const r = await tg.call(admin('ListProjects'), { customerId: 'acme' }, tokens.bob);
    expect((r.body.projects as Body[]).map((p) => p.projectId)).toEqual(['web']);
    const g = await tg.call(admin('ListProjectGateways'), { customerId: 'acme' }, tokens.carol);
    expect(g.body.projectGateways).toEqual([]);
  });

  test('impersonation tokens are not persisted but work; forged, tampered and foreign tokens do not', async () => {
    const imp = (await ok('CreateUserToken', {
      customerId: 'acme',
      workspaceId: 'w',
      userId: 'bob',
      organizationUnit: 'o',
      role: 'r',
      impersonate: true,
      impersonationMetadata: { impersonatorKey: 'support-1', reason: 'ticket 42', context: { ticket: '42' } },
    })) as unknown as { accessToken: string };
    expect(decodeJwt(imp.accessToken)).toMatchObject({ imp: true, act: { sub: 'support-1' } });
    expect((await tg.call(admin('GetProject'), web, imp.accessToken)).status).toBe(200);

    const [h, p, s] = (tokens.bob as string).split('.');
    const claims = JSON.parse(Buffer.from(String(p), 'base64url').toString()) as Body;
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'alice' })).toString('base64url')}.${s}`;
    expect((await tg.call(admin('GetProject'), web, tampered)).status).toBe(401);

    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    expect(await exportPKCS8(privateKey)).toContain('PRIVATE KEY');
    const forged = await new SignJWT({ customer: 'acme', imp: true })
      .setProtectedHeader({ alg: 'RS256', kid: String(decodeProtectedHeader(tokens.bob as string).kid) })
      .setSubject('alice')
      .setJti('x')
      .setIssuer('ai-gateway')
      .setAudience('ai-gateway')
      .setExpirationTime('1h')
      .sign(privateKey);
    expect((await tg.call(admin('GetProject'), web, forged)).status).toBe(401);
    const hs = await new SignJWT({ customer: 'acme', imp: true })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .sign(new TextEncoder().encode('k'.repeat(32)));
    expect((await tg.call(admin('GetProject'), web, hs)).status).toBe(401);
  });

  test("a deleted customer's tokens stop working", async () => {
    await ok('CreateCustomer', { customerId: 'doomed' });
    await ok('AddProjectMember', { customerId: 'doomed', projectId: 'default', userId: 'u', role: 'admin' });
    const t = await issue('u', 'doomed');
    expect((await tg.call(admin('GetProject'), { customerId: 'doomed', projectId: 'default' }, t)).status).toBe(200);
    await ok('DeleteCustomer', { customerId: 'doomed' });
    expect((await tg.call(admin('GetProject'), { customerId: 'doomed', projectId: 'default' }, t)).status).toBe(401);
  });
});

describe('owner scope on project gateways', () => {
  test('a project owner must name a project it owns that the gateway serves; ignored for platform admins', async () => {
    const get = (body: Body, token: string) => tg.call(admin('GetProjectGateway'), body, token);
    expect((await get({ id: fx.gwId }, tokens.alice as string)).body.code).toBe('permission_denied');
    expect((await get({ id: fx.gwId, projectId: 'web' }, tokens.alice as string)).status).toBe(200);
    // carol owns 'other', which the gateway does not serve
    const carol = await get({ id: fx.gwId, projectId: 'other' }, tokens.carol as string);
    expect(carol.body.code).toBe('permission_denied');
    expect(String(carol.body.message)).toContain("does not serve project 'other'");
    // bob is a member (reads) but not an owner (manages)
    expect(
      (await tg.call(admin('SetProjectGatewayURL'), { id: fx.gwId, projectId: 'web', url: 'bob.example.com' }, tokens.bob as string)).body
        .code,
    ).toBe('permission_denied');
    // platform admin: projectId ignored, even one the gateway does not serve
    expect((await get({ id: fx.gwId, projectId: 'other' }, 'test-admin-token-0123456789')).status).toBe(200);
    expect((await get({ id: fx.gwId }, 'test-admin-token-0123456789')).status).toBe(200);
    // a user of another customer learns nothing more than permission_denied
    expect((await get({ id: fx.gwId, projectId: 'default' }, tokens.dave as string)).body.code).toBe('permission_denied');
  });
});
