import type { ConnectionConfig, ProviderAdapter } from '../../providers/types.ts';
import { type ProjectBuild, perProject, rowsOf } from '../section.ts';
import { providersOf } from './assignments.snapshot.ts';
import { targetKey } from '../../governance/breaker.ts';

export interface ResolvedTarget {
  connection: ConnectionConfig;
  adapter: ProviderAdapter;
  upstreamModel: string;
  priority: number;
  weight: number;
  /** The circuit breaker's name of the target: connection id and upstream model (governance/breaker.ts). */
  key: string;
  /** Set when the caller's BYOK key replaced the connection's (pipeline/byok.ts): its credential failures are the caller's, not the connection's. */
  byok?: true;
}

const connectionRows = rowsOf((doc) => doc.connections);

/**
 * A project's connections reach the snapshot through the targets that name them (routes, the
 * `global-fallback` setting): a target resolves when its connection exists, its provider is
 * enabled for the project and this data plane has the provider's adapter.
 */
export const targetResolver = perProject(
  (p: ProjectBuild): ((connection: string, model: string, priority: number, weight: number) => ResolvedTarget | undefined) => {
    const connections = new Map(connectionRows(p).map((c) => [c.name, c]));
    const providers = providersOf(p);
    return (connection, model, priority, weight) => {
      const c = connections.get(connection);
      const adapter = c ? p.document.getAdapter(c.provider) : undefined;
      if (!c || !adapter || !providers.has(c.provider)) return undefined;
      return Object.freeze({
        connection: Object.freeze({
          id: c.id,
          name: c.name,
          provider: c.provider,
          ...(c.baseUrl ? { baseUrl: c.baseUrl } : {}),
          ...(c.apiKey ? { apiKey: c.apiKey } : {}),
          options: c.options,
          ...(c.allowPrivate === true ? { allowPrivate: true } : {}),
        }),
        adapter,
        upstreamModel: model,
        key: targetKey(c.id, model),
        priority,
        weight,
      });
    };
  },
);
