import type { Json, JsonObject } from '../../api/client.ts';
import type { Field, Values } from './fields.ts';
import type { ResourceDef, Scope } from './resource.tsx';
import { text } from './resource.tsx';

/** The resource pages: which operations each one lists, creates and removes with. */

const isObj = (v: Json | undefined): v is JsonObject => v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
const str = (v: Json | undefined): string => text(v);
const num = (v: Json | undefined, dflt: number): number =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : dflt;

/** Targets grouped by priority, each with its share of its priority's weight. */
const chain = (targets: { connection: string; model: string; priority: number; weight: number }[]) => {
  const byPriority = new Map<number, typeof targets>();
  for (const t of targets) byPriority.set(t.priority, [...(byPriority.get(t.priority) ?? []), t]);
  return [...byPriority.entries()]
    .sort(([a], [b]) => a - b)
    .map(([priority, ts]) => {
      const total = ts.reduce((s, t) => s + t.weight, 0);
      return { priority, targets: ts.map((t) => ({ ...t, share: total > 0 ? Math.round((t.weight / total) * 100) : 0 })) };
    });
};

function Chain({ targets }: { targets: { connection: string; model: string; priority: number; weight: number }[] }) {
  return (
    <ol class="chain" aria-label="fallback chain">
      {chain(targets).map((step) => (
        <li key={step.priority}>
          <span class="muted">{step.priority === 0 ? 'primary' : `fallback ${step.priority}`}:</span>{' '}
          {step.targets.map((t) => (
            <span class="target" key={`${t.connection}/${t.model}`}>
              {t.connection}/{t.model}
              <span class="bar" role="img" aria-label={`weight ${t.weight}, ${t.share}%`}>
                <span style={{ width: `${t.share}%` }} />
              </span>
              <span class="muted">{t.share}%</span>
            </span>
          ))}
        </li>
      ))}
    </ol>
  );
}

const targetsOf = (row: JsonObject) =>
  (Array.isArray(row.targets) ? row.targets : [])
    .filter(isObj)
    .map((t) => ({ connection: str(t.connection), model: str(t.model), priority: num(t.priority, 0), weight: num(t.weight, 1) }));

/** The targets being edited, drawn as the fallback chain with each weight's share. */
const routeTargetsPreview = (f: Field, values: Values, n: number) =>
  f.name === 'targets' && n > 0 ? (
    <div class="preview">
      <span class="muted">Preview</span>
      <Chain
        targets={Array.from({ length: n }, (_, i) => ({
          connection: values[`targets.${i}.connection`] ?? '',
          model: values[`targets.${i}.model`] ?? '',
          priority: num(values[`targets.${i}.priority`], 0),
          weight: num(values[`targets.${i}.weight`], 1),
        }))}
      />
    </div>
  ) : null;

const names = async (s: Scope, op: 'ListProviderConnections', key: string) => {
  const page = await s.session.client.callJson(op, { customerId: s.customerId, projectId: s.projectId });
  const items = page[key];
  return (Array.isArray(items) ? items : [])
    .filter(isObj)
    .map((c) => ({ value: str(c.name), label: `${str(c.name)} (${str(c.provider)})` }));
};

export const CUSTOMERS: ResourceDef = {
  title: 'Customers',
  scope: 'global',
  list: 'ListCustomers',
  create: 'CreateCustomer',
  createLabel: 'Create customer',
  columns: ['customerId', 'name', 'description', 'createdAt'],
  remove: { op: 'DeleteCustomer', label: 'Delete', input: (row) => ({ customerId: str(row.customerId) }) },
  update: { op: 'UpdateCustomer', fixed: (row) => ({ customerId: str(row.customerId) }), hide: ['labels'] },
};

export const PROJECTS: ResourceDef = {
  title: 'Projects',
  scope: 'customer',
  list: 'ListProjects',
  create: 'CreateProject',
  createLabel: 'Create project',
  columns: ['projectId', 'name', 'description', 'createdAt'],
  remove: { op: 'DeleteProject', label: 'Delete', input: (row, s) => ({ customerId: s.customerId, projectId: str(row.projectId) }) },
  update: { op: 'UpdateProject', fixed: (row, s) => ({ customerId: s.customerId, projectId: str(row.projectId) }), hide: ['labels'] },
};

export const MEMBERS: ResourceDef = {
  title: 'Members',
  scope: 'project',
  list: 'ListProjectMembers',
  create: 'AddProjectMember',
  createLabel: 'Add member',
  columns: ['userId', 'role', 'createdAt'],
  rowKey: (row) => str(row.userId),
  remove: {
    op: 'RemoveProjectMember',
    label: 'Remove',
    input: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, userId: str(row.userId) }),
  },
  update: { op: 'UpdateProjectMember', fixed: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, userId: str(row.userId) }) },
};

export const PROJECT_MODELS: ResourceDef = {
  title: 'Assigned models',
  scope: 'project',
  list: 'ListProjectModels',
  create: 'AddProjectModel',
  createLabel: 'Assign model',
  columns: ['model', 'modelId'],
  cells: { model: (row) => (isObj(row.model) ? `${str(row.model.model)} (${str(row.model.provider)})` : str(row.model)) },
  rowKey: (row) => str(row.modelId),
  rowName: (row) => (isObj(row.model) ? str(row.model.model) : str(row.modelId)),
  choices: async (s) => {
    const page = await s.session.client.callJson('ListModels', { pageSize: 1000 });
    const models = Array.isArray(page.models) ? page.models.filter(isObj) : [];
    return { modelId: models.map((m) => ({ value: str(m.id), label: `${str(m.model)} (${str(m.provider)})` })) };
  },
  remove: {
    op: 'RemoveProjectModel',
    label: 'Unassign',
    input: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, modelId: str(row.modelId ?? row.id) }),
  },
};

export const CATALOG: ResourceDef = {
  title: 'Model catalog',
  scope: 'global',
  list: 'ListModels',
  create: 'CreateModel',
  createLabel: 'Add model',
  columns: ['model', 'provider', 'mode', 'inputPricePerMillion', 'outputPricePerMillion'],
  remove: { op: 'DeleteModel', label: 'Delete', input: (row) => ({ modelId: str(row.id) }) },
  update: { op: 'UpdateModel', fixed: (row) => ({ modelId: str(row.id) }) },
};

export const CONNECTIONS: ResourceDef = {
  title: 'Provider connections',
  scope: 'project',
  list: 'ListProviderConnections',
  create: 'CreateProviderConnection',
  createLabel: 'Create connection',
  columns: ['name', 'provider', 'baseUrl', 'hasApiKey', 'updatedAt'],
  cells: { hasApiKey: (row) => (row.hasApiKey === true ? 'stored (write-only)' : 'none') },
  remove: { op: 'DeleteProviderConnection', label: 'Delete', input: (row) => ({ id: str(row.id) }) },
  update: { op: 'UpdateProviderConnection', fixed: (row) => ({ id: str(row.id), customerId: '', projectId: '', name: '' }) },
};

export const ROUTES: ResourceDef = {
  title: 'Routes',
  scope: 'project',
  list: 'ListRoutes',
  create: 'CreateRoute',
  createLabel: 'Create route',
  columns: ['model', 'targets', 'enabled', 'timeoutMs', 'maxRetries', 'updatedAt'],
  cells: { targets: (row) => <Chain targets={targetsOf(row)} /> },
  choices: async (s) => ({ connection: await names(s, 'ListProviderConnections', 'connections') }),
  rowsExtra: routeTargetsPreview,
  remove: { op: 'DeleteRoute', label: 'Delete', input: (row) => ({ id: str(row.id) }) },
  update: { op: 'UpdateRoute', fixed: (row) => ({ id: str(row.id), customerId: '', projectId: '', model: '' }) },
};

export const PROJECT_PROVIDERS: ResourceDef = {
  title: 'Assigned providers',
  scope: 'project',
  list: 'ListProjectProviders',
  create: 'AddProjectProvider',
  createLabel: 'Assign provider',
  columns: ['providerName', 'createdAt'],
  rowKey: (row) => str(row.providerName),
  remove: {
    op: 'RemoveProjectProvider',
    label: 'Unassign',
    input: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, providerName: str(row.providerName) }),
  },
};

export const PROJECT_MCP_SERVERS: ResourceDef = {
  title: 'Assigned MCP servers',
  scope: 'project',
  list: 'ListProjectMcpServers',
  create: 'AddProjectMcpServer',
  createLabel: 'Assign MCP server',
  columns: ['serverId', 'createdAt'],
  rowKey: (row) => str(row.serverId),
  choices: async (s) => {
    const page = await s.session.client.callJson('ListMcpServers', { pageSize: 1000 });
    const servers = Array.isArray(page.servers) ? page.servers.filter(isObj) : [];
    return { serverId: servers.map((m) => ({ value: str(m.serverId), label: `${str(m.serverId)} (${str(m.url)})` })) };
  },
  remove: {
    op: 'RemoveProjectMcpServer',
    label: 'Unassign',
    input: (row, s) => ({ customerId: s.customerId, projectId: s.projectId, serverId: str(row.serverId) }),
  },
};
