import { and, eq, isNull, type SQL } from 'drizzle-orm';
import { RouteOps } from '../../api/ops/routes.ts';
import { projectOrDefault, ts } from '../../api/kit.ts';
import { connectError } from '../../core/errors.ts';
import { aiModels, type RouteRow, routes, type RouteTarget } from '../../store/schema/index.ts';
import { bodyScope, namedScope, op, type OpDef } from '../connect.ts';
import type { ControlDeps, Reader, Tx } from '../deps.ts';
import { inLiveProject, lockProject, uniquely } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';

const { CreateRoute, GetRoute, ListRoutes, UpdateRoute, DeleteRoute } = RouteOps;

const normaliseTargets = (targets: readonly { connection: string; model: string; priority?: number; weight?: number }[]): RouteTarget[] =>
  targets.map((x) => ({ connection: x.connection, model: x.model, priority: x.priority ?? 0, weight: x.weight ?? 1 }));

export const routeView = (r: RouteRow) => ({
  id: r.id,
  customerId: r.customerId,
  projectId: r.projectId,
  model: r.model,
  targets: r.targets,
  enabled: r.enabled,
  ...(r.timeoutMs !== null ? { timeoutMs: r.timeoutMs } : {}),
  ...(r.maxRetries !== null ? { maxRetries: r.maxRetries } : {}),
  ...(r.strategy !== null ? { strategy: r.strategy } : {}),
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

export const routeOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, CreateRoute, {
    resourceId: (_i, o) => o?.route.id ?? '',
    scope: bodyScope,
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
              strategy: input.strategy ?? null,
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
  op(GetRoute, {
    scope: namedScope,
    handler: async (input) => ({ route: routeView(await findRoute(deps.db, input)) }),
  }),
  op(ListRoutes, {
    scope: bodyScope,
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
  mutation(deps, UpdateRoute, {
    resourceId: (i, o) => o?.route.id ?? rid(i.id),
    scope: namedScope,
    handler: async (input, { tx, change }) => {
      const current = await lockRoute(tx, input);
      const patch: Partial<typeof routes.$inferInsert> = { updatedAt: new Date() };
      if (input.targets) patch.targets = normaliseTargets(input.targets);
      if (input.enabled !== undefined) patch.enabled = input.enabled;
      if (input.timeoutMs != null) patch.timeoutMs = input.timeoutMs;
      if (input.maxRetries != null) patch.maxRetries = input.maxRetries;
      if (input.strategy !== undefined) patch.strategy = input.strategy;
      const [row] = await tx.update(routes).set(patch).where(eq(routes.id, current.id)).returning();
      await change({ resource: 'route' as const, entityId: current.id, customerId: current.customerId, projectId: current.projectId });
      return { route: routeView(row as RouteRow) };
    },
  }),
  mutation(deps, DeleteRoute, {
    resourceId: (i) => rid(i.id),
    scope: namedScope,
    handler: async (input, { tx, change }) => {
      const current = await lockRoute(tx, input);
      const deletedAt = new Date();
      await tx.update(routes).set({ deletedAt }).where(eq(routes.id, current.id));
      await change({ resource: 'route' as const, entityId: current.id, customerId: current.customerId, projectId: current.projectId });
      return { deletedAt: ts(deletedAt), success: true };
    },
  }),
];
