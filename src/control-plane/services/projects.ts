import { and, eq, inArray, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { projects, type ProjectRow } from '../../store/schema/index.ts';
import { cascadeProjectDelete } from '../cascade.ts';
import { op, type OpDef } from '../connect.ts';
import { type ControlDeps, targetsOf } from '../deps.ts';
import { findCustomer, findProject, lockCustomer, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import {
  CustomerRef,
  DEFAULT_PROJECT,
  Deleted,
  Description,
  Labels,
  LabelsOut,
  Name,
  One,
  OptTimestamp,
  Page,
  PageSize,
  PageToken,
  ProjectKey,
  ProjectSlug,
  Timestamp,
  optTs,
  ts,
} from '../schemas.ts';

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Projects';

export const ProjectOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    customerId: t.String(),
    projectId: t.String({ description: "slug, unique within the customer; 'default' is the default project" }),
    name: t.String(),
    description: t.String(),
    labels: LabelsOut(),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
    deletedAt: OptTimestamp('set once soft-deleted (never returned by Get/List)'),
  },
  { description: 'Project' },
);

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

const ProjectAddr = { customerId: CustomerRef(), projectId: ProjectKey() };
const scope = (i: { customerId: string; projectId: string }) => ({ customerId: i.customerId, projectId: i.projectId });

export const projectOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'CREATE',
    resource: 'project',
    resourceId: (i) => rid(i.customerId, i.projectId),
    service: ADMIN,
    group: GROUP,
    name: 'CreateProject',
    summary: 'Create a project in a customer',
    notes: 'projectId is unique among the active projects of the customer; a slug of a deleted project may be reused (the new project starts empty).',
    permission: 'platform_admin',
    input: t.Object(
      { customerId: CustomerRef(), projectId: ProjectSlug(), description: Description(), labels: Labels(), name: Name() },
      { additionalProperties: false },
    ),
    output: One('project', ProjectOut),
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
  op({
    service: ADMIN,
    group: GROUP,
    name: 'GetProject',
    summary: 'Get a project',
    permission: 'project_member',
    scope,
    input: t.Object(ProjectAddr, { additionalProperties: false }),
    output: One('project', ProjectOut),
    handler: async (input) => ({ project: projectView(await findProject(deps.db, input.customerId, input.projectId)) }),
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjects',
    summary: "List a customer's active projects (oldest first) — an addition: the seed does not show it",
    notes: 'A user token sees only the projects it has a role in. Keyset paging as ListCustomers.',
    permission: 'customer_member',
    scope: (i) => ({ customerId: i.customerId }),
    input: t.Object({ customerId: CustomerRef(), pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('projects', ProjectOut),
    handler: async (input, ctx) => {
      const k = keyset(projects.createdAt, projects.id, input.pageToken);
      const customer = await findCustomer(deps.db, input.customerId);
      const size = pageSizeOf(input.pageSize);
      const visible = ctx.principal.kind === 'user' ? [...ctx.principal.roles.keys()] : undefined;
      if (visible && visible.length === 0) return { projects: [], nextPageToken: '' };
      const rows = await deps.db
        .select()
        .from(projects)
        .where(and(eq(projects.customerUuid, customer.id), isNull(projects.deletedAt), visible ? inArray(projects.projectId, visible) : undefined, k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { projects: p.items.map(projectView), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'project',
    resourceId: (i) => rid(i.customerId, i.projectId),
    service: ADMIN,
    group: GROUP,
    name: 'UpdateProject',
    summary: 'Update a project (unset or null fields stay unchanged; labels replaces the set)',
    permission: 'project_admin',
    scope,
    input: t.Object({ ...ProjectAddr, description: Description(), labels: Labels(), name: Name() }, { additionalProperties: false }),
    output: One('project', ProjectOut),
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
  mutation(deps, {
    action: 'DELETE',
    resource: 'project',
    resourceId: (i) => rid(i.customerId, i.projectId),
    service: ADMIN,
    group: GROUP,
    name: 'DeleteProject',
    summary: 'Delete a project (soft delete, cascading)',
    notes:
      "Soft-deletes the project, its routes and provider connections; revokes its API keys (they stop working once the change is served); removes its members, assignments, settings and gateway attachments. The 'default' project cannot be deleted (failed_precondition); it goes with its customer.",
    permission: 'platform_admin',
    input: t.Object(ProjectAddr, { additionalProperties: false }),
    output: Deleted(),
    handler: async (input, { tx, change }) => {
      const deletedAt = new Date();
      const project = await lockProject(tx, input.customerId, input.projectId, 'projectId', 'update');
      if (project.projectId === DEFAULT_PROJECT)
        throw connectError('failed_precondition', "the default project cannot be deleted; it is deleted with its customer", 'projectId');
      const targets = await targetsOf(tx, { customerId: project.customerId, projectId: project.projectId });
      await cascadeProjectDelete(tx, project.customerId, project.projectId, deletedAt);
      await change({ resource: 'project' as const, entityId: project.projectId, customerId: project.customerId, projectId: project.projectId }, targets);
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
