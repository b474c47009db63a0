import { and, eq, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { getAdapter } from '../../providers/registry.ts';
import { aiModels, projectMcpServers, projectModels, projectProviders, type ProjectRow } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { findProject, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { CustomerRef, One, PATTERNS, Page, PageSize, PageToken, ProjectKey, Str, Success, Timestamp, Uuid, ts } from '../schemas.ts';
import { AIModelOut, findModel, modelView } from './catalog.ts';

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Project assignments';
const Addr = { customerId: CustomerRef(), projectId: ProjectKey() };
const scope = (i: { customerId: string; projectId: string }) => ({ customerId: i.customerId, projectId: i.projectId });
const Listing = t.Object({ ...Addr, pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false });

const ProviderName = () => Str(1, 63, { description: 'provider (adapter) id, e.g. openai, anthropic, echo (1-63)' });
const ServerId = () => Str(1, 253, { pattern: PATTERNS.SERVER, description: 'catalog MCP server id (SERVER, 1-253)' });

export const ModelEntryOut = t.Object(
  { id: t.String(), customerId: t.String(), projectId: t.String(), modelId: t.String({ description: 'catalog UUID' }), model: AIModelOut, createdAt: Timestamp() },
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

/** Enables a provider for a (locked, see lockProject) project; idempotent. Used by connections. */
export const enableProvider = async (tx: Tx, project: ProjectRow, providerName: string): Promise<void> => {
  await tx
    .insert(projectProviders)
    .values({ projectUuid: project.id, customerId: project.customerId, projectId: project.projectId, providerName })
    .onConflictDoNothing();
};

const notAssigned = (what: string, project: string, field: string) => connectError('not_found', `${what} is not assigned to project '${project}'`, field);

export const assignmentOps = (deps: ControlDeps): OpDef[] => [
  // ---- models
  mutation(deps, {
    action: 'CREATE',
    resource: 'project_model',
    resourceId: (i) => rid(i.customerId, i.projectId, i.modelId),
    service: ADMIN,
    group: GROUP,
    name: 'AddProjectModel',
    summary: 'Assign a catalog model to a project',
    notes: 'A model already assigned is already_exists; a deleted catalog model is not_found.',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, modelId: Uuid('catalog entry UUID') }, { additionalProperties: false }),
    output: One('entry', ModelEntryOut),
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const model = await findModel(tx, input.modelId, 'share');
      const row = await uniquely(
        async () => {
          const [r] = await tx
            .insert(projectModels)
            .values({ projectUuid: project.id, customerId: project.customerId, projectId: project.projectId, modelId: model.id })
            .returning();
          return r as typeof projectModels.$inferSelect;
        },
        `model '${model.model}' is already assigned to project '${input.projectId}'`,
        'modelId',
      );
      await change({ resource: 'projectModel' as const, entityId: model.id, customerId: project.customerId, projectId: project.projectId });
      return {
        entry: { id: row.id, customerId: row.customerId, projectId: row.projectId, modelId: model.id, model: modelView(model), createdAt: ts(row.createdAt) },
      };
    },
  }),
  mutation(deps, {
    action: 'DELETE',
    resource: 'project_model',
    resourceId: (i) => rid(i.customerId, i.projectId, i.modelId),
    service: ADMIN,
    group: GROUP,
    name: 'RemoveProjectModel',
    summary: 'Unassign a catalog model from a project',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, modelId: Uuid('catalog entry UUID') }, { additionalProperties: false }),
    output: Success(),
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const gone = await tx
        .delete(projectModels)
        .where(and(eq(projectModels.projectUuid, project.id), eq(projectModels.modelId, input.modelId)))
        .returning({ id: projectModels.id });
      if (gone.length === 0) throw notAssigned(`model '${input.modelId}'`, project.projectId, 'modelId');
      await change({ resource: 'projectModel' as const, entityId: input.modelId, customerId: project.customerId, projectId: project.projectId });
      return { success: true };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjectModels',
    summary: "List a project's assigned models (deleted catalog entries are left out) — an addition: the seed does not show it",
    permission: 'project_member',
    scope,
    input: Listing,
    output: Page('entries', ModelEntryOut),
    handler: async (input) => {
      const k = keyset(projectModels.createdAt, projectModels.id, input.pageToken);
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const size = pageSizeOf(input.pageSize);
      const rows = await deps.db
        .select({ entry: projectModels, model: aiModels })
        .from(projectModels)
        .innerJoin(aiModels, and(eq(aiModels.id, projectModels.modelId), isNull(aiModels.deletedAt)))
        .where(and(eq(projectModels.projectUuid, project.id), k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(
        rows.map((r) => ({ ...r, id: r.entry.id, createdAt: r.entry.createdAt })),
        size,
      );
      return {
        entries: p.items.map((r) => ({
          id: r.entry.id,
          customerId: r.entry.customerId,
          projectId: r.entry.projectId,
          modelId: r.entry.modelId,
          model: modelView(r.model),
          createdAt: ts(r.entry.createdAt),
        })),
        nextPageToken: p.nextPageToken,
      };
    },
  }),
  // ---- providers
  mutation(deps, {
    action: 'CREATE',
    resource: 'project_provider',
    resourceId: (i) => rid(i.customerId, i.projectId, i.providerName),
    service: ADMIN,
    group: GROUP,
    name: 'AddProjectProvider',
    summary: 'Enable a provider for a project',
    notes: 'providerName must be a provider this gateway has an adapter for. Already enabled is already_exists.',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, providerName: ProviderName() }, { additionalProperties: false }),
    output: One('entry', ProviderEntryOut),
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      if (!getAdapter(input.providerName)) throw connectError('invalid_argument', `invalid field 'providerName': unknown provider '${input.providerName}'`, 'providerName');
      const row = await uniquely(
        async () => {
          const [r] = await tx
            .insert(projectProviders)
            .values({ projectUuid: project.id, customerId: project.customerId, projectId: project.projectId, providerName: input.providerName })
            .returning();
          return r as typeof projectProviders.$inferSelect;
        },
        `provider '${input.providerName}' is already enabled for project '${input.projectId}'`,
        'providerName',
      );
      await change({ resource: 'projectProvider' as const, entityId: input.providerName, customerId: project.customerId, projectId: project.projectId });
      return { entry: { id: row.id, customerId: row.customerId, projectId: row.projectId, providerName: row.providerName, createdAt: ts(row.createdAt) } };
    },
  }),
  mutation(deps, {
    action: 'DELETE',
    resource: 'project_provider',
    resourceId: (i) => rid(i.customerId, i.projectId, i.providerName),
    service: ADMIN,
    group: GROUP,
    name: 'RemoveProjectProvider',
    summary: 'Disable a provider for a project (routes through its connections become not active)',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, providerName: ProviderName() }, { additionalProperties: false }),
    output: Success(),
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const gone = await tx
        .delete(projectProviders)
        .where(and(eq(projectProviders.projectUuid, project.id), eq(projectProviders.providerName, input.providerName)))
        .returning({ id: projectProviders.id });
      if (gone.length === 0) throw notAssigned(`provider '${input.providerName}'`, project.projectId, 'providerName');
      await change({ resource: 'projectProvider' as const, entityId: input.providerName, customerId: project.customerId, projectId: project.projectId });
      return { success: true };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjectProviders',
    summary: "List a project's enabled providers — an addition: the seed does not show it",
    permission: 'project_member',
    scope,
    input: Listing,
    output: Page('entries', ProviderEntryOut),
    handler: async (input) => {
      const k = keyset(projectProviders.createdAt, projectProviders.id, input.pageToken);
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const size = pageSizeOf(input.pageSize);
      const rows = await deps.db
        .select()
        .from(projectProviders)
        .where(and(eq(projectProviders.projectUuid, project.id), k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return {
        entries: p.items.map((r) => ({ id: r.id, customerId: r.customerId, projectId: r.projectId, providerName: r.providerName, createdAt: ts(r.createdAt) })),
        nextPageToken: p.nextPageToken,
      };
    },
  }),
  // ---- MCP servers
  mutation(deps, {
    action: 'CREATE',
    resource: 'project_mcp_server',
    resourceId: (i) => rid(i.customerId, i.projectId, i.serverId),
    service: ADMIN,
    group: GROUP,
    name: 'AddProjectMcpServer',
    summary: 'Assign an MCP server to a project',
    notes: 'The MCP server catalog arrives with its own issue; until then serverId is stored as given. Already assigned is already_exists.',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, serverId: ServerId() }, { additionalProperties: false }),
    output: One('entry', McpServerEntryOut),
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const row = await uniquely(
        async () => {
          const [r] = await tx
            .insert(projectMcpServers)
            .values({ projectUuid: project.id, customerId: project.customerId, projectId: project.projectId, serverId: input.serverId })
            .returning();
          return r as typeof projectMcpServers.$inferSelect;
        },
        `MCP server '${input.serverId}' is already assigned to project '${input.projectId}'`,
        'serverId',
      );
      await change({ resource: 'projectMcpServer' as const, entityId: input.serverId, customerId: project.customerId, projectId: project.projectId });
      return { entry: { id: row.id, customerId: row.customerId, projectId: row.projectId, serverId: row.serverId, createdAt: ts(row.createdAt) } };
    },
  }),
  mutation(deps, {
    action: 'DELETE',
    resource: 'project_mcp_server',
    resourceId: (i) => rid(i.customerId, i.projectId, i.serverId),
    service: ADMIN,
    group: GROUP,
    name: 'RemoveProjectMcpServer',
    summary: 'Unassign an MCP server from a project',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...Addr, serverId: ServerId() }, { additionalProperties: false }),
    output: Success(),
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const gone = await tx
        .delete(projectMcpServers)
        .where(and(eq(projectMcpServers.projectUuid, project.id), eq(projectMcpServers.serverId, input.serverId)))
        .returning({ id: projectMcpServers.id });
      if (gone.length === 0) throw notAssigned(`MCP server '${input.serverId}'`, project.projectId, 'serverId');
      await change({ resource: 'projectMcpServer' as const, entityId: input.serverId, customerId: project.customerId, projectId: project.projectId });
      return { success: true };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjectMcpServers',
    summary: "List a project's MCP servers — an addition: the seed does not show it",
    permission: 'project_member',
    scope,
    input: Listing,
    output: Page('entries', McpServerEntryOut),
    handler: async (input) => {
      const k = keyset(projectMcpServers.createdAt, projectMcpServers.id, input.pageToken);
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const size = pageSizeOf(input.pageSize);
      const rows = await deps.db
        .select()
        .from(projectMcpServers)
        .where(and(eq(projectMcpServers.projectUuid, project.id), k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return {
        entries: p.items.map((r) => ({ id: r.id, customerId: r.customerId, projectId: r.projectId, serverId: r.serverId, createdAt: ts(r.createdAt) })),
        nextPageToken: p.nextPageToken,
      };
    },
  }),
];
