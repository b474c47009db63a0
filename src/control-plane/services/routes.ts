import { and, eq, isNull, type SQL } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { aiModels, type RouteRow, routes, type RouteTarget } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader, Tx } from '../deps.ts';
import { inLiveProject, lockProject, uniquely } from '../lookups.ts';
import { mutation } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { CustomerRef, Deleted, Int32, ModelId, One, PATTERNS, Page, PageSize, PageToken, ProjectRef, Timestamp, Uuid, projectOrDefault, ts } from '../schemas.ts';

const ADMIN = 'admin.v1.AdminService' as const;
const GROUP = 'Routes';

const Target = t.Object(
  {
    connection: t.String({ minLength: 1, maxLength: 253, pattern: PATTERNS.ID, description: 'provider connection name in the same project' }),
    model: ModelId('upstream model id'),
    priority: t.Optional(Int32({ minimum: 0, maximum: 100, description: '0 = primary, 1 = first backup, … (default 0)' })),
    weight: t.Optional(Int32({ minimum: 0, maximum: 10_000, description: 'traffic split within a priority (default 1)' })),
  },
  { additionalProperties: false },
);
const Targets = () => t.Array(Target, { minItems: 1, maxItems: 32 });
const PublicModel = () => ModelId('public model id (a catalog model)');
const TimeoutMs = () => t.Optional(t.Union([Int32({ minimum: 1, maximum: 3_600_000 }), t.Null()], { description: 'per-attempt time-out in ms (default 120000)' }));
const MaxRetries = () => t.Optional(t.Union([Int32({ minimum: 0, maximum: 10 }), t.Null()], { description: 'retries of the same target before the next (default 0)' }));

const RouteRef = {
  id: t.Optional(Uuid('route UUID')),
  customerId: t.Optional(CustomerRef()),
  projectId: t.Optional(ProjectRef()),
  model: t.Optional(PublicModel()),
};

const normaliseTargets = (targets: readonly { connection: string; model: string; priority?: number; weight?: number }[]): RouteTarget[] =>
  targets.map((x) => ({ connection: x.connection, model: x.model, priority: x.priority ?? 0, weight: x.weight ?? 1 }));

const TargetOut = t.Object({ connection: t.String(), model: t.String(), priority: Int32(), weight: Int32() });
export const RouteOut = t.Object(
  {
    id: t.String({ description: 'server-generated UUID' }),
    customerId: t.String(),
    projectId: t.String(),
    model: t.String({ description: 'public model id (one route per model per project)' }),
    targets: t.Array(TargetOut, { description: 'in the order given' }),
    enabled: t.Boolean(),
    timeoutMs: t.Optional(Int32({ description: 'absent: the default (120000)' })),
    maxRetries: t.Optional(Int32({ description: 'absent: the default (0)' })),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  { description: 'Route' },
);

export const routeView = (r: RouteRow) => ({
  id: r.id,
  customerId: r.customerId,
  projectId: r.projectId,
  model: r.model,
  targets: r.targets,
  enabled: r.enabled,
  ...(r.timeoutMs !== null ? { timeoutMs: r.timeoutMs } : {}),
  ...(r.maxRetries !== null ? { maxRetries: r.maxRetries } : {}),
  createdAt: ts(r.createdAt),
  updatedAt: ts(r.updatedAt),
});

const requireCatalogModel = async (db: Reader, model: string): Promise<void> => {
  const [row] = await db
    .select({ id: aiModels.id })
    .from(aiModels)
    .where(and(eq(aiModels.model, model), isNull(aiModels.deletedAt)))
    .limit(1);
  if (!row) throw connectError('failed_precondition', `model '${model}' is not in the catalog; create it with CreateModel first`, 'model');
};

type RouteAddr = { id?: string; customerId?: string; projectId?: string; model?: string };

const findRoute = async (db: Reader, ref: RouteAddr, lock?: 'update'): Promise<RouteRow> => {
  let where: SQL | undefined;
  if (ref.id) where = eq(routes.id, ref.id);
  else if (ref.customerId && ref.model)
    where = and(eq(routes.customerId, ref.customerId), eq(routes.projectId, projectOrDefault(ref.projectId)), eq(routes.model, ref.model));
  else throw connectError('invalid_argument', "give 'id', or 'customerId', 'projectId' and 'model'", 'id');
  const q = db
    .select()
    .from(routes)
    .where(and(where, isNull(routes.deletedAt)))
    .limit(1);
  const [row] = lock ? await q.for(lock) : await q;
  // Addressed by id within a named customer (a project-scoped caller): the row must be in that project.
  if (!row || (ref.id && ref.customerId && (row.customerId !== ref.customerId || row.projectId !== projectOrDefault(ref.projectId))))
    throw connectError('not_found', 'route not found', ref.id ? 'id' : 'model');
  return row;
};

/** The route, locked for a change after its live project (parents first, as every path locks). */
const lockRoute = async (tx: Tx, ref: RouteAddr): Promise<RouteRow> => {
  const found = await findRoute(tx, ref);
  await lockProject(tx, found.customerId, found.projectId);
  return findRoute(tx, { id: found.id }, 'update');
};

const refScope = (i: { customerId?: string; projectId?: string }) =>
  i.customerId === undefined ? undefined : { customerId: i.customerId, projectId: projectOrDefault(i.projectId) };

export const routeOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'CREATE',
    resource: 'route',
    resourceId: (i, o) => o?.route.id ?? '',
    service: ADMIN,
    group: GROUP,
    name: 'CreateRoute',
    summary: 'Create the route of a public model in a project (fallback by priority, weighted split within one)',
    permission: 'project_admin',
    scope: (i) => ({ customerId: i.customerId, projectId: projectOrDefault(i.projectId) }),
    input: t.Object(
      {
        customerId: CustomerRef(),
        projectId: t.Optional(ProjectRef()),
        model: PublicModel(),
        targets: Targets(),
        enabled: t.Optional(t.Boolean({ description: 'default true' })),
        timeoutMs: TimeoutMs(),
        maxRetries: MaxRetries(),
      },
      { additionalProperties: false },
    ),
    output: One('route', RouteOut),
    handler: async (input, { tx, change }) => {
      const project = await lockProject(tx, input.customerId, input.projectId);
      await requireCatalogModel(tx, input.model);
      const row = await uniquely(
        async () => {
          const [r] = await tx
              .insert(routes)
              .values({
                projectUuid: project.id,
                customerId: project.customerId,
                projectId: project.projectId,
                model: input.model,
                targets: normaliseTargets(input.targets),
                enabled: input.enabled ?? true,
                timeoutMs: input.timeoutMs ?? null,
                maxRetries: input.maxRetries ?? null,
              })
              .returning();
          return r as RouteRow;
        },
        `a route for '${input.model}' already exists in project '${projectOrDefault(input.projectId)}'`,
        'model',
      );
      await change({ resource: 'route' as const, entityId: row.id, customerId: project.customerId, projectId: project.projectId });
      return { route: routeView(row) };
    },
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'GetRoute',
    summary: 'Get a route by id or by (customerId, projectId, model)',
    permission: 'project_member',
    scope: refScope,
    input: t.Object(RouteRef, { additionalProperties: false }),
    output: One('route', RouteOut),
    handler: async (input) => ({ route: routeView(await findRoute(deps.db, input)) }),
  }),
  op({
    service: ADMIN,
    group: GROUP,
    name: 'ListRoutes',
    summary: 'List the routes of a project',
    permission: 'project_member',
    scope: (i) => ({ customerId: i.customerId, projectId: projectOrDefault(i.projectId) }),
    input: t.Object({ customerId: CustomerRef(), projectId: t.Optional(ProjectRef()), pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('routes', RouteOut),
    handler: async (input) => {
      const size = pageSizeOf(input.pageSize);
      const k = keyset(routes.createdAt, routes.id, input.pageToken);
      const rows = await deps.db
        .select()
        .from(routes)
        .where(and(inLiveProject(deps.db, routes.projectUuid, input.customerId, input.projectId), isNull(routes.deletedAt), k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { routes: p.items.map(routeView), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'route',
    resourceId: (i, o) => o?.route.id ?? i.id ?? '',
    service: ADMIN,
    group: GROUP,
    name: 'UpdateRoute',
    summary: 'Update a route (unset fields stay unchanged; targets given replace the list)',
    permission: 'project_admin',
    scope: refScope,
    input: t.Object(
      { ...RouteRef, targets: t.Optional(Targets()), enabled: t.Optional(t.Boolean()), timeoutMs: TimeoutMs(), maxRetries: MaxRetries() },
      { additionalProperties: false },
    ),
    output: One('route', RouteOut),
    handler: async (input, { tx, change }) => {
      const current = await lockRoute(tx, input);
      const patch: Partial<typeof routes.$inferInsert> = { updatedAt: new Date() };
      if (input.targets) patch.targets = normaliseTargets(input.targets);
      if (input.enabled !== undefined) patch.enabled = input.enabled;
      if (input.timeoutMs != null) patch.timeoutMs = input.timeoutMs;
      if (input.maxRetries != null) patch.maxRetries = input.maxRetries;
      const [row] = await tx.update(routes).set(patch).where(eq(routes.id, current.id)).returning();
      await change({ resource: 'route' as const, entityId: current.id, customerId: current.customerId, projectId: current.projectId });
      return { route: routeView(row as RouteRow) };
    },
  }),
  mutation(deps, {
    action: 'DELETE',
    resource: 'route',
    resourceId: (i) => i.id ?? '',
    service: ADMIN,
    group: GROUP,
    name: 'DeleteRoute',
    summary: 'Delete a route (soft delete)',
    permission: 'project_admin',
    scope: refScope,
    input: t.Object(RouteRef, { additionalProperties: false }),
    output: Deleted(),
    handler: async (input, { tx, change }) => {
      const current = await lockRoute(tx, input);
      const deletedAt = new Date();
      await tx.update(routes).set({ deletedAt }).where(eq(routes.id, current.id));
      await change({ resource: 'route' as const, entityId: current.id, customerId: current.customerId, projectId: current.projectId });
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
