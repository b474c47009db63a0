import { and, eq, isNull } from 'drizzle-orm';
import { ts } from '../../api/kit.ts';
import { AssignmentOps } from '../../api/ops/assignments.ts';
import { connectError } from '../../core/errors.ts';
import { checkProviderName } from '../../api/providers.ts';
import type { TObject } from '@sinclair/typebox';
import type { OpSpec } from '../../api/op.ts';
import type { ResourceName } from '../../api/resources.ts';
import {
  aiModels,
  type projectA2aAgents,
  projectMcpServers,
  projectModels,
  projectProviders,
  type ProjectRow,
} from '../../store/schema/index.ts';
import { modelView } from '../../store/views/catalog.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Tx } from '../deps.ts';
import { findProject, lockProject, uniquely } from '../lookups.ts';
import { type MutationSpec, mutation, rid } from '../mutation.ts';
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

type KeyedTable = typeof projectProviders | typeof projectMcpServers | typeof projectA2aAgents;
type KeyColumn = typeof projectProviders.providerName | typeof projectMcpServers.serverId | typeof projectA2aAgents.agentId;

/** A project assignment keyed by one text column: a provider, a catalog MCP server or a catalog A2A agent. */
export interface KeyedAssignment {
  ops: { add: MutationSpec<TObject, TObject>; remove: MutationSpec<TObject, TObject>; list: OpSpec };
  table: KeyedTable;
  /** The key's field in the inputs and the entries (e.g. serverId), and its column. */
  key: string;
  column: KeyColumn;
  /** The change recorded (its kind and entity follow from src/api/resources.ts). */
  resource: ResourceName;
  /** What the key names, as errors say it (`MCP server 'docs'`). */
  label: string;
  /** What an assignment already present is to the project (already_exists); 'assigned to' unless set. */
  verb?: string;
  /** Run on Add once the project is locked: refuses a key that names nothing (and may lock what it names). */
  check: (tx: Tx, key: string) => Promise<unknown>;
}

/** An assignment row as the ops read it (`key`: the value of its key column). */
interface Entry {
  id: string;
  customerId: string;
  projectId: string;
  key: string;
  createdAt: Date;
}

/** A validated input's text field (the op's schema declares it a string). */
const text = (input: Readonly<Record<string, unknown>>, field: string): string => {
  const v = input[field];
  if (typeof v !== 'string') throw connectError('invalid_argument', `invalid field '${field}': expected a string`, field);
  return v;
};

/** Add, Remove and List of a keyed project assignment (see KeyedAssignment). */
export const keyedAssignmentOps = (deps: ControlDeps, a: KeyedAssignment): OpDef[] => {
  const { table, key, column } = a;
  const what = (id: string) => `${a.label} '${id}'`;
  const entry = (r: Entry) => ({
    id: r.id,
    customerId: r.customerId,
    projectId: r.projectId,
    [key]: r.key,
    createdAt: ts(r.createdAt),
  });
  const fields = { id: table.id, customerId: table.customerId, projectId: table.projectId, key: column, createdAt: table.createdAt };
  const resourceId = (i: Readonly<Record<string, unknown>>) => rid(i.customerId, i.projectId, i[key]);
  /** The project (locked) and the key an Add or Remove names, and the change it records. */
  const target = async (tx: Tx, input: Readonly<Record<string, unknown>>) => {
    const project = await lockProject(tx, text(input, 'customerId'), text(input, 'projectId'));
    const id = text(input, key);
    return { project, id, change: { resource: a.resource, entityId: id, customerId: project.customerId, projectId: project.projectId } };
  };
  return [
    mutation(deps, a.ops.add, {
      resourceId,
      scope,
      handler: async (input, { tx, change }) => {
        const { project, id, change: changed } = await target(tx, input);
        await a.check(tx, id);
        const row = await uniquely(
          async () => {
            const [r] = await tx
              .insert(table)
              .values({ projectUuid: project.id, customerId: project.customerId, projectId: project.projectId, [key]: id })
              .returning(fields);
            return r as Entry;
          },
          `${what(id)} is already ${a.verb ?? 'assigned to'} project '${text(input, 'projectId')}'`,
          key,
        );
        await change(changed);
        return { entry: entry(row) };
      },
    }),
    mutation(deps, a.ops.remove, {
      resourceId,
      scope,
      handler: async (input, { tx, change }) => {
        const { project, id, change: changed } = await target(tx, input);
        const gone = await tx
          .delete(table)
          .where(and(eq(table.projectUuid, project.id), eq(column, id)))
          .returning({ id: table.id });
        if (gone.length === 0) throw notAssigned(what(id), project.projectId, key);
        await change(changed);
        return { success: true };
      },
    }),
    op(a.ops.list, {
      scope,
      handler: async (input) => {
        const k = keyset(table.createdAt, table.id, typeof input.pageToken === 'string' ? input.pageToken : undefined);
        const project = await findProject(deps.db, text(input, 'customerId'), text(input, 'projectId'));
        const size = pageSizeOf(typeof input.pageSize === 'number' ? input.pageSize : undefined);
        const rows = await deps.db
          .select(fields)
          .from(table)
          .where(and(eq(table.projectUuid, project.id), k.where))
          .orderBy(...k.order)
          .limit(size + 1);
        const p = page(rows, size);
        return { entries: p.items.map(entry), nextPageToken: p.nextPageToken };
      },
    }),
  ];
};

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
  ...keyedAssignmentOps(deps, {
    ops: { add: AddProjectProvider, remove: RemoveProjectProvider, list: ListProjectProviders },
    table: projectProviders,
    key: 'providerName',
    column: projectProviders.providerName,
    resource: 'projectProvider',
    label: 'provider',
    verb: 'enabled for',
    check: async (_tx, name) => checkProviderName('providerName', name),
  }),
  ...keyedAssignmentOps(deps, {
    ops: { add: AddProjectMcpServer, remove: RemoveProjectMcpServer, list: ListProjectMcpServers },
    table: projectMcpServers,
    key: 'serverId',
    column: projectMcpServers.serverId,
    resource: 'projectMcpServer',
    label: 'MCP server',
    // Held FOR SHARE to the commit: a concurrent DeleteMcpServer waits, then sees the assignment.
    check: (tx, id) => findMcpServer(tx, id, 'share'),
  }),
];
