import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import type { OpDef } from '../../src/control-plane/connect.ts';
import { managementOps } from '../../src/control-plane/index.ts';
import { admin, apikeyOp, byokOp, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Body, documentedOps } from './support.ts';

/**
 * The worked example of docs/management-api.md, from a customer to a served request, extended so
 * that every operation succeeds once — and every 200 body matches the response schema the OpenAPI
 * document publishes (the same `t` schema). Also: the OpenAPI document and its offline UI.
 */

let tg: TestGateway;
const defs = new Map<string, OpDef>();
const succeeded = new Set<string>();
const problems: string[] = [];

beforeAll(async () => {
  tg = await startTestGateway();
  // Schemas only (handlers are never called here).
  for (const d of managementOps(
    { db: null as never, secrets: null as never },
    { flushRecords: async () => {}, localStatus: () => undefined },
  ))
    defs.set(`/${d.service}/${d.name}`, d);
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

/** Calls an operation, expects 200 and a body matching the documented response schema. */
const call = async (path: string, body: Body): Promise<Record<string, Body> & Body> => {
  const r = await tg.call(path, body);
  if (r.status !== 200) throw new Error(`${path} → ${r.status} ${JSON.stringify(r.body)}`);
  const def = defs.get(path);
  if (!def) throw new Error(`no definition for ${path}`);
  if (!Value.Check(def.output, r.body)) {
    const e = Value.Errors(def.output, r.body).First();
    problems.push(`${path}: ${e?.path} ${e?.message}`);
  }
  succeeded.add(path);
  return r.body as Record<string, Body> & Body;
};
const A = admin;

describe('worked example: customer → served request', () => {
  test('every step, then an inference request through the new key', async () => {
    await call(A('CreateCustomer'), { customerId: 'acme', name: 'Acme Inc.', labels: { tier: 'gold' } });
    await call(A('CreateProject'), { customerId: 'acme', projectId: 'web', name: 'Web shop' });
    const model = (
      await call(A('CreateModel'), {
        model: 'echo-chat',
        provider: 'echo',
        mode: 'chat',
        capabilities: ['chat', 'tools'],
        contextWindow: 8192,
        maxOutputTokens: 1024,
        inputPricePerMillion: 0.5,
        outputPricePerMillion: 1.5,
      })
    ).model as Body;
    await call(A('AddProjectModel'), { customerId: 'acme', projectId: 'web', modelId: model.id });
    await call(A('CreateProviderConnection'), { customerId: 'acme', projectId: 'web', name: 'echo', provider: 'echo' });
    await call(A('CreateRoute'), {
      customerId: 'acme',
      projectId: 'web',
      model: 'echo-chat',
      targets: [{ connection: 'echo', model: 'echo' }],
    });
    const key = await call(apikeyOp('CreateApiKey'), {
      name: 'web-backend',
      userId: 'svc-web',
      enterpriseContext: { customerId: 'acme', projectId: 'web' },
    });
    expect(String(key.apiKey)).toMatch(/^sk-[A-Za-z0-9_-]{32,}$/);
    const res = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${String(key.apiKey)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'echo-chat', messages: [{ role: 'user', content: 'Hello, gateway!' }] }),
    });
    expect(res.status).toBe(200);
    const models = (await (await fetch(`${tg.url}/v1/models`, { headers: { authorization: `Bearer ${String(key.apiKey)}` } })).json()) as {
      data: { id: string }[];
    };
    expect(models.data.map((m) => m.id)).toEqual(['echo-chat']);
    const status = await call(A('GetConfigStatus'), {});
    expect((status.dataplanes as unknown as Body[])[0]).toMatchObject({ dataplaneId: 'local', stage: 'serving' });
  });

  test('the rest of the API, each operation once', async () => {
    const web = { customerId: 'acme', projectId: 'web' };
    const modelId = String(((await call(A('ListModels'), {})).models as unknown as Body[])[0]?.id);
    await call(A('GetModel'), { modelId });
    await call(A('UpdateModel'), { modelId, outputPricePerMillion: 2 });
    await call(A('GetCustomer'), { customerId: 'acme' });
    await call(A('ListCustomers'), {});
    await call(A('UpdateCustomer'), { customerId: 'acme', description: 'our first customer' });
    await call(A('GetProject'), web);
    await call(A('ListProjects'), { customerId: 'acme' });
    await call(A('UpdateProject'), { ...web, labels: { team: 'shop' } });
    await call(A('AddProjectMember'), { ...web, userId: 'alice', role: 'member' });
    await call(A('UpdateProjectMember'), { ...web, userId: 'alice', role: 'admin' });
    await call(A('ListProjectMembers'), web);
    await call(A('ListProjectModels'), web);
    await call(A('AddProjectProvider'), { ...web, providerName: 'openai' });
    await call(A('ListProjectProviders'), web);
    await call(A('RemoveProjectProvider'), { ...web, providerName: 'openai' });
    await call(A('CreateMcpServer'), {
      serverId: 'github',
      url: 'https://93.184.216.34/mcp',
      authType: 'bearer',
      authValue: 'ghp-lifecycle-secret',
    });
    await call(A('GetMcpServer'), { serverId: 'github' });
    await call(A('ListMcpServers'), {});
    await call(A('UpdateMcpServer'), { serverId: 'github', description: 'GitHub tools' });
    await call(A('AddProjectMcpServer'), { ...web, serverId: 'github' });
    await call(A('ListProjectMcpServers'), web);
    await call(A('CreateMcpProfile'), { ...web, profileId: 'dev', servers: [{ serverId: 'github', tools: ['search_*'] }] });
    await call(A('GetMcpProfile'), { ...web, profileId: 'dev' });
    await call(A('ListMcpProfiles'), web);
    await call(A('UpdateMcpProfile'), { ...web, profileId: 'dev', servers: [{ serverId: 'github', prefix: '' }] });
    // Pinned: approving pins what the data planes last listed (nothing yet here; test/mcp-pins.test.ts lists a real server).
    await call(A('UpdateMcpProfile'), { ...web, profileId: 'dev', servers: [{ serverId: 'github', prefix: '', pin: true }] });
    await call(A('ApproveMcpTools'), { ...web, profileId: 'dev' });
    // The route targets' breakers as this project's data planes see them (test/circuit-breaker.test.ts opens one).
    await call(A('GetTargetHealth'), web);
    await call(A('SetMcpServerCredential'), { ...web, serverId: 'github', authValue: 'ghp-project-credential' });
    await call(A('ListMcpServerCredentials'), web);
    await call(A('DeleteMcpServerCredential'), { ...web, serverId: 'github' });
    await call(A('DeleteMcpProfile'), { ...web, profileId: 'dev' });
    await call(A('RemoveProjectMcpServer'), { ...web, serverId: 'github' });
    await call(A('DeleteMcpServer'), { serverId: 'github' });
    // An A2A agent (contract §12): its card is fetched from a listener of the test's own.
    const card = JSON.stringify({
      name: 'Helper',
      supportedInterfaces: [{ url: 'http://127.0.0.1:1/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      skills: [{ id: 'help', name: 'Help' }],
    });
    const cards = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => new Response(card, { headers: { 'content-type': 'application/json' } }),
    });
    try {
      const cardUrl = `http://127.0.0.1:${cards.port}/.well-known/agent-card.json`;
      await call(A('CreateA2aAgent'), { agentId: 'helper', cardUrl, authType: 'bearer', authValue: 'agent-lifecycle-secret' });
      await call(A('GetA2aAgent'), { agentId: 'helper' });
      await call(A('ListA2aAgents'), {});
      await call(A('UpdateA2aAgent'), { agentId: 'helper', description: 'helps' });
      await call(A('RefreshA2aAgent'), { agentId: 'helper' });
      await call(A('AddProjectA2aAgent'), { ...web, agentId: 'helper' });
      await call(A('ListProjectA2aAgents'), web);
      await call(A('RemoveProjectA2aAgent'), { ...web, agentId: 'helper' });
      await call(A('DeleteA2aAgent'), { agentId: 'helper' });
    } finally {
      cards.stop(true);
    }
    await call(A('UpsertProjectSetting'), { ...web, settingName: 'rate-limit', settingValue: '{"requestsPerMinute":600}' });
    await call(A('GetProjectSettings'), web);
    await call(A('DeleteProjectSetting'), { ...web, settingName: 'rate-limit' });
    const budget = (await call(A('UpsertBudget'), { ...web, name: 'monthly', limitUsd: '25.5', period: 'month' })).budget as Body;
    await call(A('GetBudget'), { id: budget.id });
    await call(A('ListBudgets'), web);
    await call(A('DeleteBudget'), { ...web, name: 'monthly' });
    await call(A('CreateGuardrail'), { ...web, name: 'pii', stage: 'both', kind: 'pii', piiTypes: ['email'], action: 'redact' });
    await call(A('GetGuardrail'), { ...web, name: 'pii' });
    await call(A('ListGuardrails'), web);
    await call(A('UpdateGuardrail'), { ...web, name: 'pii', action: 'flag' });
    await call(A('DeleteGuardrail'), { ...web, name: 'pii' });

    const dp = (await call(A('CreateDataplane'), { customerId: 'acme', dataplaneId: 'eu-1', projectId: 'web' })).dataplane as Body;
    await call(A('GetDataplane'), { id: dp.id });
    await call(A('ListDataplanes'), { customerId: 'acme' });
    await call(A('UpdateDataplane'), { id: dp.id, name: 'EU 1' });
    await call(A('SetDataplaneProject'), { id: dp.id });
    await call(A('SetDataplaneURL'), { id: dp.id, url: 'https://eu-1.gw.example.com', triggerUpdate: true });
    const ws = (await call(A('CreateWorkspace'), { customerId: 'acme', workspaceId: 'us-1' })).workspace as Body;
    await call(A('GetWorkspace'), { id: ws.id });
    await call(A('ListWorkspaces'), { customerId: 'acme' });
    await call(A('UpdateWorkspace'), { id: ws.id, description: 'US' });
    await call(A('SetWorkspaceProject'), { id: ws.id, projectId: 'web' });
    await call(A('SetWorkspaceURL'), { id: ws.id, url: 'https://us-1.gw.example.com', triggerUpdate: false });

    const gw = (await call(A('CreateProjectGateway'), { customerId: 'acme', workspaceId: 'eu-1', projectGatewayId: 'shop' }))
      .projectGateway as Body;
    await call(A('AttachProjectGatewayProject'), { id: gw.id, projectId: 'web' });
    await call(A('SetProjectGatewayURL'), { id: gw.id, url: 'https://shop.example.com' });
    await call(A('GetProjectGateway'), { id: gw.id });
    await call(A('ListProjectGateways'), { customerId: 'acme' });
    await call(A('UpdateProjectGateway'), { id: gw.id, name: 'Shop' });
    await call(A('SetProjectGatewayWorkspace'), { id: gw.id, workspaceId: 'us-1' });
    await call(A('DetachProjectGatewayProject'), { id: gw.id, projectId: 'web' });
    await call(A('DeleteProjectGateway'), { id: gw.id });
    await call(A('DeleteWorkspace'), { id: ws.id });
    await call(A('DeleteDataplane'), { id: dp.id });

    const ut = await call(A('CreateUserToken'), {
      customerId: 'acme',
      workspaceId: 'eu-1',
      userId: 'alice',
      organizationUnit: 'eng',
      role: 'developer',
      projectId: 'web',
    });
    await call(A('GetUserToken'), { jti: ut.jti });
    await call(A('ListUserTokens'), { customerId: 'acme', userId: 'alice' });
    await call(A('RevokeUserToken'), { jti: ut.jti, reason: 'done' });
    await call(A('RotateUserTokenSigningKey'), {});
    const st = (await call(A('CreateScimToken'), { customerId: 'acme', name: 'idp' })).scimToken as Body;
    await call(A('ListScimTokens'), { customerId: 'acme' });
    await call(A('RevokeScimToken'), { id: st.id });
    const bk = (await call(byokOp('Register'), { ...web, provider: 'PROVIDER_OPENAI', name: 'team', secret: 'sk-lifecycle-byok-1234' }))
      .key as Body;
    await call(byokOp('Get'), { ...web, id: bk.id });
    await call(byokOp('List'), web);
    await call(byokOp('Fetch'), { id: bk.id });
    await call(byokOp('Revoke'), { ...web, id: bk.id });
    await call(A('CreateWorkspace'), { customerId: 'acme', workspaceId: 'sa-ws' });
    const sa = (await call(A('CreateServiceAccount'), { customerId: 'acme', workspaceId: 'sa-ws', scopes: ['dataplane'] }))
      .serviceAccount as Body;
    await call(A('GetServiceAccount'), { id: sa.id });
    await call(A('ListServiceAccounts'), { customerId: 'acme', workspaceId: 'sa-ws' });
    await call(A('RevokeServiceAccount'), { id: sa.id, reason: 'rotation' });
    await call(A('RestoreServiceAccount'), { id: sa.id });

    await call(A('GetProviderConnection'), { ...web, name: 'echo' });
    await call(A('ListProviderConnections'), web);
    await call(A('UpdateProviderConnection'), { ...web, name: 'echo', options: { note: 'x' } });
    await call(A('GetRoute'), { ...web, model: 'echo-chat' });
    await call(A('ListRoutes'), web);
    await call(A('UpdateRoute'), { ...web, model: 'echo-chat', timeoutMs: 30_000, maxRetries: 1 });
    const keys = (await call(apikeyOp('ListApiKeys'), web)).apiKeys as unknown as Body[];
    await call(A('SearchRequestRecords'), { customerId: 'acme' });
    await call(A('GetUsage'), { customerId: 'acme', groupBy: 'model' });
    await call(apikeyOp('RevokeApiKey'), { id: String(keys[0]?.id) });
    await call(A('DeleteRoute'), { ...web, model: 'echo-chat' });
    await call(A('DeleteProviderConnection'), { ...web, name: 'echo' });
    await call(A('RemoveProjectModel'), { ...web, modelId });
    await call(A('RemoveProjectMember'), { ...web, userId: 'alice' });
    await call(A('DeleteModel'), { modelId });
    await call(A('DeleteProject'), web);
    await call(A('DeleteCustomer'), { customerId: 'acme' });

    // Audit checkpoints and telemetry forwarding (test/audit-*.test.ts go deeper).
    await call(A('ListAuditCheckpoints'), { rebuild: true });
    await call(A('GetAuditInclusionProof'), { auditLogId: '00000000-0000-4000-8000-000000000000' });
    await call(A('RotateAuditSigningKey'), { reason: 'worked example' });
    const tc = (
      await call(A('CreateTelemetryConfig'), {
        userId: 'ops',
        telemetryType: 'audit_logs',
        sinkUrl: 'http://sink.invalid:1',
        protocol: 'http/json',
        authType: 'bearer',
        authValue: 't',
      })
    ).config as Body;
    await call(A('GetTelemetryConfig'), { id: tc.id });
    await call(A('ListTelemetryConfigs'), { telemetryType: 'audit_logs' });
    await call(A('UpdateTelemetryConfig'), { id: tc.id, enabled: false });
    await call(A('TestAuditForward'), { sinkUrl: 'http://sink.invalid:1', protocol: 'http/json', authType: 'none' });
    await call(A('TriggerAuditForward'), {});
    await call(A('DeleteTelemetryConfig'), { id: tc.id });
  });

  test('audit: the entries of the steps above can be queried and read one by one', async () => {
    const q = (await call(A('QueryAuditLogs'), { resourceType: 'customer', orderDirection: 'asc', pageSize: 5 })) as unknown as {
      logs: Body[];
      totalCount: string;
    };
    expect(Number(q.totalCount)).toBeGreaterThan(0);
    const first = q.logs[0] as Body;
    const one = (await call(A('GetAuditLog'), { id: first.id })) as unknown as { log: Body };
    expect(one.log).toEqual(first);
  });
  test('every operation succeeded once, and every response matched its documented schema', async () => {
    // ExchangeOidcToken needs an OpenID Provider: it succeeds against a real one in test/sso.test.ts.
    const documented = [...(await documentedOps(tg)).keys()].filter((p) => !p.endsWith('/ExchangeOidcToken'));
    expect(documented.filter((p) => !succeeded.has(p))).toEqual([]);
    expect(problems).toEqual([]);
  });
});

describe('OpenAPI', () => {
  test('/openapi/json documents every operation with request and response schemas, permission and snake_case titles', async () => {
    const spec = (await (await fetch(`${tg.adminUrl}/openapi/json`)).json()) as { openapi: string; paths: Record<string, { post: Body }> };
    expect(spec.openapi).toMatch(/^3\./);
    for (const path of defs.keys()) {
      const post = spec.paths[path]?.post as Record<string, Body> | undefined;
      expect(post).toBeDefined();
      expect(post?.requestBody).toBeDefined();
      expect(String(post?.description)).toContain('Required permission');
      expect(((post?.responses as Body | undefined)?.['200'] as Body | undefined)?.content).toBeDefined();
    }
    const create = spec.paths[admin('CreateCustomer')]?.post as {
      requestBody: { content: { 'application/json': { schema: { properties: Record<string, Body>; additionalProperties: boolean } } } };
    };
    const schema = create.requestBody.content['application/json'].schema;
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.customerId).toMatchObject({ minLength: 1, maxLength: 63, title: 'customer_id' });
  });

  test('the UI at /openapi is self-contained (no CDN) and reads /openapi/json', async () => {
    const res = await fetch(`${tg.adminUrl}/openapi`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain('/openapi/json');
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=["']https?:/i);
    expect(html).not.toMatch(/cdn\.|unpkg|jsdelivr/i);
  });
});
