import { and, eq, isNull } from 'drizzle-orm';
import { checkDataplaneUrl, DataplaneOps, WorkspaceOps } from '../../api/ops/dataplanes.ts';
import { optTs, projectOrDefault, ts } from '../../api/kit.ts';
import { connectError } from '../../core/errors.ts';
import { type DataplaneRow, dataplanes, projectGateways } from '../../store/schema/index.ts';
import { op, type OpDef, type Unchecked } from '../connect.ts';
import { type Change, type ControlDeps, LOCAL_TARGET, type Reader, type Tx } from '../deps.ts';
import { revokeWorkspaceAccounts } from '../cascade.ts';
import { findCustomer, lockProject, uniquely } from '../lookups.ts';
import { mutation, type MutationCtx, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';

/**
 * Data planes and workspaces: one resource (a workspace IS a data plane), one table, two sets of
 * operations (src/api/ops/dataplanes.ts builds both from one template). The customer-chosen slug
 * is `dataplaneId` in the Dataplane operations and `workspaceId` in the Workspace operations;
 * slugs are unique per customer across both.
 */

export const findDataplane = async (db: Reader, id: string, field = 'id'): Promise<DataplaneRow> => {
  const [row] = await db
    .select()
    .from(dataplanes)
    .where(and(eq(dataplanes.id, id), isNull(dataplanes.deletedAt)))
    .limit(1);
  if (!row) throw connectError('not_found', `data plane '${id}' not found`, field);
  return row;
};

/** An active data plane (workspace) by the customer's slug. */
export const findDataplaneBySlug = async (db: Reader, customerId: string, slug: string, field = 'workspaceId'): Promise<DataplaneRow> => {
  const [row] = await db
    .select()
    .from(dataplanes)
    .where(and(eq(dataplanes.customerId, customerId), eq(dataplanes.slug, slug), isNull(dataplanes.deletedAt)))
    .limit(1);
  if (!row) throw connectError('not_found', `workspace '${slug}' of customer '${customerId}' not found`, field);
  return row;
};

/** The live data plane (workspace) `slug` of a (locked) customer row, held FOR SHARE until the transaction ends. */
export const lockDataplaneBySlug = async (
  tx: Tx,
  customer: { id: string; customerId: string },
  slug: string,
  field = 'workspaceId',
): Promise<DataplaneRow> => {
  const [row] = await tx
    .select()
    .from(dataplanes)
    .where(and(eq(dataplanes.customerUuid, customer.id), eq(dataplanes.slug, slug), isNull(dataplanes.deletedAt)))
    .limit(1)
    .for('share');
  if (!row) throw connectError('not_found', `workspace '${slug}' of customer '${customer.customerId}' not found`, field);
  return row;
};

const lockDataplane = async (tx: Tx, id: string): Promise<DataplaneRow> => {
  const [row] = await tx
    .select()
    .from(dataplanes)
    .where(and(eq(dataplanes.id, id), isNull(dataplanes.deletedAt)))
    .limit(1)
    .for('update');
  if (!row) throw connectError('not_found', `data plane '${id}' not found`, 'id');
  return row;
};

/** What both flavors show of a data plane, after its id and slug. */
const fields = (d: DataplaneRow) => ({
  customerId: d.customerId,
  projectId: d.projectId,
  name: d.name ?? '',
  description: d.description ?? '',
  labels: d.labels,
  url: d.url ?? '',
  createdAt: ts(d.createdAt),
  updatedAt: ts(d.updatedAt),
  deletedAt: optTs(d.deletedAt),
});
const dataplaneView = (d: DataplaneRow) => ({ id: d.id, dataplaneId: d.slug, ...fields(d) });
const workspaceView = (d: DataplaneRow) => ({ id: d.id, workspaceId: d.slug, ...fields(d) });

const change = (d: DataplaneRow, resource: 'dataplane' | 'proxyUrl' = 'dataplane', payload: Record<string, unknown> = {}): Change => ({
  resource,
  entityId: d.id,
  customerId: d.customerId,
  projectId: d.projectId,
  payload,
});
const byId = (i: Unchecked<{ id: string }>) => rid(i.id);
const listScope = (i: Unchecked<{ customerId: string }>) => (i.customerId ? { customerId: i.customerId } : undefined);

interface Meta {
  description?: string | null;
  labels?: Record<string, string>;
  name?: string | null;
}

/**
 * What the operations of both flavors do, on plain inputs; `noun` ('Dataplane' or 'Workspace')
 * names the resource in messages, `key` the slug's field.
 */
const behaviour = (deps: ControlDeps, noun: 'Dataplane' | 'Workspace', key: 'dataplaneId' | 'workspaceId') => ({
  /** The customer of the data plane `id` (the permission scope of Get). */
  scopeOfId: async (i: Unchecked<{ id: string }>) => {
    if (typeof i.id !== 'string') return undefined;
    const d = await findDataplane(deps.db, i.id);
    return { customerId: d.customerId, customerUuid: d.customerUuid };
  },
  create: async (
    { tx, change: record }: MutationCtx,
    input: Meta & { customerId: string; projectId?: string },
    slug: string,
  ): Promise<DataplaneRow> => {
    const project = await lockProject(tx, input.customerId, input.projectId);
    const row = await uniquely(
      async () => {
        const [d] = await tx
          .insert(dataplanes)
          .values({
            customerUuid: project.customerUuid,
            customerId: project.customerId,
            slug,
            projectUuid: project.id,
            projectId: project.projectId,
            name: input.name ?? null,
            description: input.description ?? null,
            labels: input.labels ?? {},
          })
          .returning();
        return d as DataplaneRow;
      },
      `a data plane or workspace '${slug}' already exists in customer '${input.customerId}'`,
      key,
    );
    await record(change(row), [LOCAL_TARGET, row.id]);
    return row;
  },
  list: async (input: { customerId?: string; pageSize?: number; pageToken?: string }) => {
    const k = keyset(dataplanes.createdAt, dataplanes.id, input.pageToken);
    if (input.customerId) await findCustomer(deps.db, input.customerId);
    const size = pageSizeOf(input.pageSize);
    const rows = await deps.db
      .select()
      .from(dataplanes)
      .where(and(isNull(dataplanes.deletedAt), input.customerId ? eq(dataplanes.customerId, input.customerId) : undefined, k.where))
      .orderBy(...k.order)
      .limit(size + 1);
    return page(rows, size);
  },
  update: async ({ tx }: MutationCtx, input: Meta & { id: string }): Promise<DataplaneRow> => {
    const current = await lockDataplane(tx, input.id);
    const patch: Partial<typeof dataplanes.$inferInsert> = { updatedAt: new Date() };
    if (input.name != null) patch.name = input.name;
    if (input.description != null) patch.description = input.description;
    if (input.labels !== undefined) patch.labels = input.labels;
    // Not configuration (no data plane reads these): no change rows.
    const [row] = await tx
      .update(dataplanes)
      .set(patch)
      .where(and(eq(dataplanes.id, current.id), isNull(dataplanes.deletedAt)))
      .returning();
    return row ?? current;
  },
  remove: async ({ tx, change: record }: MutationCtx, input: { id: string }) => {
    const deletedAt = new Date();
    const current = await lockDataplane(tx, input.id);
    const hosted = await tx
      .select({ id: projectGateways.id })
      .from(projectGateways)
      .where(
        and(
          eq(projectGateways.customerUuid, current.customerUuid),
          eq(projectGateways.workspaceId, current.slug),
          isNull(projectGateways.deletedAt),
        ),
      )
      .limit(1);
    if (hosted.length > 0)
      throw connectError(
        'failed_precondition',
        `${noun.toLowerCase()} '${current.slug}' hosts project gateways; delete them or move them to another workspace first`,
        'id',
      );
    await tx.update(dataplanes).set({ deletedAt, updatedAt: deletedAt }).where(eq(dataplanes.id, current.id));
    await revokeWorkspaceAccounts(tx, current.customerUuid, current.slug, deletedAt, `${noun.toLowerCase()} deleted`);
    await record(change(current), [LOCAL_TARGET, current.id]);
    return { deletedAt: ts(deletedAt), success: true };
  },
  setProject: async ({ tx, change: record }: MutationCtx, input: { id: string; projectId?: string }): Promise<DataplaneRow> => {
    const current = await findDataplane(tx, input.id);
    const project = await lockProject(tx, current.customerId, projectOrDefault(input.projectId));
    const [d] = await tx
      .update(dataplanes)
      .set({ projectUuid: project.id, projectId: project.projectId, updatedAt: new Date() })
      .where(and(eq(dataplanes.id, current.id), eq(dataplanes.customerUuid, project.customerUuid), isNull(dataplanes.deletedAt)))
      .returning();
    if (!d) throw connectError('not_found', `data plane '${current.id}' not found`, 'id');
    await record(change(d), [LOCAL_TARGET, d.id]);
    return d;
  },
  setUrl: async (
    { tx, change: record }: MutationCtx,
    input: { id: string; url: string; triggerUpdate?: boolean },
  ): Promise<DataplaneRow> => {
    const current = await lockDataplane(tx, input.id);
    checkDataplaneUrl(input.url);
    const [d] = await tx.update(dataplanes).set({ url: input.url, updatedAt: new Date() }).where(eq(dataplanes.id, current.id)).returning();
    const updated = d as DataplaneRow;
    if (input.triggerUpdate) await record(change(updated, 'proxyUrl', { url: input.url }), [LOCAL_TARGET, updated.id]);
    return updated;
  },
});

const dataplaneFlavor = (deps: ControlDeps): OpDef[] => {
  const { CreateDataplane, GetDataplane, ListDataplanes, UpdateDataplane, DeleteDataplane, SetDataplaneProject, SetDataplaneURL } =
    DataplaneOps;
  const b = behaviour(deps, 'Dataplane', 'dataplaneId');
  const wrap = (d: DataplaneRow) => ({ dataplane: dataplaneView(d) });
  return [
    mutation(deps, CreateDataplane, {
      resourceId: (_i, o) => o?.dataplane.id,
      handler: async (i, m) => wrap(await b.create(m, i, i.dataplaneId)),
    }),
    op(GetDataplane, { scope: b.scopeOfId, handler: async (i) => wrap(await findDataplane(deps.db, i.id)) }),
    op(ListDataplanes, {
      scope: listScope,
      handler: async (i) => {
        const p = await b.list(i);
        return { dataplanes: p.items.map(dataplaneView), nextPageToken: p.nextPageToken };
      },
    }),
    mutation(deps, UpdateDataplane, { resourceId: byId, handler: async (i, m) => wrap(await b.update(m, i)) }),
    mutation(deps, DeleteDataplane, { resourceId: byId, handler: (i, m) => b.remove(m, i) }),
    mutation(deps, SetDataplaneProject, { resourceId: byId, handler: async (i, m) => wrap(await b.setProject(m, i)) }),
    mutation(deps, SetDataplaneURL, { resourceId: byId, handler: async (i, m) => wrap(await b.setUrl(m, i)) }),
  ];
};

const workspaceFlavor = (deps: ControlDeps): OpDef[] => {
  const { CreateWorkspace, GetWorkspace, ListWorkspaces, UpdateWorkspace, DeleteWorkspace, SetWorkspaceProject, SetWorkspaceURL } =
    WorkspaceOps;
  const b = behaviour(deps, 'Workspace', 'workspaceId');
  const wrap = (d: DataplaneRow) => ({ workspace: workspaceView(d) });
  return [
    mutation(deps, CreateWorkspace, {
      resourceId: (_i, o) => o?.workspace.id,
      handler: async (i, m) => wrap(await b.create(m, i, i.workspaceId)),
    }),
    op(GetWorkspace, { scope: b.scopeOfId, handler: async (i) => wrap(await findDataplane(deps.db, i.id)) }),
    op(ListWorkspaces, {
      scope: listScope,
      handler: async (i) => {
        const p = await b.list(i);
        return { workspaces: p.items.map(workspaceView), nextPageToken: p.nextPageToken };
      },
    }),
    mutation(deps, UpdateWorkspace, { resourceId: byId, handler: async (i, m) => wrap(await b.update(m, i)) }),
    mutation(deps, DeleteWorkspace, { resourceId: byId, handler: (i, m) => b.remove(m, i) }),
    mutation(deps, SetWorkspaceProject, { resourceId: byId, handler: async (i, m) => wrap(await b.setProject(m, i)) }),
    mutation(deps, SetWorkspaceURL, { resourceId: byId, handler: async (i, m) => wrap(await b.setUrl(m, i)) }),
  ];
};

export const dataplaneOps = (deps: ControlDeps): OpDef[] => [...dataplaneFlavor(deps), ...workspaceFlavor(deps)];
