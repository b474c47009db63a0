import { and, eq, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { type DataplaneRow, dataplanes, projectGateways } from '../../store/schema/index.ts';
import { type OpDef, templatedOp } from '../connect.ts';
import { type ControlDeps, LOCAL_TARGET, type Reader, type Tx } from '../deps.ts';
import { revokeWorkspaceAccounts } from '../cascade.ts';
import { findCustomer, lockProject, uniquely } from '../lookups.ts';
import { templatedMutation } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import {
  CustomerSlug,
  Deleted,
  Description,
  Labels,
  LabelsOut,
  Name,
  OptTimestamp,
  PATTERNS,
  PageSize,
  PageToken,
  ProjectRef,
  Str,
  Timestamp,
  Url,
  Uuid,
  optTs,
  projectOrDefault,
  ts,
} from '../schemas.ts';

/**
 * Data planes and workspaces: one resource (a workspace IS a data plane), one table, two sets of
 * operations. The customer-chosen slug is `dataplaneId` in the Dataplane operations and
 * `workspaceId` in the Workspace operations; slugs are unique per customer across both.
 */

const ADMIN = 'admin.v1.AdminService' as const;

interface Flavor<K extends string> {
  noun: 'Dataplane' | 'Workspace';
  plural: 'Dataplanes' | 'Workspaces';
  key: K;
  envelope: 'dataplane' | 'workspace';
  list: 'dataplanes' | 'workspaces';
}

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
export const lockDataplaneBySlug = async (tx: Tx, customer: { id: string; customerId: string }, slug: string, field = 'workspaceId'): Promise<DataplaneRow> => {
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

const checkUrl = (url: string): void => {
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || !u.hostname)
    throw connectError('invalid_argument', "invalid field 'url': must be an absolute http(s) URL", 'url');
};

const OptionalCustomer = () => Str(0, 63, { pattern: `^$|${PATTERNS.SLUG}`, description: 'customer slug (SLUG, max 63); empty or unset lists all customers (platform admins only)' });

interface Meta {
  description?: string | null;
  labels?: Record<string, string>;
  name?: string | null;
}
type CreateIn = Meta & { customerId: string; projectId?: string } & Record<string, unknown>;

const flavorOps = (deps: ControlDeps, f: Flavor<'dataplaneId' | 'workspaceId'>): OpDef[] => {
  const group = f.plural === 'Dataplanes' ? 'Data planes' : 'Workspaces';
  const slugSchema = Str(1, 253, { pattern: PATTERNS.ID, description: `the customer-chosen slug (ID, 1-253), unique within the customer` });
  const slugIn = { [f.key]: slugSchema };
  const Out = t.Object(
    {
      id: t.String({ description: 'server-generated UUID' }),
      [f.key]: t.String({ description: 'slug, unique within the customer' }),
      customerId: t.String(),
      projectId: t.String({ description: "the project it belongs to; 'default' when none was given" }),
      name: t.String(),
      description: t.String(),
      labels: LabelsOut(),
      url: t.String({ description: 'customer-facing gateway URL; empty until set' }),
      createdAt: Timestamp(),
      updatedAt: Timestamp(),
      deletedAt: OptTimestamp('set once soft-deleted (never returned by Get/List)'),
    },
    { description: `${f.noun} (a workspace is a data plane: same resource)` },
  );
  const view = (d: DataplaneRow) => ({
    id: d.id,
    [f.key]: d.slug,
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
  const One = t.Object({ [f.envelope]: Out });
  const wrap = (d: DataplaneRow) => ({ [f.envelope]: view(d) });
  const ById = { id: Uuid(`${f.noun.toLowerCase()} UUID (the internal id, not the slug)`) };
  const byIdScope = async (i: { id: string }) => {
    const d = await findDataplane(deps.db, i.id);
    return { customerId: d.customerId, customerUuid: d.customerUuid };
  };
  const change = (d: DataplaneRow, kind = 'DATAPLANE', payload: Record<string, unknown> = {}) =>
    ({ kind, entity: 'dataplane', entityId: d.id, customerId: d.customerId, projectId: d.projectId, payload });

  return [
    templatedMutation<CreateIn>(deps, {
      action: 'CREATE',
      resource: 'dataplane',
      resourceId: (i, o) => (o as Record<string, { id: string }> | undefined)?.[f.envelope]?.id,
      service: ADMIN,
      group,
      name: `Create${f.noun}`,
      summary: `Create a ${f.noun === 'Dataplane' ? 'data plane' : 'workspace'} of a customer`,
      notes: `${f.key} is unique among the customer's active data planes and workspaces (one slug space). projectId empty or unset means the default project; a given project must exist.`,
      permission: 'platform_admin',
      input: t.Object(
        { customerId: CustomerSlug(), ...slugIn, description: Description(), labels: Labels(), name: Name(), projectId: t.Optional(ProjectRef()) },
        { additionalProperties: false },
      ),
      output: One,
      handler: async (input, { tx, change: record }) => {
        const slug = String(input[f.key]);
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
          f.key,
        );
        await record(change(row), [LOCAL_TARGET, row.id]);
        return wrap(row);
      },
    }),
    templatedOp<{ id: string }>({
      service: ADMIN,
      group,
      name: `Get${f.noun}`,
      summary: `Get a ${f.noun.toLowerCase()} by its internal id`,
      permission: 'customer_member',
      scope: byIdScope,
      input: t.Object(ById, { additionalProperties: false }),
      output: One,
      handler: async (input) => wrap(await findDataplane(deps.db, input.id)),
    }),
    templatedOp<{ customerId?: string; pageSize?: number; pageToken?: string }>({
      service: ADMIN,
      group,
      name: `List${f.plural}`,
      summary: `List active ${f.noun === 'Dataplane' ? 'data planes' : 'workspaces'} (oldest first)${f.noun === 'Workspace' ? ' — an addition: the seed does not show it' : ''}`,
      notes: 'Keyset paging: pageSize 0 or unset = 50, at most 1000. A user token must name its own customer.',
      permission: 'customer_member',
      scope: (i) => (i.customerId ? { customerId: i.customerId } : undefined),
      input: t.Object({ customerId: t.Optional(OptionalCustomer()), pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
      output: t.Object({ [f.list]: t.Array(Out), nextPageToken: t.String({ description: 'empty when exhausted' }) }),
      handler: async (input) => {
        const k = keyset(dataplanes.createdAt, dataplanes.id, input.pageToken);
        if (input.customerId) await findCustomer(deps.db, input.customerId);
        const size = pageSizeOf(input.pageSize);
        const rows = await deps.db
          .select()
          .from(dataplanes)
          .where(and(isNull(dataplanes.deletedAt), input.customerId ? eq(dataplanes.customerId, input.customerId) : undefined, k.where))
          .orderBy(...k.order)
          .limit(size + 1);
        const p = page(rows, size);
        return { [f.list]: p.items.map(view), nextPageToken: p.nextPageToken };
      },
    }),
    templatedMutation<Meta & { id: string }>(deps, {
      action: 'UPDATE',
      resource: 'dataplane',
      resourceId: (i) => i.id,
      service: ADMIN,
      group,
      name: `Update${f.noun}`,
      summary: 'Update name, description, labels (unset or null fields stay unchanged; labels replaces the set)',
      permission: 'platform_admin',
      input: t.Object({ ...ById, description: Description(), labels: Labels(), name: Name() }, { additionalProperties: false }),
      output: One,
      handler: async (input, { tx }) => {
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
        return wrap(row ?? current);
      },
    }),
    templatedMutation<{ id: string }>(deps, {
      action: 'DELETE',
      resource: 'dataplane',
      resourceId: (i) => i.id,
      service: ADMIN,
      group,
      name: `Delete${f.noun}`,
      summary: `Delete a ${f.noun.toLowerCase()} (soft delete)`,
      notes: "A data plane that still hosts active project gateways is failed_precondition: delete or move them first. Its service accounts are revoked: their JWTs are refused at once and their keys leave the JWKS.",
      permission: 'platform_admin',
      input: t.Object(ById, { additionalProperties: false }),
      output: Deleted(),
      handler: async (input, { tx, change: record }) => {
        const deletedAt = new Date();
        const current = await lockDataplane(tx, input.id);
        const hosted = await tx
          .select({ id: projectGateways.id })
          .from(projectGateways)
          .where(and(eq(projectGateways.customerUuid, current.customerUuid), eq(projectGateways.workspaceId, current.slug), isNull(projectGateways.deletedAt)))
          .limit(1);
        if (hosted.length > 0)
          throw connectError('failed_precondition', `${f.noun.toLowerCase()} '${current.slug}' hosts project gateways; delete them or move them to another workspace first`, 'id');
        await tx.update(dataplanes).set({ deletedAt, updatedAt: deletedAt }).where(eq(dataplanes.id, current.id));
        await revokeWorkspaceAccounts(tx, current.customerUuid, current.slug, deletedAt, `${f.noun.toLowerCase()} deleted`);
        await record(change(current), [LOCAL_TARGET, current.id]);
        return { deletedAt: ts(deletedAt), success: true };
      },
    }),
    templatedMutation<{ id: string; projectId?: string }>(deps, {
      action: 'UPDATE',
      resource: 'dataplane',
      resourceId: (i) => i.id,
      service: ADMIN,
      group,
      name: `Set${f.noun}Project`,
      summary: `Move a ${f.noun.toLowerCase()} to a project (omit or empty: back to the default project)`,
      permission: 'platform_admin',
      input: t.Object({ ...ById, projectId: t.Optional(ProjectRef(255)) }, { additionalProperties: false }),
      output: One,
      handler: async (input, { tx, change: record }) => {
        const current = await findDataplane(tx, input.id);
        const project = await lockProject(tx, current.customerId, projectOrDefault(input.projectId));
        const [d] = await tx
          .update(dataplanes)
          .set({ projectUuid: project.id, projectId: project.projectId, updatedAt: new Date() })
          .where(and(eq(dataplanes.id, current.id), eq(dataplanes.customerUuid, project.customerUuid), isNull(dataplanes.deletedAt)))
          .returning();
        if (!d) throw connectError('not_found', `data plane '${current.id}' not found`, 'id');
        const updated = d as DataplaneRow;
        await record(change(updated), [LOCAL_TARGET, updated.id]);
        return wrap(updated);
      },
    }),
    templatedMutation<{ id: string; url: string; triggerUpdate?: boolean }>(deps, {
      action: 'UPDATE',
      resource: 'dataplane',
      resourceId: (i) => i.id,
      service: ADMIN,
      group,
      name: `Set${f.noun}URL`,
      summary: "Set the URL of the data plane's gateway endpoint",
      notes:
        'url: the full http(s) URL of the endpoint (1-2048). triggerUpdate true records a PROXY_URL configuration event (payload: {url}) for the data plane after persisting the URL; false only stores it.',
      permission: 'platform_admin',
      input: t.Object(
        { ...ById, url: Url(1, 'full https URL of the gateway endpoint (1-2048)'), triggerUpdate: t.Optional(t.Boolean({ description: 'send a PROXY_URL config event (default false)' })) },
        { additionalProperties: false },
      ),
      output: One,
      handler: async (input, { tx, change: record }) => {
        const current = await lockDataplane(tx, input.id);
        checkUrl(input.url);
        const [d] = await tx.update(dataplanes).set({ url: input.url, updatedAt: new Date() }).where(eq(dataplanes.id, current.id)).returning();
        const updated = d as DataplaneRow;
        if (input.triggerUpdate) await record(change(updated, 'PROXY_URL', { url: input.url }), [LOCAL_TARGET, updated.id]);
        return wrap(updated);
      },
    }),
  ];
};

export const dataplaneOps = (deps: ControlDeps): OpDef[] => [
  ...flavorOps(deps, { noun: 'Dataplane', plural: 'Dataplanes', key: 'dataplaneId', envelope: 'dataplane', list: 'dataplanes' }),
  ...flavorOps(deps, { noun: 'Workspace', plural: 'Workspaces', key: 'workspaceId', envelope: 'workspace', list: 'workspaces' }),
];
