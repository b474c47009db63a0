import { and, eq, inArray, isNull } from 'drizzle-orm';
import { ProjectGatewayOps } from '../../api/ops/project-gateways.ts';
import { optTs, ts } from '../../api/kit.ts';
import { connectError } from '../../core/errors.ts';
import { type ProjectGatewayRow, projectGatewayProjects, projectGateways } from '../../store/schema/index.ts';
import { op, type OpDef, type Unchecked } from '../connect.ts';
import { type ControlDeps, LOCAL_TARGET, type Reader } from '../deps.ts';
import { lockCustomer, lockProject, uniquely } from '../lookups.ts';
import { mutation, type MutationCtx, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { findDataplaneBySlug, lockDataplaneBySlug } from './dataplanes.ts';
import {
  assertHostFree,
  attachedProjects,
  attachedProjectsOf,
  findGateway,
  hostOf,
  lockGateway,
  ownerScope,
  servingWarnings,
  visibleTo,
  WARN,
} from './gateway-rules.ts';

const {
  CreateProjectGateway,
  GetProjectGateway,
  ListProjectGateways,
  UpdateProjectGateway,
  DeleteProjectGateway,
  AttachProjectGatewayProject,
  DetachProjectGatewayProject,
  SetProjectGatewayURL,
  SetProjectGatewayWorkspace,
} = ProjectGatewayOps;
type ById = Unchecked<{ id: string; projectId: string }>;
const byId = (i: ById) => rid(i.id);

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
const recordGatewayChange = async (
  m: Pick<MutationCtx, 'tx' | 'change'>,
  g: ProjectGatewayRow,
  workspaces: readonly string[],
  payload: Record<string, unknown> = {},
) => {
  const planes = [];
  for (const ws of new Set(workspaces)) {
    const dp = await findDataplaneBySlug(m.tx, g.customerId, ws).catch(() => undefined);
    if (dp) planes.push(dp.id);
  }
  await m.change({ resource: 'projectGateway' as const, entityId: g.id, customerId: g.customerId, payload }, [
    LOCAL_TARGET,
    g.id,
    ...planes,
  ]);
};

export const projectGatewayOps = (deps: ControlDeps): OpDef[] => {
  const owner = ownerScope(deps);
  /** Owner scope of a body as sent (see `ownerScope`): an id that is no string has no gateway; a projectId that is no string is none. */
  const ownerOf = (i: ById) =>
    typeof i.id === 'string' ? owner({ id: i.id, ...(typeof i.projectId === 'string' ? { projectId: i.projectId } : {}) }) : undefined;
  /** The gateway's customer, and the project named in the body (Attach/Detach). */
  const attachScope = async (i: ById) => {
    if (typeof i.id !== 'string') return undefined;
    const gw = await findGateway(deps.db, i.id);
    return { customerId: gw.customerId, customerUuid: gw.customerUuid, projectId: i.projectId };
  };
  return [
    mutation(deps, CreateProjectGateway, {
      resourceId: (_i, o) => o?.projectGateway.id ?? '',
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
    op(GetProjectGateway, {
      scope: ownerOf,
      handler: async (input) => ({ projectGateway: await viewOf(deps.db, await findGateway(deps.db, input.id)) }),
    }),
    op(ListProjectGateways, {
      scope: (i) => (i.customerId ? { customerId: i.customerId } : undefined),
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
                .where(
                  and(
                    input.customerId ? eq(projectGatewayProjects.customerId, input.customerId) : undefined,
                    inArray(projectGatewayProjects.projectId, wanted),
                  ),
                ),
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
        const attached = await attachedProjectsOf(
          deps.db,
          p.items.map((g) => g.id),
        );
        return { projectGateways: p.items.map((g) => view(g, attached.get(g.id) ?? [])), nextPageToken: p.nextPageToken };
      },
    }),
    mutation(deps, UpdateProjectGateway, {
      resourceId: byId,
      scope: ownerOf,
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
    mutation(deps, DeleteProjectGateway, {
      resourceId: byId,
      scope: ownerOf,
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
    mutation(deps, AttachProjectGatewayProject, {
      resourceId: byId,
      scope: attachScope,
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
    mutation(deps, DetachProjectGatewayProject, {
      resourceId: byId,
      scope: attachScope,
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
    mutation(deps, SetProjectGatewayURL, {
      resourceId: byId,
      scope: ownerOf,
      handler: async (input, m) => {
        const { tx } = m;
        const gw = await lockGateway(tx, input.id, 'update');
        const host = hostOf(input.url);
        await assertHostFree(tx, host, gw.id);
        const row = await uniquely(
          async () => {
            const [g] = await tx
              .update(projectGateways)
              .set({ url: input.url, urlHost: host, updatedAt: new Date() })
              .where(eq(projectGateways.id, gw.id))
              .returning();
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
    mutation(deps, SetProjectGatewayWorkspace, {
      resourceId: byId,
      handler: async (input, m) => {
        const { tx } = m;
        const found = await findGateway(tx, input.id);
        await lockDataplaneBySlug(tx, { id: found.customerUuid, customerId: found.customerId }, input.workspaceId);
        const gw = await lockGateway(tx, found.id, 'update');
        const row = await uniquely(
          async () => {
            const [g] = await tx
              .update(projectGateways)
              .set({ workspaceId: input.workspaceId, updatedAt: new Date() })
              .where(eq(projectGateways.id, gw.id))
              .returning();
            return g as ProjectGatewayRow;
          },
          `a project gateway '${gw.projectGatewayId}' already exists in workspace '${input.workspaceId}'`,
          'workspaceId',
        );
        await recordGatewayChange(m, row, [gw.workspaceId, row.workspaceId], { from: gw.workspaceId, to: row.workspaceId });
        const projects = await attachedProjects(tx, row.id);
        const warnings = [
          WARN.repoint(row.urlHost, row.workspaceId),
          ...(row.url ? [] : [WARN.noUrl()]),
          ...(await servingWarnings(tx, row, projects)),
        ];
        return { projectGateway: view(row, projects), warnings };
      },
    }),
  ];
};
