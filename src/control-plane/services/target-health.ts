import { and, asc, eq, isNull } from 'drizzle-orm';
import { TargetHealthOps } from '../../api/ops/target-health.ts';
import { connectError } from '../../core/errors.ts';
import { targetKey, type TargetHealthView } from '../../governance/breaker.ts';
import { parseGlobalFallback } from '../../governance/setting-values.ts';
import { projectSettings, providerConnections, routes } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { findProject } from '../lookups.ts';

const { GetTargetHealth } = TargetHealthOps;

/**
 * GetTargetHealth (contract §14): every target of the project's routes (and `global-fallback`
 * setting) with its breaker as the data planes report it (deps.targetHealth); a target no data
 * plane reported is CLOSED with no figures. A connection benched for its credentials shows on
 * each of its targets.
 */
export const targetHealthOps = (deps: ControlDeps): OpDef[] => [
  op(GetTargetHealth, {
    scope: (i) => ({ customerId: i.customerId, projectId: i.projectId }),
    handler: async (input) => {
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const [routeRows, connRows, fallbackRows] = await Promise.all([
        deps.db
          .select({ model: routes.model, targets: routes.targets })
          .from(routes)
          .where(and(eq(routes.projectUuid, project.id), isNull(routes.deletedAt)))
          .orderBy(asc(routes.model)),
        deps.db
          .select({ id: providerConnections.id, name: providerConnections.name })
          .from(providerConnections)
          .where(and(eq(providerConnections.projectUuid, project.id), isNull(providerConnections.deletedAt))),
        deps.db
          .select({ value: projectSettings.settingValue })
          .from(projectSettings)
          .where(and(eq(projectSettings.projectUuid, project.id), eq(projectSettings.settingName, 'global-fallback'))),
      ]);
      let seen: TargetHealthView[] = [];
      if (deps.targetHealth) {
        try {
          seen = await deps.targetHealth();
        } catch {
          throw connectError('unavailable', 'the shared circuit breaker state (REDIS_URL) is unreachable; try again shortly');
        }
      }
      const byKey = new Map<string, TargetHealthView>();
      for (const v of seen) byKey.set(v.upstreamModel === '' ? v.connectionId : targetKey(v.connectionId, v.upstreamModel), v);
      const connId = new Map(connRows.map((c) => [c.name, c.id]));
      const pairs: { model: string; connection: string; upstreamModel: string }[] = [];
      for (const r of routeRows)
        for (const t of r.targets) pairs.push({ model: r.model, connection: t.connection, upstreamModel: t.model });
      const fallback = fallbackRows[0] ? parseGlobalFallback(fallbackRows[0].value) : undefined;
      if (fallback?.ok)
        for (const t of fallback.value.targets) pairs.push({ model: '*', connection: t.connection, upstreamModel: t.model });
      const done = new Set<string>();
      const targets = [];
      for (const p of pairs) {
        const id = connId.get(p.connection);
        const dedupe = `${p.model}\u0000${p.connection}\u0000${p.upstreamModel}`;
        if (done.has(dedupe)) continue;
        done.add(dedupe);
        const own = id !== undefined ? byKey.get(targetKey(id, p.upstreamModel)) : undefined;
        const auth = id !== undefined ? byKey.get(id) : undefined;
        // The connection's credential breaker, while not closed, is what the target's requests meet first.
        const v = auth && auth.state !== 'CLOSED' ? { ...auth, failures: own?.failures ?? 0, latencyMsP50: own?.latencyMsP50 ?? 0 } : own;
        targets.push({
          model: p.model,
          connection: p.connection,
          upstreamModel: p.upstreamModel,
          state: v?.state ?? 'CLOSED',
          ...(v?.reason !== undefined ? { reason: v.reason } : {}),
          ...(v?.openedAt !== undefined ? { openedAt: v.openedAt } : {}),
          failures: v?.failures ?? 0,
          latencyMsP50: v?.latencyMsP50 ?? 0,
          ...(v?.lastError !== undefined ? { lastError: v.lastError } : {}),
        });
      }
      return { targets };
    },
  }),
];
