import { and, eq, isNull } from 'drizzle-orm';
import { ts } from '../../api/kit.ts';
import { AssignmentOps } from '../../api/ops/assignments.ts';
import { connectError } from '../../core/errors.ts';
import { checkProviderName } from '../../api/providers.ts';
import { aiModels, projectMcpServers, projectModels, projectProviders, type ProjectRow } from '../../store/schema/index.ts';
import { modelView } from '../../store/views/catalog.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { findProject, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { findModel } from './catalog.ts';
import { findMcpServer } from './mcp-servers.ts';

const {
  AddProjectModel,
  RemoveProjectModel,
  ListProjectModels,
  AddProjectProvider,
  RemoveProjectProvider,
  ListProjectProviders,
  AddProjectMcpServer,
  RemoveProjectMcpServer,
  ListProjectMcpServers,
} = AssignmentOps;
const scope = (i: { customerId?: unknown; projectId?: unknown }) => ({ customerId: i.customerId, projectId: i.projectId });

/** Enables a provider for a (locked, see lockProject) project; idempotent. Used by connections. */
export const enableProvider = async (tx: Tx, project: ProjectRow, providerName: string): Promise<void> => {
  await tx
    .insert(projectProviders)
    .values({ projectUuid: project.id, customerId: project.customerId, projectId: project.projectId, providerName })
    .onConflictDoNothing();
};

const notAssigned = (what: string, project: string, field: string) =>
  connectError('not_found', `${what} is not assigned to project '${project}'`, field);

export const assignmentOps = (deps: ControlDeps): OpDef[] => [
  // ---- models
  mutation(deps, AddProjectModel, {
    resourceId: (i) => rid(i.customerId, i.projectId, i.modelId),
    scope,
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
        entry: {
          id: row.id,
          customerId: row.customerId,
          projectId: row.projectId,
          modelId: model.id,
          model: modelView(model),
          createdAt: ts(row.createdAt),
        },
      };
    },
  }),
  mutation(deps, RemoveProjectModel, {
    resourceId: (i) => rid(i.customerId, i.projectId, i.modelId),
    scope,
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const gone = await tx
        .delete(projectModels)
        .where(and(eq(projectModels.projectUuid, project.id), eq(projectModels.modelId, input.modelId)))
        .returning({ id: projectModels.id });
      if (gone.length === 0) throw notAssigned(`model '${input.modelId}'`, project.projectId, 'modelId');
      await change({
        resource: 'projectModel' as const,
        entityId: input.modelId,
        customerId: project.customerId,
        projectId: project.projectId,
      });
      return { success: true };
    },
  }),
  op(ListProjectModels, {
    scope,
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
  mutation(deps, AddProjectProvider, {
    resourceId: (i) => rid(i.customerId, i.projectId, i.providerName),
    scope,
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      checkProviderName('providerName', input.providerName);
      const row = await uniquely(
        async () => {
          const [r] = await tx
            .insert(projectProviders)
            .values({
              projectUuid: project.id,
              customerId: project.customerId,
              projectId: project.projectId,
              providerName: input.providerName,
            })
            .returning();
          return r as typeof projectProviders.$inferSelect;
        },
        `provider '${input.providerName}' is already enabled for project '${input.projectId}'`,
        'providerName',
      );
      await change({
        resource: 'projectProvider' as const,
        entityId: input.providerName,
        customerId: project.customerId,
        projectId: project.projectId,
      });
      return {
        entry: {
          id: row.id,
          customerId: row.customerId,
          projectId: row.projectId,
          providerName: row.providerName,
          createdAt: ts(row.createdAt),
        },
      };
    },
  }),
  mutation(deps, RemoveProjectProvider, {
    resourceId: (i) => rid(i.customerId, i.projectId, i.providerName),
    scope,
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const gone = await tx
        .delete(projectProviders)
        .where(and(eq(projectProviders.projectUuid, project.id), eq(projectProviders.providerName, input.providerName)))
        .returning({ id: projectProviders.id });
      if (gone.length === 0) throw notAssigned(`provider '${input.providerName}'`, project.projectId, 'providerName');
      await change({
        resource: 'projectProvider' as const,
        entityId: input.providerName,
        customerId: project.customerId,
        projectId: project.projectId,
      });
      return { success: true };
    },
  }),
  op(ListProjectProviders, {
    scope,
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
        entries: p.items.map((r) => ({
          id: r.id,
          customerId: r.customerId,
          projectId: r.projectId,
          providerName: r.providerName,
          createdAt: ts(r.createdAt),
        })),
        nextPageToken: p.nextPageToken,
      };
    },
  }),
  // ---- MCP servers
  mutation(deps, AddProjectMcpServer, {
    resourceId: (i) => rid(i.customerId, i.projectId, i.serverId),
    scope,
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      // Held FOR SHARE to the commit: a concurrent DeleteMcpServer waits, then sees the assignment.
      await findMcpServer(tx, input.serverId, 'share');
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
      await change({
        resource: 'projectMcpServer' as const,
        entityId: input.serverId,
        customerId: project.customerId,
        projectId: project.projectId,
      });
      return {
        entry: { id: row.id, customerId: row.customerId, projectId: row.projectId, serverId: row.serverId, createdAt: ts(row.createdAt) },
      };
    },
  }),
  mutation(deps, RemoveProjectMcpServer, {
    resourceId: (i) => rid(i.customerId, i.projectId, i.serverId),
    scope,
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      const gone = await tx
        .delete(projectMcpServers)
        .where(and(eq(projectMcpServers.projectUuid, project.id), eq(projectMcpServers.serverId, input.serverId)))
        .returning({ id: projectMcpServers.id });
      if (gone.length === 0) throw notAssigned(`MCP server '${input.serverId}'`, project.projectId, 'serverId');
      await change({
        resource: 'projectMcpServer' as const,
        entityId: input.serverId,
        customerId: project.customerId,
        projectId: project.projectId,
      });
      return { success: true };
    },
  }),
  op(ListProjectMcpServers, {
    scope,
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
        entries: p.items.map((r) => ({
          id: r.id,
          customerId: r.customerId,
          projectId: r.projectId,
          serverId: r.serverId,
          createdAt: ts(r.createdAt),
        })),
        nextPageToken: p.nextPageToken,
      };
    },
  }),
];
