import { and, eq, inArray, isNull } from 'drizzle-orm';
import { DEFAULT_PROJECT, optTs, ts } from '../../api/kit.ts';
import { ProjectOps } from '../../api/ops/projects.ts';
import { connectError } from '../../core/errors.ts';
import { projects, type ProjectRow } from '../../store/schema/index.ts';
import { cascadeProjectDelete } from '../cascade.ts';
import { op, type OpDef } from '../connect.ts';
import { type ControlDeps, targetsOf } from '../deps.ts';
import { findCustomer, findProject, lockCustomer, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';

const { CreateProject, GetProject, ListProjects, UpdateProject, DeleteProject } = ProjectOps;
const scope = (i: { customerId?: unknown; projectId?: unknown }) => ({ customerId: i.customerId, projectId: i.projectId });
const idOf = (i: { customerId?: unknown; projectId?: unknown }) => rid(i.customerId, i.projectId);

export const projectView = (p: ProjectRow) => ({
  id: p.id,
  customerId: p.customerId,
  projectId: p.projectId,
  name: p.name ?? '',
  description: p.description ?? '',
  labels: p.labels,
  createdAt: ts(p.createdAt),
  updatedAt: ts(p.updatedAt),
  deletedAt: optTs(p.deletedAt),
});

export const projectOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, CreateProject, {
    resourceId: idOf,
    handler: async (input, { tx, change }) => {
      const customer = await lockCustomer(tx, input.customerId);
      const row = await uniquely(
        async () => {
          const [p] = await tx
            .insert(projects)
            .values({
              customerUuid: customer.id,
              customerId: customer.customerId,
              projectId: input.projectId,
              name: input.name ?? null,
              description: input.description ?? null,
              labels: input.labels ?? {},
            })
            .returning();
          return p as ProjectRow;
        },
        `project '${input.projectId}' already exists in customer '${input.customerId}'`,
        'projectId',
      );
      await change({ resource: 'project' as const, entityId: input.projectId, customerId: input.customerId, projectId: input.projectId });
      return { project: projectView(row) };
    },
  }),
  op(GetProject, {
    scope,
    handler: async (input) => ({ project: projectView(await findProject(deps.db, input.customerId, input.projectId)) }),
  }),
  op(ListProjects, {
    scope: (i) => ({ customerId: i.customerId }),
    handler: async (input, ctx) => {
      const k = keyset(projects.createdAt, projects.id, input.pageToken);
      const customer = await findCustomer(deps.db, input.customerId);
      const size = pageSizeOf(input.pageSize);
      const visible = ctx.principal.kind === 'user' ? [...ctx.principal.roles.keys()] : undefined;
      if (visible && visible.length === 0) return { projects: [], nextPageToken: '' };
      const rows = await deps.db
        .select()
        .from(projects)
        .where(
          and(
            eq(projects.customerUuid, customer.id),
            isNull(projects.deletedAt),
            visible ? inArray(projects.projectId, visible) : undefined,
            k.where,
          ),
        )
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { projects: p.items.map(projectView), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, UpdateProject, {
    resourceId: idOf,
    scope,
    handler: async (input, { tx }) => {
      const current = await lockProject(tx, input.customerId, input.projectId, 'projectId', 'update');
      const patch: Partial<typeof projects.$inferInsert> = { updatedAt: new Date() };
      if (input.name != null) patch.name = input.name;
      if (input.description != null) patch.description = input.description;
      if (input.labels !== undefined) patch.labels = input.labels;
      // Not configuration (no data plane reads a project's name, description or labels): no change rows.
      const [row] = await tx
        .update(projects)
        .set(patch)
        .where(and(eq(projects.id, current.id), isNull(projects.deletedAt)))
        .returning();
      return { project: projectView(row ?? current) };
    },
  }),
  mutation(deps, DeleteProject, {
    resourceId: idOf,
    handler: async (input, { tx, change }) => {
      const deletedAt = new Date();
      const project = await lockProject(tx, input.customerId, input.projectId, 'projectId', 'update');
      if (project.projectId === DEFAULT_PROJECT)
        throw connectError('failed_precondition', 'the default project cannot be deleted; it is deleted with its customer', 'projectId');
      const targets = await targetsOf(tx, { customerId: project.customerId, projectId: project.projectId });
      await cascadeProjectDelete(tx, project.customerId, project.projectId, deletedAt);
      await change(
        { resource: 'project' as const, entityId: project.projectId, customerId: project.customerId, projectId: project.projectId },
        targets,
      );
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
