import { Type as t } from '@sinclair/typebox';
import { CustomerRef, One, PATTERNS, Page, PageSize, PageToken, ProjectKey, Str, Success, Timestamp, Uuid } from '../kit.ts';
import { defineOp } from '../op.ts';
import { checkProviderName } from '../providers.ts';
import { defineResource, reqText } from '../resource.ts';
import { AIModelOut } from './catalog.ts';

/** Project assignments: the catalog models, providers and MCP servers a project may use. */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Project assignments';
const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };
/** The input of a List of a project's assignments (also ListProjectA2aAgents', a2a.ts). */
export const Listing = t.Object({ ...Addr, pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false });

const ModelRef = () => Uuid('catalog entry UUID');
const ProviderName = () => Str(1, 63, { description: 'provider (adapter) id, e.g. openai, anthropic, echo (1-63)' });
const ServerId = () => Str(1, 253, { pattern: PATTERNS.SERVER, description: 'catalog MCP server id (SERVER, 1-253)' });

export const ModelEntryOut = t.Object(
  {
    id: t.String(),
    customerId: t.String(),
    projectId: t.String(),
    modelId: t.String({ description: 'catalog UUID' }),
    model: AIModelOut,
    createdAt: Timestamp(),
  },
  { description: 'ProjectModelEntry' },
);
export const ProviderEntryOut = t.Object(
  { id: t.String(), customerId: t.String(), projectId: t.String(), providerName: t.String(), createdAt: Timestamp() },
  { description: 'ProjectProviderEntry' },
);
export const McpServerEntryOut = t.Object(
  { id: t.String(), customerId: t.String(), projectId: t.String(), serverId: t.String(), createdAt: Timestamp() },
  { description: 'ProjectMcpServerEntry' },
);

export const AssignmentOps = {
  // ---- models
  AddProjectModel: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'AddProjectModel',
    summary: 'Assign a catalog model to a project',
    notes: 'A model already assigned is already_exists; a deleted catalog model is not_found.',
    permission: 'project_admin',
    mutates: { action: 'CREATE', resource: 'project_model' },
    input: t.Object({ ...Addr, modelId: ModelRef() }, { additionalProperties: false }),
    output: One('entry', ModelEntryOut),
  }),
  RemoveProjectModel: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'RemoveProjectModel',
    summary: 'Unassign a catalog model from a project',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'project_model' },
    input: t.Object({ ...Addr, modelId: ModelRef() }, { additionalProperties: false }),
    output: Success(),
  }),
  ListProjectModels: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjectModels',
    summary: "List a project's assigned models (deleted catalog entries are left out)",
    permission: 'project_member',
    input: Listing,
    output: Page('entries', ModelEntryOut),
  }),
  // ---- providers
  AddProjectProvider: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'AddProjectProvider',
    summary: 'Enable a provider for a project',
    notes: 'providerName must be a provider this gateway has an adapter for. Already enabled is already_exists.',
    permission: 'project_admin',
    mutates: { action: 'CREATE', resource: 'project_provider' },
    input: t.Object({ ...Addr, providerName: ProviderName() }, { additionalProperties: false }),
    output: One('entry', ProviderEntryOut),
  }),
  RemoveProjectProvider: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'RemoveProjectProvider',
    summary: 'Disable a provider for a project (routes through its connections become not active)',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'project_provider' },
    input: t.Object({ ...Addr, providerName: ProviderName() }, { additionalProperties: false }),
    output: Success(),
  }),
  ListProjectProviders: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjectProviders',
    summary: "List a project's enabled providers",
    permission: 'project_member',
    input: Listing,
    output: Page('entries', ProviderEntryOut),
  }),
  // ---- MCP servers
  AddProjectMcpServer: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'AddProjectMcpServer',
    summary: 'Assign an MCP server to a project',
    notes: 'serverId must name a catalog MCP server (CreateMcpServer; not_found otherwise). Already assigned is already_exists.',
    permission: 'project_admin',
    mutates: { action: 'CREATE', resource: 'project_mcp_server' },
    input: t.Object({ ...Addr, serverId: ServerId() }, { additionalProperties: false }),
    output: One('entry', McpServerEntryOut),
  }),
  RemoveProjectMcpServer: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'RemoveProjectMcpServer',
    summary: 'Unassign an MCP server from a project',
    notes:
      'Profiles of the project that list the server keep their entry but stop serving it within the propagation time (and serve it again if it is re-assigned).',
    permission: 'project_admin',
    mutates: { action: 'DELETE', resource: 'project_mcp_server' },
    input: t.Object({ ...Addr, serverId: ServerId() }, { additionalProperties: false }),
    output: Success(),
  }),
  ListProjectMcpServers: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjectMcpServers',
    summary: "List a project's MCP servers",
    permission: 'project_member',
    input: Listing,
    output: Page('entries', McpServerEntryOut),
  }),
};

const A = AssignmentOps;
export const AssignmentResources = {
  projectModel: defineResource({
    owner: 'project',
    audit: 'project_model',
    stored: [{ table: 'project_models', removal: 'delete' }],
    change: { kind: 'PROJECT_MODEL', entity: 'project_model', keepsApiKeys: true },
    document: { section: 'projectModels', row: () => t.Object({ projectUuid: t.String(), modelId: t.String() }) },
    terraform: {
      type: 'gateway_project_model',
      description: 'A catalog model enabled for a project.',
      create: A.AddProjectModel,
      delete: A.RemoveProjectModel,
      envelope: 'entry',
      list: { op: A.ListProjectModels, field: 'entries' },
      key: [{ api: 'customerId' }, { api: 'projectId' }, { api: 'modelId' }],
      args: [],
    },
  }),
  projectProvider: defineResource({
    owner: 'project',
    audit: 'project_provider',
    stored: [{ table: 'project_providers', removal: 'delete' }],
    change: { kind: 'PROJECT_PROVIDER', entity: 'project_provider', keepsApiKeys: true },
    document: { section: 'projectProviders', row: () => t.Object({ projectUuid: t.String(), providerName: t.String() }) },
    terraform: {
      type: 'gateway_project_provider',
      description: 'A provider (adapter) enabled for a project.',
      create: A.AddProjectProvider,
      delete: A.RemoveProjectProvider,
      envelope: 'entry',
      list: { op: A.ListProjectProviders, field: 'entries' },
      key: [{ api: 'customerId' }, { api: 'projectId' }, { api: 'providerName' }],
      args: [],
      check: (r) => {
        const provider = reqText(r.providerName);
        if (provider !== null) checkProviderName('providerName', provider);
      },
    },
  }),
  projectMcpServer: defineResource({
    owner: 'project',
    audit: 'project_mcp_server',
    stored: [{ table: 'project_mcp_servers', removal: 'delete' }],
    change: { kind: 'PROJECT_MCP_SERVER', entity: 'project_mcp_server', keepsApiKeys: true },
    terraform: {
      type: 'gateway_project_mcp_server',
      description: 'A catalog MCP server assigned to a project (its profiles may then serve it).',
      create: A.AddProjectMcpServer,
      delete: A.RemoveProjectMcpServer,
      envelope: 'entry',
      list: { op: A.ListProjectMcpServers, field: 'entries' },
      key: [{ api: 'customerId' }, { api: 'projectId' }, { api: 'serverId' }],
      args: [],
    },
  }),
};
