import { and, eq, inArray, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { type ProjectGatewayRow, projectGatewayProjects, projectGateways } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import { type ControlDeps, LOCAL_TARGET, type Reader } from '../deps.ts';
import { lockCustomer, lockProject, uniquely } from '../lookups.ts';
import { mutation, type MutationCtx } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import {
  CustomerSlug,
  Deleted,
  Description,
  Labels,
  LabelsOut,
  Name,
  Nullable,
  OptTimestamp,
  PATTERNS,
  Page,
  PageSize,
  PageToken,
  Str,
  Success,
  Timestamp,
  Url,
  Uuid,
  Warnings,
  optTs,
  ts,
} from '../schemas.ts';
import { findDataplaneBySlug, lockDataplaneBySlug } from './dataplanes.ts';
import { assertHostFree, attachedProjects, attachedProjectsOf, findGateway, hostOf, lockGateway, ownerScope, servingWarnings, visibleTo, WARN } from './gateway-rules.ts';

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Project gateways';

const Slug = (what: string) => Str(1, 253, { pattern: PATTERNS.ID, description: `${what} (ID, 1-253)` });
const OwnerProject = () =>
  t.Optional(
    Str(0, 253, {
      pattern: `^$|${PATTERNS.ID}`,
      description: 'owner scope (ID, max 253): a project owner names the project it owns, which the gateway must serve; ignored for platform admins',
    }),
  );
const ById = { id: Uuid('project gateway UUID (internal id)') };

export const ProjectGatewayOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    customerId: t.String(),
    workspaceId: t.String({ description: 'slug of the hosting data plane (workspace)' }),
    projectGatewayId: t.String({ description: 'slug, unique within the workspace' }),
    name: t.String(),
    description: t.String(),
    labels: LabelsOut(),
    url: t.String({ description: 'customer-facing URL or hostname; empty until set' }),
    projectIds: t.Array(t.String(), { description: 'attached projects, in attachment order' }),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
    deletedAt: OptTimestamp('set once soft-deleted (never returned by Get/List)'),
  },
  { description: 'ProjectGateway' },
);
const WithWarnings = t.Object({ projectGateway: ProjectGatewayOut, warnings: Warnings() });
const OneGateway = t.Object({ projectGateway: ProjectGatewayOut });

const view = (g: ProjectGatewayRow, projectIds: string[]) => ({
  id: g.id,
  customerId: g.customerId,
  workspaceId: g.workspaceId,
  projectGatewayId: g.projectGatewayId,
  name: g.name ?? '',
  description: g.description ?? '',
  labels: g.labels,
  url: g.url ?? '',
  projectIds,
  createdAt: ts(g.createdAt),
  updatedAt: ts(g.updatedAt),
  deletedAt: optTs(g.deletedAt),
});
const viewOf = async (db: Reader, g: ProjectGatewayRow) => view(g, await attachedProjects(db, g.id));

/** The change record of a gateway mutation: the gateway, its hosting data plane(s) and `local`. */
const recordGatewayChange = async (m: Pick<MutationCtx, 'tx' | 'change'>, g: ProjectGatewayRow, workspaces: readonly string[], payload: Record<string, unknown> = {}) => {
  const planes = [];
  for (const ws of new Set(workspaces)) {
    const dp = await findDataplaneBySlug(m.tx, g.customerId, ws).catch(() => undefined);
    if (dp) planes.push(dp.id);
  }
  await m.change({ kind: 'PROJECT_GATEWAY', entity: 'project_gateway', entityId: g.id, customerId: g.customerId, payload }, [LOCAL_TARGET, g.id, ...planes]);
};

export const projectGatewayOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'CREATE',
    resource: 'project_gateway',
    resourceId: (i, o) => o?.projectGateway.id ?? '',
    service: ADMIN,
    group: GROUP,
    name: 'CreateProjectGateway',
    summary: 'Create a project gateway hosted on a workspace',
    notes:
      'The workspace must exist for the customer (not_found); projectGatewayId is unique within it (already_exists). A url given must have a host no other gateway is bound to (already_exists).',
    permission: 'platform_admin',
    input: t.Object(
      {
        customerId: CustomerSlug(),
        workspaceId: Slug('hosting workspace slug; must exist'),
        projectGatewayId: Slug('gateway slug, unique within the workspace'),
        description: Description(),
        labels: Labels(),
        name: Name(),
        url: Nullable(Url(0, 'customer-facing URL or hostname (max 2048)')),
      },
      { additionalProperties: false },
    ),
    output: OneGateway,
    handler: async (input, m) => {
      const { tx } = m;
      const customer = await lockCustomer(tx, input.customerId);
      await lockDataplaneBySlug(tx, customer, input.workspaceId);
      const host = input.url ? hostOf(input.url) : null;
      if (host) await assertHostFree(tx, host, undefined);
      const row = await uniquely(
        async () => {
          const [g] = await tx
              .insert(projectGateways)
              .values({
                customerUuid: customer.id,
                customerId: input.customerId,
                workspaceId: input.workspaceId,
                projectGatewayId: input.projectGatewayId,
                name: input.name ?? null,
                description: input.description ?? null,
                labels: input.labels ?? {},
                url: input.url || null,
                urlHost: host,
              })
              .returning();
          return g as ProjectGatewayRow;
        },
        `project gateway '${input.projectGatewayId}' already exists in workspace '${input.workspaceId}', or its URL host is bound to another gateway`,
        'projectGatewayId',
      );
      await recordGatewayChange(m, row, [row.workspaceId]);
      return { projectGateway: view(row, []) };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'GetProjectGateway',
    summary: 'Get a project gateway by its internal id',
    permission: 'project_member',
    scope: ownerScope(deps),
    input: t.Object({ ...ById, projectId: OwnerProject() }, { additionalProperties: false }),
    output: OneGateway,
    handler: async (input) => ({ projectGateway: await viewOf(deps.db, await findGateway(deps.db, input.id)) }),
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListProjectGateways',
    summary: 'List active project gateways (oldest first) — an addition: the seed does not show it',
    notes: 'Filters: customerId, workspaceId, projectId (gateways serving it). A user token must name its customer and sees the gateways serving its projects.',
    permission: 'customer_member',
    scope: (i) => (i.customerId ? { customerId: i.customerId } : undefined),
    input: t.Object(
      {
        customerId: t.Optional(Str(0, 63, { pattern: `^$|${PATTERNS.SLUG}`, description: 'customer slug; empty or unset: all (platform admins only)' })),
        workspaceId: t.Optional(Str(0, 253, { pattern: `^$|${PATTERNS.ID}`, description: 'only gateways hosted on this workspace' })),
        projectId: t.Optional(Str(0, 253, { pattern: `^$|${PATTERNS.ID}`, description: 'only gateways serving this project' })),
        pageSize: PageSize(),
        pageToken: PageToken(),
      },
      { additionalProperties: false },
    ),
    output: Page('projectGateways', ProjectGatewayOut),
    handler: async (input, ctx) => {
      const size = pageSizeOf(input.pageSize);
      const k = keyset(projectGateways.createdAt, projectGateways.id, input.pageToken);
      const visible = visibleTo(ctx.principal);
      const wanted = input.projectId ? (visible ? visible.filter((p) => p === input.projectId) : [input.projectId]) : visible;
      if (wanted && wanted.length === 0) return { projectGateways: [], nextPageToken: '' };
      const serving = wanted
        ? inArray(
            projectGateways.id,
            deps.db
              .select({ id: projectGatewayProjects.gatewayId })
              .from(projectGatewayProjects)
              .where(and(input.customerId ? eq(projectGatewayProjects.customerId, input.customerId) : undefined, inArray(projectGatewayProjects.projectId, wanted))),
          )
        : undefined;
      const rows = await deps.db
        .select()
        .from(projectGateways)
        .where(
          and(
            isNull(projectGateways.deletedAt),
            input.customerId ? eq(projectGateways.customerId, input.customerId) : undefined,
            input.workspaceId ? eq(projectGateways.workspaceId, input.workspaceId) : undefined,
            serving,
            k.where,
          ),
        )
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      const attached = await attachedProjectsOf(deps.db, p.items.map((g) => g.id));
      return { projectGateways: p.items.map((g) => view(g, attached.get(g.id) ?? [])), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'project_gateway',
    resourceId: (i) => i.id,
    service: ADMIN,
    group: GROUP,
    name: 'UpdateProjectGateway',
    summary: 'Update name, description, labels, url (unset or null fields stay unchanged; labels replaces the set; url "" clears it)',
    notes: 'A url whose host is bound to another gateway is already_exists.',
    permission: 'project_admin',
    scope: ownerScope(deps),
    input: t.Object(
      { ...ById, projectId: OwnerProject(), description: Description(), labels: Labels(), name: Name(), url: Nullable(Url(0, 'customer-facing URL or hostname (max 2048); empty clears it')) },
      { additionalProperties: false },
    ),
    output: OneGateway,
    handler: async (input, m) => {
      const { tx } = m;
      const current = await lockGateway(tx, input.id, 'update');
      const patch: Partial<typeof projectGateways.$inferInsert> = { updatedAt: new Date() };
      if (input.name != null) patch.name = input.name;
      if (input.description != null) patch.description = input.description;
      if (input.labels !== undefined) patch.labels = input.labels;
      if (input.url != null) {
        const host = input.url === '' ? null : hostOf(input.url);
        if (host) await assertHostFree(tx, host, current.id);
        patch.url = input.url === '' ? null : input.url;
        patch.urlHost = host;
      }
      const row = await uniquely(
        async () => {
          const [g] = await tx.update(projectGateways).set(patch).where(eq(projectGateways.id, current.id)).returning();
          return g as ProjectGatewayRow;
        },
        `the URL host is bound to another project gateway`,
        'url',
      );
      if (input.url != null && input.url !== (current.url ?? '')) await recordGatewayChange(m, row, [row.workspaceId], { url: row.url });
      return { projectGateway: await viewOf(tx, row) };
    },
  }),
  mutation(deps, {
    action: 'DELETE',
    resource: 'project_gateway',
    resourceId: (i) => i.id,
    service: ADMIN,
    group: GROUP,
    name: 'DeleteProjectGateway',
    summary: 'Delete a project gateway (soft delete; its attachments are removed and its URL host freed)',
    permission: 'project_admin',
    scope: ownerScope(deps),
    input: t.Object({ ...ById, projectId: OwnerProject() }, { additionalProperties: false }),
    output: Deleted(),
    handler: async (input, m) => {
      const { tx } = m;
      const current = await lockGateway(tx, input.id, 'update');
      const deletedAt = new Date();
      await tx.delete(projectGatewayProjects).where(eq(projectGatewayProjects.gatewayId, current.id));
      await tx.update(projectGateways).set({ deletedAt, updatedAt: deletedAt }).where(eq(projectGateways.id, current.id));
      await recordGatewayChange(m, current, [current.workspaceId]);
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'project_gateway',
    resourceId: (i) => i.id,
    service: ADMIN,
    group: GROUP,
    name: 'AttachProjectGatewayProject',
    summary: 'Attach a project to a gateway (idempotent)',
    notes: 'The project must exist in the gateway\'s customer. Warns when the project has no assigned models (the gateway then serves an empty route map and answers 404).',
    permission: 'project_admin',
    scope: async (i) => {
      const gw = await findGateway(deps.db, i.id);
      return { customerId: gw.customerId, customerUuid: gw.customerUuid, projectId: i.projectId };
    },
    input: t.Object({ ...ById, projectId: Slug('project to attach') }, { additionalProperties: false }),
    output: WithWarnings,
    handler: async (input, m) => {
      const { tx } = m;
      const found = await findGateway(tx, input.id);
      const project = await lockProject(tx, found.customerId, input.projectId);
      const gw = await lockGateway(tx, found.id, 'share');
      if (project.customerUuid !== gw.customerUuid) throw connectError('not_found', `project gateway '${gw.id}' not found`, 'id');
      const added = await tx
        .insert(projectGatewayProjects)
        .values({ gatewayId: gw.id, projectUuid: project.id, customerId: gw.customerId, projectId: project.projectId })
        .onConflictDoNothing()
        .returning({ id: projectGatewayProjects.id });
      if (added.length > 0) await recordGatewayChange(m, gw, [gw.workspaceId], { attached: project.projectId });
      const warnings = await servingWarnings(tx, gw, [project.projectId]);
      return { projectGateway: await viewOf(tx, gw), warnings };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'project_gateway',
    resourceId: (i) => i.id,
    service: ADMIN,
    group: GROUP,
    name: 'DetachProjectGatewayProject',
    summary: 'Detach a project from a gateway (not attached: not_found)',
    permission: 'project_admin',
    scope: async (i) => {
      const gw = await findGateway(deps.db, i.id);
      return { customerId: gw.customerId, customerUuid: gw.customerUuid, projectId: i.projectId };
    },
    input: t.Object({ ...ById, projectId: Slug('project to detach') }, { additionalProperties: false }),
    output: Success(),
    handler: async (input, m) => {
      const { tx } = m;
      const gw = await lockGateway(tx, input.id, 'share');
      const gone = await tx
        .delete(projectGatewayProjects)
        .where(and(eq(projectGatewayProjects.gatewayId, gw.id), eq(projectGatewayProjects.projectId, input.projectId)))
        .returning({ id: projectGatewayProjects.id });
      if (gone.length === 0) throw connectError('not_found', `project '${input.projectId}' is not attached to this gateway`, 'projectId');
      await recordGatewayChange(m, gw, [gw.workspaceId], { detached: input.projectId });
      return { success: true };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'project_gateway',
    resourceId: (i) => i.id,
    service: ADMIN,
    group: GROUP,
    name: 'SetProjectGatewayURL',
    summary: "Set a gateway's customer-facing URL",
    notes:
      'The host part must be globally unique across active project gateways: a host bound to another gateway is already_exists. Warns when no project is attached or an attached project has no assigned models.',
    permission: 'project_admin',
    scope: ownerScope(deps),
    input: t.Object({ ...ById, projectId: OwnerProject(), url: Url(1, 'customer-facing URL or hostname (1-2048)') }, { additionalProperties: false }),
    output: WithWarnings,
    handler: async (input, m) => {
      const { tx } = m;
      const gw = await lockGateway(tx, input.id, 'update');
      const host = hostOf(input.url);
      await assertHostFree(tx, host, gw.id);
      const row = await uniquely(
        async () => {
          const [g] = await tx.update(projectGateways).set({ url: input.url, urlHost: host, updatedAt: new Date() }).where(eq(projectGateways.id, gw.id)).returning();
          return g as ProjectGatewayRow;
        },
        `the URL host '${host}' is bound to another project gateway`,
        'url',
      );
      await recordGatewayChange(m, row, [row.workspaceId], { url: input.url });
      const projects = await attachedProjects(tx, row.id);
      return { projectGateway: view(row, projects), warnings: await servingWarnings(tx, row, projects) };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'project_gateway',
    resourceId: (i) => i.id,
    service: ADMIN,
    group: GROUP,
    name: 'SetProjectGatewayWorkspace',
    summary: 'Move a gateway to another workspace (data plane) of its customer',
    notes:
      "The workspace must exist for the gateway's customer (not_found) and the gateway's slug must be free in it (already_exists). The warnings always remind that the hostname is unchanged and must be repointed (DNS and TLS certificate) to the new data plane's ingress; URL and model advisories may follow.",
    permission: 'platform_admin',
    input: t.Object({ ...ById, workspaceId: Slug('target workspace slug') }, { additionalProperties: false }),
    output: WithWarnings,
    handler: async (input, m) => {
      const { tx } = m;
      const found = await findGateway(tx, input.id);
      await lockDataplaneBySlug(tx, { id: found.customerUuid, customerId: found.customerId }, input.workspaceId);
      const gw = await lockGateway(tx, found.id, 'update');
      const row = await uniquely(
        async () => {
          const [g] = await tx.update(projectGateways).set({ workspaceId: input.workspaceId, updatedAt: new Date() }).where(eq(projectGateways.id, gw.id)).returning();
          return g as ProjectGatewayRow;
        },
        `a project gateway '${gw.projectGatewayId}' already exists in workspace '${input.workspaceId}'`,
        'workspaceId',
      );
      await recordGatewayChange(m, row, [gw.workspaceId, row.workspaceId], { from: gw.workspaceId, to: row.workspaceId });
      const projects = await attachedProjects(tx, row.id);
      const warnings = [WARN.repoint(row.urlHost, row.workspaceId), ...(row.url ? [] : [WARN.noUrl()]), ...(await servingWarnings(tx, row, projects))];
      return { projectGateway: view(row, projects), warnings };
    },
  }),
];
