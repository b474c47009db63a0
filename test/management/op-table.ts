/**
 * Every management operation of this issue with a valid base body and its bounds, written from
 * the seed (and contract §3.1), not derived from the server's schemas: the validation suite checks
 * each bound over HTTP, and checks that every bounded field the server documents is listed here.
 */

export interface Fx {
  customerId: string;
  projectId: string;
  modelId: string;
  workspaceUuid: string;
  dataplaneUuid: string;
  workspaceSlug: string;
  gatewayUuid: string;
  connection: string;
  routeModel: string;
  apiKeyId: string;
}

export type Pattern = 'SLUG' | 'ID' | 'PROJ' | 'SERVER' | 'SCOPE' | 'UUID' | 'TOKEN' | 'SLUG?' | 'ID?' | 'PROJ?' | 'HTTP' | 'URL' | 'PAGE';

export type Spec =
  | { kind: 'str'; min: number; max: number; pattern?: Pattern; nullable?: boolean }
  | { kind: 'int32'; min: number; max: number; nullable?: boolean }
  | { kind: 'int64'; min: number; max: number; nullable?: boolean }
  | { kind: 'number'; min: number; max: number }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'enumArray'; values: readonly string[]; maxItems: number }
  | { kind: 'bool'; nullable?: boolean }
  | { kind: 'labels' }
  | { kind: 'strArray'; maxItems: number; min?: number; itemMax: number; pattern?: Pattern }
  | { kind: 'datetime' }
  | { kind: 'array'; min: number; max: number; item: () => unknown }
  /** Values listed by hand (a field whose format is richer than a bound). */
  | { kind: 'cases'; valid: unknown[]; invalid: unknown[] };

export interface OpCase {
  path: string;
  /** A valid body (references may point at nothing: validation runs first). */
  base: (fx: Fx) => Record<string, unknown>;
  fields: Record<string, Spec>;
}

const A = '/admin.v1.AdminService/';
const K = '/apikey.v1.ApiKeyService/';
const B = '/byok.v1.ByokService/';

// ---- field shorthands (the seed's bounds)
const str = (min: number, max: number, pattern?: Pattern, nullable?: boolean): Spec => ({
  kind: 'str',
  min,
  max,
  ...(pattern ? { pattern } : {}),
  ...(nullable ? { nullable } : {}),
});
const customerSlug = str(1, 63, 'SLUG');
const customerRef = str(1, 63);
const projectKey = str(1, 253);
const projectRef = str(0, 253);
const uuid = str(36, 36, 'UUID');
const name = str(0, 255, undefined, true);
const description = str(0, 1000, undefined, true);
const labels: Spec = { kind: 'labels' };
const pageSize: Spec = { kind: 'int32', min: 0, max: 1000 };
const pageToken = str(0, 512, 'PAGE');
const bool: Spec = { kind: 'bool' };
const meta = { description, labels, name };
const paging = { pageSize, pageToken };

const U0 = '00000000-0000-4000-8000-000000000000';

const modelFields: Record<string, Spec> = {
  mode: str(0, 63, undefined, true),
  capabilities: {
    kind: 'enumArray',
    values: [
      'chat',
      'completion',
      'embedding',
      'image',
      'speech',
      'rerank',
      'tools',
      'vision',
      'computer_use',
      'reasoning',
      'caching',
      'json_mode',
    ],
    maxItems: 12,
  },
  contextWindow: { kind: 'int32', min: 0, max: 2_147_483_647 },
  maxOutputTokens: { kind: 'int32', min: 0, max: 2_147_483_647 },
  inputPricePerMillion: { kind: 'number', min: 0, max: 1_000_000 },
  outputPricePerMillion: { kind: 'number', min: 0, max: 1_000_000 },
  cachedPricePerMillion: { kind: 'number', min: 0, max: 1_000_000 },
  cacheWritePricePerMillion: { kind: 'number', min: 0, max: 1_000_000 },
  isEnabled: bool,
};

const addr = (fx: Fx) => ({ customerId: fx.customerId, projectId: fx.projectId });
const addrFields = { customerId: customerRef, projectId: projectKey };

const flavor = (noun: 'Dataplane' | 'Workspace', key: 'dataplaneId' | 'workspaceId', uuidOf: (fx: Fx) => string): OpCase[] => [
  {
    path: `${A}Create${noun}`,
    base: (fx) => ({ customerId: fx.customerId, [key]: 'new-plane' }),
    fields: { customerId: customerSlug, [key]: str(1, 253, 'ID'), ...meta, projectId: projectRef },
  },
  { path: `${A}Get${noun}`, base: (fx) => ({ id: uuidOf(fx) }), fields: { id: uuid } },
  { path: `${A}List${noun}s`, base: () => ({}), fields: { customerId: str(0, 63, 'SLUG?'), ...paging } },
  { path: `${A}Update${noun}`, base: (fx) => ({ id: uuidOf(fx) }), fields: { id: uuid, ...meta } },
  { path: `${A}Delete${noun}`, base: (fx) => ({ id: uuidOf(fx) }), fields: { id: uuid } },
  { path: `${A}Set${noun}Project`, base: (fx) => ({ id: uuidOf(fx) }), fields: { id: uuid, projectId: str(0, 255) } },
  {
    path: `${A}Set${noun}URL`,
    base: (fx) => ({ id: uuidOf(fx), url: 'https://plane.example.com', triggerUpdate: false }),
    fields: { id: uuid, url: str(1, 2048, 'URL'), triggerUpdate: bool },
  },
];

const target = () => ({ connection: 'c1', model: 'up-1' });
/** A valid `rate-limit` setting value. */
const RATE = '{"requestsPerMinute":100}';
/** A profile's `servers` (1-64 entries) and an entry's fields. */
const profileServerFields: Record<string, Spec> = {
  servers: { kind: 'array', min: 1, max: 64, item: () => ({ serverId: 's' }) },
  'servers.0.serverId': str(1, 253, 'SERVER'),
  'servers.0.tools': {
    kind: 'cases',
    valid: [['search'], ['get_*', 'a.b/c-d'], Array.from({ length: 256 }, (_, i) => `t${i}`), ['x'.repeat(128)]],
    invalid: [[], ['a b'], ['x'.repeat(129)], ['dup', 'dup'], Array.from({ length: 257 }, (_, i) => `t${i}`), 'a', [5]],
  },
  'servers.0.prefix': { kind: 'cases', valid: ['', 'p', 'a.b-c_9', 'x'.repeat(253)], invalid: ['-a', 'a b', 'x'.repeat(254), 5, null] },
  'servers.0.pin': { kind: 'bool' },
  grants: { kind: 'array', min: 0, max: 256, item: () => ({ principal: 'role:member', tools: ['*'] }) },
  'grants.0.principal': {
    kind: 'cases',
    valid: ['role:member', 'role:admin', 'user:ops@example.com'],
    invalid: ['', 'ab', 'bob:x', 'user:', 'user:a b', 'x'.repeat(301), 5],
  },
  'grants.0.tools': {
    kind: 'cases',
    valid: [['search'], ['docs__*'], Array.from({ length: 256 }, (_, i) => `t${i}`)],
    invalid: [[], ['a b'], ['dup', 'dup'], Array.from({ length: 257 }, (_, i) => `t${i}`), 'a', [5]],
  },
};
/** A guardrail's provider-kind fields: out of bounds, refused naming the field whatever the kind (the values they may take are in test/governance/guardrail-provider-faults.test.ts). */
const guardrailProviderFields: Record<string, Spec> = {
  'provider.connectionId': { kind: 'cases', valid: [], invalid: ['a b', 'x'.repeat(254), 5] },
  'provider.url': { kind: 'cases', valid: [], invalid: ['ftp://x', 'x'.repeat(2049), 5] },
  'provider.authValue': { kind: 'cases', valid: [], invalid: ['', 'x'.repeat(16385), 5] },
  'provider.options': { kind: 'cases', valid: [], invalid: [5, 'x', [1]] },
  timeoutMs: { kind: 'cases', valid: [], invalid: [0, -1, 1.5, 60_001, 'x'] },
  failMode: { kind: 'cases', valid: [], invalid: ['maybe', '', 5] },
  windowChars: { kind: 'cases', valid: [], invalid: [99, 100_001, 1.5, 'x'] },
};
const routeRef = { id: uuid, customerId: customerRef, projectId: projectRef, model: str(1, 253) };
const connRef = { id: uuid, customerId: customerRef, projectId: projectRef, name: str(1, 253, 'ID') };

export const OPS: OpCase[] = [
  // ---- catalog
  {
    path: `${A}CreateModel`,
    base: () => ({ model: 'm-new', provider: 'echo' }),
    fields: { model: str(1, 253), provider: str(1, 63, 'SLUG'), ...modelFields },
  },
  { path: `${A}GetModel`, base: (fx) => ({ modelId: fx.modelId }), fields: { modelId: uuid } },
  { path: `${A}ListModels`, base: () => ({}), fields: { provider: str(0, 63), ...paging } },
  { path: `${A}UpdateModel`, base: (fx) => ({ modelId: fx.modelId }), fields: { modelId: uuid, ...modelFields } },
  { path: `${A}DeleteModel`, base: (fx) => ({ modelId: fx.modelId }), fields: { modelId: uuid } },
  // ---- customers
  { path: `${A}CreateCustomer`, base: () => ({ customerId: 'new-customer' }), fields: { customerId: customerSlug, ...meta } },
  { path: `${A}GetCustomer`, base: (fx) => ({ customerId: fx.customerId }), fields: { customerId: customerRef } },
  { path: `${A}ListCustomers`, base: () => ({}), fields: paging },
  { path: `${A}UpdateCustomer`, base: (fx) => ({ customerId: fx.customerId }), fields: { customerId: customerRef, ...meta } },
  { path: `${A}DeleteCustomer`, base: (fx) => ({ customerId: fx.customerId }), fields: { customerId: customerRef } },
  // ---- projects
  {
    path: `${A}CreateProject`,
    base: (fx) => ({ customerId: fx.customerId, projectId: 'new-project' }),
    fields: { customerId: customerRef, projectId: str(1, 253, 'PROJ'), ...meta },
  },
  { path: `${A}GetProject`, base: addr, fields: addrFields },
  { path: `${A}ListProjects`, base: (fx) => ({ customerId: fx.customerId }), fields: { customerId: customerRef, ...paging } },
  { path: `${A}UpdateProject`, base: addr, fields: { ...addrFields, ...meta } },
  { path: `${A}DeleteProject`, base: addr, fields: addrFields },
  // ---- members
  {
    path: `${A}AddProjectMember`,
    base: (fx) => ({ ...addr(fx), userId: 'u-x', role: 'member' }),
    fields: { ...addrFields, userId: str(1, 255), role: { kind: 'enum', values: ['admin', 'member'] } },
  },
  {
    path: `${A}UpdateProjectMember`,
    base: (fx) => ({ ...addr(fx), userId: 'u-x', role: 'admin' }),
    fields: { ...addrFields, userId: str(1, 255), role: { kind: 'enum', values: ['admin', 'member'] } },
  },
  { path: `${A}RemoveProjectMember`, base: (fx) => ({ ...addr(fx), userId: 'u-x' }), fields: { ...addrFields, userId: str(1, 255) } },
  { path: `${A}ListProjectMembers`, base: addr, fields: { ...addrFields, ...paging } },
  // ---- assignments
  { path: `${A}AddProjectModel`, base: (fx) => ({ ...addr(fx), modelId: fx.modelId }), fields: { ...addrFields, modelId: uuid } },
  { path: `${A}RemoveProjectModel`, base: (fx) => ({ ...addr(fx), modelId: fx.modelId }), fields: { ...addrFields, modelId: uuid } },
  { path: `${A}ListProjectModels`, base: addr, fields: { ...addrFields, ...paging } },
  {
    path: `${A}AddProjectProvider`,
    base: (fx) => ({ ...addr(fx), providerName: 'echo' }),
    fields: { ...addrFields, providerName: str(1, 63) },
  },
  {
    path: `${A}RemoveProjectProvider`,
    base: (fx) => ({ ...addr(fx), providerName: 'echo' }),
    fields: { ...addrFields, providerName: str(1, 63) },
  },
  { path: `${A}ListProjectProviders`, base: addr, fields: { ...addrFields, ...paging } },
  {
    path: `${A}AddProjectMcpServer`,
    base: (fx) => ({ ...addr(fx), serverId: 'srv.1' }),
    fields: { ...addrFields, serverId: str(1, 253, 'SERVER') },
  },
  {
    path: `${A}RemoveProjectMcpServer`,
    base: (fx) => ({ ...addr(fx), serverId: 'srv.1' }),
    fields: { ...addrFields, serverId: str(1, 253, 'SERVER') },
  },
  { path: `${A}ListProjectMcpServers`, base: addr, fields: { ...addrFields, ...paging } },
  // ---- A2A agents (contract §12)
  {
    path: `${A}CreateA2aAgent`,
    base: () => ({
      agentId: 'agent.new',
      cardUrl: 'https://x.example/.well-known/agent-card.json',
      authType: 'header',
      authHeader: 'X-Key',
      authValue: 'v',
    }),
    fields: {
      agentId: str(1, 253, 'SERVER'),
      cardUrl: str(1, 2048, 'HTTP'),
      description,
      authType: { kind: 'cases', valid: ['header'], invalid: ['basic', '', 5, null] },
      authHeader: { kind: 'cases', valid: ['X-Api-Key', 'a'.repeat(255)], invalid: ['', 'a'.repeat(256), 'bad header', 'Host', 5] },
      authValue: { kind: 'cases', valid: ['v', 'x'.repeat(16384)], invalid: ['', 'x'.repeat(16385), 5] },
      labels,
    },
  },
  { path: `${A}GetA2aAgent`, base: () => ({ agentId: 'agent.ghost' }), fields: { agentId: str(1, 253, 'SERVER') } },
  { path: `${A}ListA2aAgents`, base: () => ({}), fields: paging },
  {
    path: `${A}UpdateA2aAgent`,
    base: () => ({ agentId: 'agent.ghost' }),
    fields: {
      agentId: str(1, 253, 'SERVER'),
      cardUrl: str(1, 2048, 'HTTP'),
      description,
      authType: { kind: 'enum', values: ['none', 'bearer', 'header'] },
      authHeader: { kind: 'cases', valid: ['X-Api-Key', 'a'.repeat(255), null], invalid: ['', 'a'.repeat(256), 'bad header', 5] },
      authValue: str(1, 16384, undefined, true),
      labels,
    },
  },
  { path: `${A}DeleteA2aAgent`, base: () => ({ agentId: 'agent.ghost' }), fields: { agentId: str(1, 253, 'SERVER') } },
  { path: `${A}RefreshA2aAgent`, base: () => ({ agentId: 'agent.ghost' }), fields: { agentId: str(1, 253, 'SERVER') } },
  {
    path: `${A}AddProjectA2aAgent`,
    base: (fx) => ({ ...addr(fx), agentId: 'agent.1' }),
    fields: { ...addrFields, agentId: str(1, 253, 'SERVER') },
  },
  {
    path: `${A}RemoveProjectA2aAgent`,
    base: (fx) => ({ ...addr(fx), agentId: 'agent.1' }),
    fields: { ...addrFields, agentId: str(1, 253, 'SERVER') },
  },
  { path: `${A}ListProjectA2aAgents`, base: addr, fields: { ...addrFields, ...paging } },
  // ---- MCP catalog and profiles (contract §7)
  {
    path: `${A}CreateMcpServer`,
    base: () => ({ serverId: 'srv.new', url: 'https://x.example/mcp', authType: 'header', authHeader: 'X-Key', authValue: 'v' }),
    fields: {
      serverId: str(1, 253, 'SERVER'),
      url: str(1, 2048, 'HTTP'),
      transport: { kind: 'enum', values: ['streamable-http', 'sse'] },
      description,
      // The base uses 'header' auth: 'none' and 'bearer' are valid values refused across fields (authHeader given).
      authType: { kind: 'cases', valid: ['header'], invalid: ['basic', '', 5, null] },
      authHeader: { kind: 'cases', valid: ['X-Api-Key', 'a'.repeat(255)], invalid: ['', 'a'.repeat(256), 'bad header', 'Host', 5] },
      authValue: { kind: 'cases', valid: ['v', 'x'.repeat(16384)], invalid: ['', 'x'.repeat(16385), 5] },
      labels,
    },
  },
  { path: `${A}GetMcpServer`, base: () => ({ serverId: 'srv.ghost' }), fields: { serverId: str(1, 253, 'SERVER') } },
  { path: `${A}ListMcpServers`, base: () => ({}), fields: paging },
  {
    path: `${A}UpdateMcpServer`,
    base: () => ({ serverId: 'srv.ghost' }),
    fields: {
      serverId: str(1, 253, 'SERVER'),
      url: str(1, 2048, 'HTTP'),
      transport: { kind: 'enum', values: ['streamable-http', 'sse'] },
      description,
      authType: { kind: 'enum', values: ['none', 'bearer', 'header'] },
      authHeader: { kind: 'cases', valid: ['X-Api-Key', 'a'.repeat(255), null], invalid: ['', 'a'.repeat(256), 'bad header', 5] },
      authValue: str(1, 16384, undefined, true),
      labels,
    },
  },
  { path: `${A}DeleteMcpServer`, base: () => ({ serverId: 'srv.ghost' }), fields: { serverId: str(1, 253, 'SERVER') } },
  {
    path: `${A}CreateMcpProfile`,
    base: (fx) => ({
      ...addr(fx),
      profileId: 'p1',
      servers: [{ serverId: 'srv.1' }],
      grants: [{ principal: 'role:member', tools: ['*'] }],
    }),
    fields: { ...addrFields, profileId: str(1, 64, 'ID'), description, ...profileServerFields },
  },
  { path: `${A}GetMcpProfile`, base: (fx) => ({ ...addr(fx), profileId: 'p1' }), fields: { ...addrFields, profileId: str(1, 64, 'ID') } },
  { path: `${A}ListMcpProfiles`, base: addr, fields: { ...addrFields, ...paging } },
  {
    path: `${A}UpdateMcpProfile`,
    base: (fx) => ({ ...addr(fx), profileId: 'p1', grants: [{ principal: 'role:member', tools: ['*'] }] }),
    fields: { ...addrFields, profileId: str(1, 64, 'ID'), description, ...profileServerFields },
  },
  {
    path: `${A}ApproveMcpTools`,
    base: (fx) => ({ ...addr(fx), profileId: 'p1' }),
    fields: { ...addrFields, profileId: str(1, 64, 'ID'), serverId: str(1, 253, 'SERVER') },
  },
  {
    path: `${A}DeleteMcpProfile`,
    base: (fx) => ({ ...addr(fx), profileId: 'p1' }),
    fields: { ...addrFields, profileId: str(1, 64, 'ID') },
  },
  {
    path: `${A}SetMcpServerCredential`,
    base: (fx) => ({ ...addr(fx), serverId: 'srv.1', authValue: 'v' }),
    fields: {
      ...addrFields,
      serverId: str(1, 253, 'SERVER'),
      userId: str(0, 255),
      authValue: { kind: 'cases', valid: ['v', 'x'.repeat(16384)], invalid: ['', 'x'.repeat(16385), 5, null] },
    },
  },
  {
    path: `${A}DeleteMcpServerCredential`,
    base: (fx) => ({ ...addr(fx), serverId: 'srv.1' }),
    fields: { ...addrFields, serverId: str(1, 253, 'SERVER'), userId: str(0, 255) },
  },
  { path: `${A}ListMcpServerCredentials`, base: addr, fields: { ...addrFields, ...paging } },
  // ---- settings
  { path: `${A}GetProjectSettings`, base: addr, fields: addrFields },
  { path: `${A}GetTargetHealth`, base: addr, fields: addrFields },
  {
    path: `${A}UpsertProjectSetting`,
    base: (fx) => ({ ...addr(fx), settingName: 'rate-limit', settingValue: RATE }),
    fields: {
      ...addrFields,
      settingName: { kind: 'enum', values: ['rate-limit'] },
      // 1-1024 characters of JSON in the format of the setting (contract §3.2).
      settingValue: {
        kind: 'cases',
        valid: [RATE, RATE.padEnd(1024, ' ')],
        invalid: ['', RATE.padEnd(1025, ' '), '100/m', '{}', 12345, null],
      },
    },
  },
  {
    path: `${A}DeleteProjectSetting`,
    base: (fx) => ({ ...addr(fx), settingName: 'rate-limit' }),
    fields: {
      ...addrFields,
      settingName: { kind: 'enum', values: ['global-fallback', 'rate-limit', 'record-retention', 'trace-content'] },
    },
  },
  // ---- budgets and guardrails (contract §3.2)
  {
    path: `${A}UpsertBudget`,
    base: (fx) => ({ ...addr(fx), name: 'b1', limitUsd: '10', period: 'day' }),
    fields: {
      ...addrFields,
      apiKeyId: str(0, 64),
      name: str(1, 253, 'ID'),
      limitUsd: {
        kind: 'cases',
        valid: ['10', '0.5', '0.000000001', '9000000'],
        invalid: ['', '-1', '1e3', '0.0000000001', '9000000.1', 'ten', 10, null],
      },
      period: { kind: 'enum', values: ['day', 'week', 'month', 'total'] },
    },
  },
  {
    path: `${A}GetBudget`,
    base: (fx) => ({ ...addr(fx), name: 'b1' }),
    fields: { id: str(1, 64), customerId: customerRef, projectId: projectKey, name: str(1, 253, 'ID') },
  },
  { path: `${A}ListBudgets`, base: addr, fields: addrFields },
  {
    path: `${A}DeleteBudget`,
    base: (fx) => ({ ...addr(fx), name: 'b1' }),
    fields: { id: str(1, 64), customerId: customerRef, projectId: projectKey, name: str(1, 253, 'ID') },
  },
  {
    path: `${A}CreateGuardrail`,
    base: (fx) => ({ ...addr(fx), name: 'g1', stage: 'input', kind: 'regex', pattern: 'x+', action: 'block' }),
    fields: {
      ...addrFields,
      name: str(1, 253, 'ID'),
      stage: { kind: 'enum', values: ['input', 'output', 'both'] },
      kind: { kind: 'enum', values: ['regex'] },
      pattern: { kind: 'cases', valid: ['x+', 'a'.repeat(1024)], invalid: ['', '(', 'a'.repeat(1025), 5] },
      piiTypes: { kind: 'enumArray', values: ['email', 'phone', 'credit_card', 'iban', 'ssn', 'ip_address'], maxItems: 6 },
      maxTokens: { kind: 'int32', min: 1, max: 2_000_000 },
      action: { kind: 'enum', values: ['block', 'redact', 'flag'] },
      documents: { kind: 'enum', values: ['scan', 'refuse'] },
      ...guardrailProviderFields,
    },
  },
  { path: `${A}GetGuardrail`, base: (fx) => ({ ...addr(fx), name: 'g1' }), fields: { ...addrFields, name: str(1, 253, 'ID') } },
  { path: `${A}ListGuardrails`, base: addr, fields: addrFields },
  {
    path: `${A}UpdateGuardrail`,
    base: (fx) => ({ ...addr(fx), name: 'g1' }),
    fields: {
      ...addrFields,
      name: str(1, 253, 'ID'),
      stage: { kind: 'enum', values: ['input', 'output', 'both'] },
      kind: { kind: 'enum', values: ['regex', 'pii', 'max_input_tokens'] },
      pattern: str(0, 1024),
      piiTypes: { kind: 'enumArray', values: ['email', 'phone', 'credit_card', 'iban', 'ssn', 'ip_address'], maxItems: 6 },
      maxTokens: { kind: 'int32', min: 1, max: 2_000_000 },
      action: { kind: 'enum', values: ['block', 'redact', 'flag'] },
      documents: { kind: 'enum', values: ['scan', 'refuse'] },
      ...guardrailProviderFields,
    },
  },
  { path: `${A}DeleteGuardrail`, base: (fx) => ({ ...addr(fx), name: 'g1' }), fields: { ...addrFields, name: str(1, 253, 'ID') } },
  // ---- data planes and workspaces
  ...flavor('Dataplane', 'dataplaneId', (fx) => fx.dataplaneUuid),
  ...flavor('Workspace', 'workspaceId', (fx) => fx.workspaceUuid),
  // ---- project gateways
  {
    path: `${A}CreateProjectGateway`,
    base: (fx) => ({ customerId: fx.customerId, workspaceId: fx.workspaceSlug, projectGatewayId: 'gw-new' }),
    fields: {
      customerId: customerSlug,
      workspaceId: str(1, 253, 'ID'),
      projectGatewayId: str(1, 253, 'ID'),
      ...meta,
      url: str(0, 2048, 'URL', true),
    },
  },
  { path: `${A}GetProjectGateway`, base: (fx) => ({ id: fx.gatewayUuid }), fields: { id: uuid, projectId: str(0, 253, 'ID?') } },
  {
    path: `${A}ListProjectGateways`,
    base: () => ({}),
    fields: { customerId: str(0, 63, 'SLUG?'), workspaceId: str(0, 253, 'ID?'), projectId: str(0, 253, 'ID?'), ...paging },
  },
  {
    path: `${A}UpdateProjectGateway`,
    base: (fx) => ({ id: fx.gatewayUuid }),
    fields: { id: uuid, projectId: str(0, 253, 'ID?'), ...meta, url: str(0, 2048, 'URL', true) },
  },
  { path: `${A}DeleteProjectGateway`, base: (fx) => ({ id: fx.gatewayUuid }), fields: { id: uuid, projectId: str(0, 253, 'ID?') } },
  {
    path: `${A}AttachProjectGatewayProject`,
    base: (fx) => ({ id: fx.gatewayUuid, projectId: fx.projectId }),
    fields: { id: uuid, projectId: str(1, 253, 'ID') },
  },
  {
    path: `${A}DetachProjectGatewayProject`,
    base: (fx) => ({ id: fx.gatewayUuid, projectId: fx.projectId }),
    fields: { id: uuid, projectId: str(1, 253, 'ID') },
  },
  {
    path: `${A}SetProjectGatewayURL`,
    base: (fx) => ({ id: fx.gatewayUuid, url: 'https://gw-v.example.com' }),
    fields: { id: uuid, projectId: str(0, 253, 'ID?'), url: str(1, 2048, 'URL') },
  },
  {
    path: `${A}SetProjectGatewayWorkspace`,
    base: (fx) => ({ id: fx.gatewayUuid, workspaceId: fx.workspaceSlug }),
    fields: { id: uuid, workspaceId: str(1, 253, 'ID') },
  },
  // ---- user tokens
  {
    path: `${A}CreateUserToken`,
    base: (fx) => ({ customerId: fx.customerId, workspaceId: 'ws', userId: 'u-1', organizationUnit: 'eng', role: 'developer' }),
    fields: {
      customerId: str(1, 100, 'TOKEN'),
      workspaceId: str(1, 100, 'TOKEN'),
      userId: str(1, 255),
      organizationUnit: str(1, 255),
      role: str(1, 100),
      scopes: { kind: 'strArray', maxItems: 10, itemMax: 50, pattern: 'SCOPE' },
      name: str(0, 255, undefined, true),
      expiresInDays: { kind: 'int64', min: 1, max: 365, nullable: true },
      projectId: str(0, 253, 'PROJ?', true),
      impersonate: { kind: 'bool', nullable: true },
      'impersonationMetadata.impersonatorKey': str(1, 255),
      'impersonationMetadata.reason': str(0, 500, undefined, true),
      'impersonationMetadata.context': labels,
    },
  },
  // ---- provider connections (contract §3.1)
  {
    path: `${A}CreateProviderConnection`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId, name: 'conn-new', provider: 'echo' }),
    fields: {
      customerId: customerRef,
      projectId: projectRef,
      name: str(1, 253, 'ID'),
      provider: str(1, 63),
      baseUrl: str(1, 2048, 'HTTP', true),
      apiKey: str(1, 16384, undefined, true),
    },
  },
  {
    path: `${A}GetProviderConnection`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId, name: fx.connection }),
    fields: connRef,
  },
  {
    path: `${A}ListProviderConnections`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId }),
    fields: { customerId: customerRef, projectId: projectRef, ...paging },
  },
  {
    path: `${A}UpdateProviderConnection`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId, name: fx.connection }),
    fields: { ...connRef, baseUrl: str(1, 2048, 'HTTP', true), apiKey: str(1, 16384, undefined, true) },
  },
  {
    path: `${A}DeleteProviderConnection`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId, name: fx.connection }),
    fields: connRef,
  },
  // ---- routes (contract §3.1)
  {
    path: `${A}CreateRoute`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId, model: fx.routeModel, targets: [target()] }),
    fields: {
      customerId: customerRef,
      projectId: projectRef,
      model: str(1, 253),
      targets: { kind: 'array', min: 1, max: 32, item: target },
      'targets.0.connection': str(1, 253, 'ID'),
      'targets.0.model': str(1, 253),
      'targets.0.priority': { kind: 'int32', min: 0, max: 100 },
      'targets.0.weight': { kind: 'int32', min: 0, max: 10_000 },
      enabled: bool,
      timeoutMs: { kind: 'int32', min: 1, max: 3_600_000, nullable: true },
      maxRetries: { kind: 'int32', min: 0, max: 10, nullable: true },
      strategy: { kind: 'enum', values: ['ordered', 'latency', 'headroom'] },
    },
  },
  { path: `${A}GetRoute`, base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId, model: fx.routeModel }), fields: routeRef },
  {
    path: `${A}ListRoutes`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId }),
    fields: { customerId: customerRef, projectId: projectRef, ...paging },
  },
  {
    path: `${A}UpdateRoute`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId, model: fx.routeModel }),
    fields: {
      ...routeRef,
      targets: { kind: 'array', min: 1, max: 32, item: target },
      'targets.0.connection': str(1, 253, 'ID'),
      'targets.0.model': str(1, 253),
      'targets.0.priority': { kind: 'int32', min: 0, max: 100 },
      'targets.0.weight': { kind: 'int32', min: 0, max: 10_000 },
      enabled: bool,
      timeoutMs: { kind: 'int32', min: 1, max: 3_600_000, nullable: true },
      maxRetries: { kind: 'int32', min: 0, max: 10, nullable: true },
      strategy: { kind: 'enum', values: ['ordered', 'latency', 'headroom'] },
    },
  },
  {
    path: `${A}DeleteRoute`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId, model: fx.routeModel }),
    fields: routeRef,
  },
  // ---- API keys
  {
    path: `${K}CreateApiKey`,
    base: (fx) => ({ name: 'k', userId: 'u-1', enterpriseContext: { customerId: fx.customerId, projectId: fx.projectId } }),
    fields: {
      name: str(0, 255),
      userId: str(0, 255),
      userKeyAddress: str(0, 255),
      'enterpriseContext.customerId': customerRef,
      'enterpriseContext.projectId': projectRef,
      'enterpriseContext.workspaceId': str(0, 253),
      'enterpriseContext.role': str(0, 100),
      'enterpriseContext.organizationUnit': str(0, 255),
      'enterpriseContext.scopes': { kind: 'strArray', maxItems: 10, itemMax: 50, pattern: 'SCOPE' },
      'enterpriseContext.expiresInDays': { kind: 'int64', min: 1, max: 3650 },
    },
  },
  // ---- user tokens beyond create (jti [1,64]; reason [0,500])
  { path: `${A}GetUserToken`, base: () => ({ jti: 'ghost-jti' }), fields: { jti: str(1, 64) } },
  {
    path: `${A}ListUserTokens`,
    base: (fx) => ({ customerId: fx.customerId }),
    fields: { customerId: str(1, 100, 'TOKEN'), userId: str(1, 255), includeRevoked: bool, ...paging },
  },
  { path: `${A}RevokeUserToken`, base: () => ({ jti: 'ghost-jti' }), fields: { jti: str(1, 64), reason: str(0, 500, undefined, true) } },
  { path: `${A}RotateUserTokenSigningKey`, base: () => ({}), fields: {} },
  // ---- SCIM tokens
  { path: `${A}CreateScimToken`, base: (fx) => ({ customerId: fx.customerId }), fields: { customerId: customerRef, name } },
  { path: `${A}ListScimTokens`, base: (fx) => ({ customerId: fx.customerId }), fields: { customerId: customerRef, ...paging } },
  { path: `${A}RevokeScimToken`, base: () => ({ id: U0 }), fields: { id: uuid } },
  // ---- single sign-on (no credential; without GATEWAY_OIDC_ISSUER a valid body is failed_precondition)
  {
    path: `${A}ExchangeOidcToken`,
    base: () => ({ idToken: 'h.p.s' }),
    fields: { idToken: str(1, 16384), customerId: str(1, 100, 'TOKEN') },
  },
  // ---- BYOK keys (seed: BYOK keys; customerId/projectId default from the session)
  {
    path: `${B}Register`,
    base: (fx) => ({
      provider: 'PROVIDER_OPENAI',
      name: 'k',
      secret: 'sk-byok-ghost-0000',
      customerId: fx.customerId,
      projectId: fx.projectId,
    }),
    fields: {
      provider: {
        kind: 'enum',
        values: ['PROVIDER_OPENAI', 'PROVIDER_ANTHROPIC', 'PROVIDER_AZURE_OPENAI', 'PROVIDER_BEDROCK', 'PROVIDER_VERTEX'],
      },
      name: str(1, 255),
      secret: str(1, 16384),
      userScope: bool,
      customerId: customerRef,
      projectId: projectRef,
    },
  },
  {
    path: `${B}Get`,
    base: (fx) => ({ id: 'byok_ghost', customerId: fx.customerId, projectId: fx.projectId }),
    fields: { id: str(1, 64), customerId: customerRef, projectId: projectRef },
  },
  {
    path: `${B}List`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId }),
    fields: { customerId: customerRef, projectId: projectRef },
  },
  {
    path: `${B}Revoke`,
    base: (fx) => ({ id: 'byok_ghost', customerId: fx.customerId, projectId: fx.projectId }),
    fields: { id: str(1, 64), customerId: customerRef, projectId: projectRef },
  },
  { path: `${B}Fetch`, base: () => ({ id: 'byok_ghost' }), fields: { id: str(1, 64) } },
  {
    path: `${K}ListApiKeys`,
    base: (fx) => ({ customerId: fx.customerId, projectId: fx.projectId }),
    fields: { customerId: customerRef, projectId: projectRef, includeRevoked: bool, ...paging },
  },
  { path: `${K}RevokeApiKey`, base: (fx) => ({ id: fx.apiKeyId }), fields: { id: uuid, customerId: customerRef, projectId: projectRef } },
  // ---- service accounts
  {
    path: `${A}CreateServiceAccount`,
    base: (fx) => ({ customerId: fx.customerId, workspaceId: fx.workspaceSlug }),
    fields: {
      customerId: customerSlug,
      workspaceId: str(1, 253, 'ID'),
      apiUri: str(1, 2048, 'HTTP', true),
      audience: str(1, 253, 'ID', true),
      issuer: str(1, 2048, 'HTTP', true),
      jwksUri: str(1, 2048, 'HTTP', true),
      serveUrl: str(1, 2048, 'HTTP', true),
      // The seed's SCOPE items (at most 10, each at most 50), and only the scopes that grant something (issue 30).
      scopes: {
        kind: 'cases',
        valid: [[], ['dataplane'], ['dataplane', 'read', 'admin']],
        invalid: [['everything'], ['Dataplane'], ['a'.repeat(51)], Array.from({ length: 11 }, () => 'read'), 'dataplane', [5]],
      },
      validityDays: { kind: 'int64', min: 1, max: 3650, nullable: true },
      internalApiKey: str(1, 4096, undefined, true),
      routerUrl: str(1, 2048, 'HTTP', true),
      routerKey: str(1, 4096, undefined, true),
      telemetryEndpoint: str(0, 2048, undefined, true),
      telemetryHeaders: labels,
      telemetryInsecure: { kind: 'bool', nullable: true },
      telemetryLocalVars: labels,
      telemetryProtocol: { kind: 'cases', valid: ['', 'grpc', 'http/protobuf', 'http/json', null], invalid: ['http', 'GRPC', 1] },
      telemetryTimeout: { kind: 'cases', valid: ['10s', '250ms', '1h', null], invalid: ['', '10', '1d', 's', '10 s'] },
    },
  },
  { path: `${A}GetServiceAccount`, base: () => ({ id: U0 }), fields: { id: uuid } },
  {
    path: `${A}ListServiceAccounts`,
    base: (fx) => ({ customerId: fx.customerId }),
    fields: { customerId: customerSlug, workspaceId: str(1, 253, 'ID'), includeRevoked: bool, ...paging },
  },
  { path: `${A}RevokeServiceAccount`, base: () => ({ id: U0 }), fields: { id: uuid, reason: str(0, 500, undefined, true) } },
  { path: `${A}RestoreServiceAccount`, base: () => ({ id: U0 }), fields: { id: uuid, reason: str(0, 500, undefined, true) } },
  // ---- observability and status
  {
    path: `${A}SearchRequestRecords`,
    base: (fx) => ({ customerId: fx.customerId }),
    fields: {
      requestId: str(0, 64),
      clientRequestId: str(0, 256),
      correlationId: str(0, 128),
      customerId: customerRef,
      projectId: projectRef,
      apiKeyId: str(0, 64),
      startTime: { kind: 'datetime' },
      endTime: { kind: 'datetime' },
      ...paging,
    },
  },
  {
    path: `${A}GetUsage`,
    base: (fx) => ({ customerId: fx.customerId }),
    fields: {
      customerId: customerRef,
      projectId: projectRef,
      apiKeyId: str(0, 64),
      startTime: { kind: 'datetime' },
      endTime: { kind: 'datetime' },
      groupBy: { kind: 'enum', values: ['api_key', 'model', 'provider', 'day'] },
    },
  },
  { path: `${A}GetConfigStatus`, base: () => ({}), fields: { dataplaneId: str(0, 253) } },
  // ---- audit (seed: Audit; pageSize has a hard cap of 1000 but larger values are served as 1000, not refused)
  {
    path: `${A}QueryAuditLogs`,
    base: () => ({}),
    fields: {
      startTime: { kind: 'datetime' },
      endTime: { kind: 'datetime' },
      actionType: str(0, 255),
      actorType: str(0, 255),
      correlationId: str(0, 255),
      resourceId: str(0, 255),
      resourceType: str(0, 255),
      userId: str(0, 255),
      success: bool,
      orderDirection: { kind: 'enum', values: ['asc', 'desc'] },
      pageSize: { kind: 'int32', min: 0, max: 2_147_483_647 },
      pageToken,
    },
  },
  { path: `${A}GetAuditLog`, base: () => ({ id: U0 }), fields: { id: uuid } },
  // ---- audit checkpoints (contract §3.3)
  {
    path: `${A}ListAuditCheckpoints`,
    base: () => ({}),
    fields: {
      afterSeq: { kind: 'int64', min: 0, max: Number.MAX_SAFE_INTEGER },
      limit: { kind: 'int32', min: 0, max: 2_147_483_647 },
      rebuild: bool,
    },
  },
  { path: `${A}GetAuditInclusionProof`, base: () => ({ auditLogId: U0 }), fields: { auditLogId: str(1, 64) } },
  { path: `${A}RotateAuditSigningKey`, base: () => ({}), fields: { reason: str(0, 500, undefined, true) } },
  // ---- telemetry forwarding (the sink's name does not resolve, RFC 6761 .invalid: nothing leaves the machine; an inward sink is refused)
  {
    path: `${A}CreateTelemetryConfig`,
    base: () => ({
      userId: 'ops',
      telemetryType: 'traces',
      sinkUrl: 'http://sink.invalid:1',
      protocol: 'http/json',
      authType: 'none',
      authValue: 'tok',
    }),
    fields: {
      userId: str(1, 255),
      telemetryType: { kind: 'enum', values: ['traces', 'metrics', 'logs', 'audit_logs'] },
      sinkUrl: str(1, 2048, 'HTTP'),
      protocol: { kind: 'enum', values: ['grpc', 'http/json', 'http/protobuf'] },
      authType: { kind: 'enum', values: ['none', 'bearer', 'basic', 'api_key'] },
      authValue: str(0, 4096),
      apiKeyHeader: str(0, 256),
      enabled: bool,
      forwardIntervalSeconds: { kind: 'int32', min: 0, max: 86_400 },
    },
  },
  { path: `${A}GetTelemetryConfig`, base: () => ({ id: U0 }), fields: { id: str(1, 64) } },
  {
    path: `${A}ListTelemetryConfigs`,
    base: () => ({}),
    fields: { telemetryType: { kind: 'enum', values: ['traces', 'metrics', 'logs', 'audit_logs'] }, ...paging },
  },
  {
    path: `${A}UpdateTelemetryConfig`,
    base: () => ({ id: U0 }),
    fields: {
      id: str(1, 64),
      apiKeyHeader: str(0, 256),
      authType: { kind: 'enum', values: ['none', 'bearer', 'basic', 'api_key'] },
      authValue: str(0, 4096),
      enabled: bool,
      forwardIntervalSeconds: { kind: 'int32', min: 0, max: 86_400 },
      protocol: { kind: 'enum', values: ['grpc', 'http/json', 'http/protobuf'] },
      sinkUrl: str(1, 2048, 'HTTP'),
      status: { kind: 'enum', values: ['connected', 'disconnected', 'error', 'testing'] },
    },
  },
  { path: `${A}DeleteTelemetryConfig`, base: () => ({ id: U0 }), fields: { id: str(1, 64) } },
  {
    path: `${A}TestAuditForward`,
    base: () => ({ sinkUrl: 'http://sink.invalid:1', protocol: 'http/json', authType: 'none' }),
    fields: {
      sinkUrl: str(1, 2048, 'HTTP'),
      protocol: { kind: 'enum', values: ['grpc', 'http/json', 'http/protobuf'] },
      authType: { kind: 'enum', values: ['none', 'bearer', 'basic', 'api_key'] },
      authValue: str(0, 4096),
      apiKeyHeader: str(0, 256),
      owner: str(0, 255),
    },
  },
  { path: `${A}TriggerAuditForward`, base: () => ({}), fields: { owner: str(0, 255) } },
];

export const GHOST: Fx = {
  customerId: 'ghost-customer',
  projectId: 'ghost-project',
  modelId: U0,
  workspaceUuid: U0,
  dataplaneUuid: U0,
  workspaceSlug: 'ghost-ws',
  gatewayUuid: U0,
  connection: 'ghost-conn',
  routeModel: 'ghost-model',
  apiKeyId: U0,
};

/** Sample values per pattern: [valid…], [invalid…]. */
export const PATTERN_SAMPLES: Record<Pattern, { valid: string[]; invalid: string[] }> = {
  SLUG: { valid: ['a', '0', 'a-b-9'], invalid: ['A', '-a', 'a-', 'a_b', 'a.b', 'a b'] },
  ID: { valid: ['a', 'A-_.b9'], invalid: ['a b', 'a/b', 'ä', 'a:b'] },
  PROJ: { valid: ['a', 'a.b_c-d9'], invalid: ['A', '_a', 'a_', '-a', 'a b'] },
  SERVER: { valid: ['a', 'A.b_c-D9'], invalid: ['-a', 'a-', '.a', 'a b'] },
  SCOPE: { valid: ['read', 'a_b'], invalid: ['A', 'a-b', 'a1', 'a b'] },
  UUID: {
    valid: ['12345678-9abc-4def-8123-456789abcdef'],
    invalid: ['not-a-uuid', '12345678-9ABC-4DEF-8123-456789ABCDEF', '123456789abc4def8123456789abcdef'],
  },
  TOKEN: { valid: ['a_b-9'], invalid: ['A', 'a.b', 'a b'] },
  'SLUG?': { valid: ['', 'a-b'], invalid: ['A', '-a'] },
  'ID?': { valid: ['', 'A-_.b'], invalid: ['a b', 'a/b'] },
  'PROJ?': { valid: ['', 'a.b'], invalid: ['A', '_a'] },
  HTTP: { valid: ['http://x.example', 'https://x.example/v1'], invalid: ['ftp://x', 'x.example'] },
  URL: { valid: ['https://u.example.com'], invalid: [] },
  PAGE: { valid: [''], invalid: ['bogus', Buffer.from('{"c":"2026-01-01T00:00:00Z","i":"x"}').toString('base64url')] },
};

/** A string of length n that matches the pattern, or undefined when none exists. */
export const sample = (pattern: Pattern | undefined, n: number): string | undefined => {
  switch (pattern) {
    case 'UUID':
      return n === 36 ? '12345678-9abc-4def-8123-456789abcdef' : undefined;
    case 'HTTP':
      return n >= 10 ? `https://h/${'x'.repeat(n - 10)}` : undefined;
    case 'URL':
      if (n === 0) return '';
      return n >= 22 ? `https://e${'x'.repeat(n - 21)}.example.com` : 'a'.repeat(n);
    case 'PAGE': {
      // A well-formed cursor padded (JSON whitespace) to exactly n base64url characters.
      if (n === 0) return '';
      if (n % 4 !== 0) return undefined;
      const json = JSON.stringify({ c: '2020-01-01T00:00:00.000Z', i: U0 });
      return Buffer.from(json.padEnd((n / 4) * 3, ' ')).toString('base64url');
    }
    default:
      return 'a'.repeat(n);
  }
};
