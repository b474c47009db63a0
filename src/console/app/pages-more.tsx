import type { Json, JsonObject } from '../../api/client.ts';
import type { ResourceDef } from './resource.tsx';
import { text } from './resource.tsx';

/** The resource pages of keys, governance and MCP. */

const isObj = (v: Json | undefined): v is JsonObject => v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
const str = (v: Json | undefined): string => text(v);

export const API_KEYS: ResourceDef = {
  title: 'API keys',
  scope: 'project',
  list: 'ListApiKeys',
  create: 'CreateApiKey',
  createLabel: 'Create API key',
  columns: ['name', 'keyPrefix', 'userId', 'createdAt', 'expiresAt', 'revokedAt'],
  created: (answer) => (
    <div class="once" role="status">
      <p>
        <strong>New API key — shown once.</strong> Copy it now: only its hash is stored.
      </p>
      <label for="new-api-key">API key</label>
      <input id="new-api-key" readOnly value={str(answer.apiKey)} onFocus={(e) => e.currentTarget.select()} />
    </div>
  ),
  listInput: { includeRevoked: true },
  remove: {
    op: 'RevokeApiKey',
    label: 'Revoke',
    input: (row, s) => ({ id: str(row.id), customerId: s.customerId, projectId: s.projectId }),
    when: (row) => !row.revokedAt,
  },
};

export const BUDGETS: ResourceDef = {
  title: 'Budgets',
  scope: 'project',
  list: 'ListBudgets',
  create: 'UpsertBudget',
  createLabel: 'Save budget',
  columns: ['name', 'limitUsd', 'spentUsd', 'period', 'resetsAt', 'apiKeyId'],
  remove: { op: 'DeleteBudget', label: 'Delete', input: (row) => ({ id: str(row.id) }) },
  update: { op: 'UpsertBudget', fixed: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, name: str(row.name) }) },
};

export const GUARDRAILS: ResourceDef = {
  title: 'Guardrails',
  scope: 'project',
  list: 'ListGuardrails',
  create: 'CreateGuardrail',
  createLabel: 'Create guardrail',
  columns: ['name', 'stage', 'kind', 'action', 'pattern', 'piiTypes', 'provider', 'failMode'],
  cells: {
    // Provider kinds (contract §15): the vendor's endpoint or connection; the credential is write-only.
    provider: (row) => {
      const p = row.provider;
      if (typeof p !== 'object' || p === null || Array.isArray(p)) return '';
      const where = str(p.connectionId) || str(p.url);
      return p.hasAuthValue === true ? `${where} · credential stored (write-only)` : where;
    },
  },
  remove: {
    op: 'DeleteGuardrail',
    label: 'Delete',
    input: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, name: str(row.name) }),
  },
  update: { op: 'UpdateGuardrail', fixed: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, name: str(row.name) }) },
};

export const MCP_SERVERS: ResourceDef = {
  title: 'MCP servers (catalog)',
  scope: 'global',
  list: 'ListMcpServers',
  create: 'CreateMcpServer',
  createLabel: 'Add MCP server',
  columns: ['serverId', 'url', 'transport', 'authType', 'hasAuthValue', 'description'],
  cells: { hasAuthValue: (row) => (row.hasAuthValue === true ? 'stored (write-only)' : 'none') },
  update: { op: 'UpdateMcpServer', fixed: (row) => ({ serverId: str(row.serverId) }), hide: ['labels'] },
  remove: { op: 'DeleteMcpServer', label: 'Delete', input: (row) => ({ serverId: str(row.serverId) }) },
};

export const MCP_PROFILES: ResourceDef = {
  title: 'MCP profiles',
  scope: 'project',
  list: 'ListMcpProfiles',
  create: 'CreateMcpProfile',
  createLabel: 'Create MCP profile',
  columns: ['profileId', 'description', 'servers', 'pendingTools'],
  cells: {
    pendingTools: (row) =>
      (Array.isArray(row.pendingTools) ? row.pendingTools.filter(isObj) : [])
        .map((t) => `${str(t.serverId)}/${str(t.name)} (${str(t.change)})`)
        .join(', '),
    servers: (row) =>
      (Array.isArray(row.servers) ? row.servers.filter(isObj) : [])
        .map(
          (s) =>
            `${str(s.serverId)}${Array.isArray(s.tools) ? ` [${s.tools.map(str).join(', ')}]` : ''} as ${str(s.prefix) || '(no prefix)'}${s.pin === true ? ' (tools pinned)' : ''}`,
        )
        .join('; '),
  },
  choices: async (s) => {
    const page = await s.session.client.callJson('ListProjectMcpServers', { customerId: s.customerId, projectId: s.projectId });
    const entries = Array.isArray(page.entries) ? page.entries.filter(isObj) : [];
    return { serverId: entries.map((e) => ({ value: str(e.serverId), label: str(e.serverId) })) };
  },
  update: {
    op: 'UpdateMcpProfile',
    fixed: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, profileId: str(row.profileId) }),
  },
  act: {
    op: 'ApproveMcpTools',
    label: 'Approve tools',
    input: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, profileId: str(row.profileId) }),
    when: (row) => Array.isArray(row.pendingTools) && row.pendingTools.length > 0,
  },
  remove: {
    op: 'DeleteMcpProfile',
    label: 'Delete',
    input: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, profileId: str(row.profileId) }),
  },
};

/** The A2A agent catalog (contract §12): the pinned card's name, skills, hash and whether it still matches. */
export const A2A_AGENTS: ResourceDef = {
  title: 'A2A agents (catalog)',
  scope: 'global',
  list: 'ListA2aAgents',
  create: 'CreateA2aAgent',
  createLabel: 'Add A2A agent',
  columns: ['agentId', 'name', 'state', 'skills', 'authType'],
  cells: {
    skills: (row) => (Array.isArray(row.skills) ? row.skills.filter(isObj).map((k) => str(k.name)) : []).join(', '),
  },
  update: { op: 'UpdateA2aAgent', fixed: (row) => ({ agentId: str(row.agentId) }), hide: ['labels'] },
  remove: { op: 'DeleteA2aAgent', label: 'Delete', input: (row) => ({ agentId: str(row.agentId) }) },
};

/** The A2A agents assigned to the project (served to its callers at /a2a/{agentId}). */
export const PROJECT_A2A_AGENTS: ResourceDef = {
  title: 'Assigned A2A agents',
  scope: 'project',
  list: 'ListProjectA2aAgents',
  create: 'AddProjectA2aAgent',
  createLabel: 'Assign A2A agent',
  columns: ['agentId', 'createdAt'],
  rowKey: (row) => str(row.agentId),
  choices: async (s) => {
    const page = await s.session.client.callJson('ListA2aAgents', { pageSize: 1000 });
    const agents = Array.isArray(page.agents) ? page.agents.filter(isObj) : [];
    return { agentId: agents.map((a) => ({ value: str(a.agentId), label: `${str(a.agentId)} (${str(a.name)})` })) };
  },
  remove: {
    op: 'RemoveProjectA2aAgent',
    label: 'Unassign',
    input: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, agentId: str(row.agentId) }),
  },
};

/** Target health (GetTargetHealth): each route target's circuit breaker as the data planes see it (read-only). */
export const TARGET_HEALTH: ResourceDef = {
  title: 'Target health',
  scope: 'project',
  list: 'GetTargetHealth',
  columns: ['model', 'connection', 'upstreamModel', 'state', 'reason', 'failures', 'latencyMsP50', 'openedAt', 'lastError'],
  rowKey: (row) => `${str(row.model)}/${str(row.connection)}/${str(row.upstreamModel)}`,
};
