import type { CircuitBreakerSetting } from '../../governance/setting-values.ts';
import { perProject, rowsOf, type SnapshotBuilder } from '../section.ts';
import { assignmentsSnapshot } from './assignments.snapshot.ts';
import type { CatalogEntry } from './catalog.snapshot.ts';
import { type ResolvedTarget, targetResolver } from './connections.snapshot.ts';
import { settingsSnapshot } from './settings.snapshot.ts';

export const DEFAULT_TIMEOUT_MS = 120_000;

export interface RouteSnapshot {
  id: string;
  model: string;
  /** Targets grouped by priority, ascending; each group keeps the configured order. */
  tiers: readonly (readonly ResolvedTarget[])[];
  timeoutMs: number;
  maxRetries: number;
  /** False while disabled or while a target connection is not on this data plane. */
  active: boolean;
  /** The project's `global-fallback` targets, tried once each in order after every target of the route failed retryably. */
  fallback: readonly ResolvedTarget[];
  /** How targets are picked (CreateRoute `strategy`): by priority and weights, by recent latency, or by rate-limit headroom. */
  strategy: 'ordered' | 'latency' | 'headroom';
  /** The project's `circuit-breaker` setting (contract §14); undefined: breakers off. */
  breaker: CircuitBreakerSetting | undefined;
  /** The project's `mid-stream-fallback` setting (contract §14): a broken stream is continued by the next target. */
  midStreamFallback: boolean;
}

export interface RoutesPart {
  routes: ReadonlyMap<string, RouteSnapshot>;
  /** The `GET /v1/models` body for keys of this project, serialised once per revision. */
  modelListJson: string;
}

const decimal = (perMillion: number): string => {
  // Per-token price as a plain decimal string (never exponent notation).
  const perToken = perMillion / 1_000_000;
  if (perToken === 0) return '0';
  return perToken.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
};

const modelListEntry = (e: CatalogEntry) => ({
  id: e.model,
  object: 'model',
  created: e.created,
  owned_by: e.provider,
  input_price: decimal(e.prices.input),
  caching_price: decimal(e.prices.cacheWrite),
  cached_price: decimal(e.prices.cached),
  output_price: decimal(e.prices.output),
  max_output_tokens: e.maxOutputTokens,
  context_window: e.contextWindow,
  supports_caching: e.capabilities.includes('caching'),
  supports_vision: e.capabilities.includes('vision'),
  supports_computer_use: e.capabilities.includes('computer_use'),
  supports_reasoning: e.capabilities.includes('reasoning'),
});

const routeRows = rowsOf((doc) => doc.routes);

/** A project's routes (each active only when every target resolves, see connections.snapshot.ts) and its model list: the assigned models with an active route. */
export const routesSnapshot = {
  project: perProject((p): RoutesPart => {
    const resolve = targetResolver(p);
    const { fallback, breaker, midStreamFallback } = settingsSnapshot.project(p);
    const routes = new Map<string, RouteSnapshot>();
    for (const r of routeRows(p)) {
      let complete = r.targets.length > 0;
      const resolved: ResolvedTarget[] = [];
      for (const t of r.targets) {
        const target = resolve(t.connection, t.model, t.priority, t.weight);
        if (!target) {
          complete = false;
          continue;
        }
        resolved.push(target);
      }
      const priorities = [...new Set(resolved.map((t) => t.priority))].sort((a, b) => a - b);
      const tiers = priorities.map((pr) => Object.freeze(resolved.filter((t) => t.priority === pr)));
      routes.set(
        r.model,
        Object.freeze({
          id: r.id,
          model: r.model,
          tiers: Object.freeze(tiers),
          timeoutMs: r.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          maxRetries: r.maxRetries ?? 0,
          active: r.enabled && complete,
          fallback,
          breaker,
          midStreamFallback,
          strategy: r.strategy === 'latency' || r.strategy === 'headroom' ? r.strategy : 'ordered',
        }),
      );
    }
    const { models } = assignmentsSnapshot.project(p);
    const listed = [...models.values()].filter((m) => routes.get(m.model)?.active).sort((a, b) => a.model.localeCompare(b.model));
    return { routes, modelListJson: JSON.stringify({ object: 'list', data: listed.map(modelListEntry) }) };
  }),
} satisfies SnapshotBuilder;
