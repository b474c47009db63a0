import { modelNotInCatalog, modelNotOnDataPlane, modelNotReady, modelNotRouted } from '../core/errors.ts';
import type { CatalogEntry, ConfigSnapshot, KeySnapshot, ResolvedTarget, RouteSnapshot } from '../propagation/snapshot.ts';
import { forbiddenModel } from './auth.ts';
import { withByok } from './byok.ts';

export interface Plan {
  route: RouteSnapshot;
  catalog: CatalogEntry;
}

/**
 * Pure: which route serves `model` for this key, or the seed's named error saying why none does.
 * Order of checks: catalogue → project assignment → route deployed → route active.
 */
export const resolve = (snapshot: ConfigSnapshot, key: KeySnapshot, model: string): Plan => {
  const project = key.project;
  const route = project.routes.get(model);
  const catalog = snapshot.catalog.get(model);
  if (!catalog) {
    // A route without its catalog entry means this data plane has not received the entry yet.
    if (route) throw modelNotOnDataPlane(model);
    throw modelNotInCatalog(model);
  }
  const assigned = project.models.get(model);
  if (!assigned) throw forbiddenModel(model);
  if (!route) throw modelNotRouted(model);
  if (!route.active) throw modelNotReady(model);
  return { route: withByok(route, key), catalog: assigned };
};

/**
 * The order in which targets are tried: priority tiers ascending (primary, first backup, …);
 * within a tier a weighted random order (traffic splitting), so the first pick follows the weights
 * and the rest of the tier serves as fallback before the next tier.
 */
export const targetOrder = (route: RouteSnapshot, random: () => number = Math.random): ResolvedTarget[] => {
  const out: ResolvedTarget[] = [];
  for (const tier of route.tiers) {
    if (tier.length === 1) {
      out.push(tier[0] as ResolvedTarget);
      continue;
    }
    const pool = tier.filter((t) => t.weight > 0);
    while (pool.length > 0) {
      const total = pool.reduce((s, t) => s + t.weight, 0);
      let r = random() * total;
      let i = 0;
      for (; i < pool.length - 1; i++) {
        r -= (pool[i] as ResolvedTarget).weight;
        if (r < 0) break;
      }
      out.push(pool.splice(i, 1)[0] as ResolvedTarget);
    }
  }
  return out;
};
