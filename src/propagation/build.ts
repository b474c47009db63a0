import type { ProviderAdapter } from '../providers/types.ts';
import type { ConfigDocument } from '../api/config-document.ts';
import { projectGovernance } from './governance.ts';
import { mcpSnapshotOf } from './mcp.ts';
import {
  type ByokSnapshot,
  type CatalogEntry,
  type ConfigSnapshot,
  DEFAULT_TIMEOUT_MS,
  type HostScope,
  type KeySnapshot,
  type ProjectSnapshot,
  projectKey,
  type ResolvedTarget,
  type RouteSnapshot,
} from './snapshot.ts';

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

/** BYOK keys of one project, oldest first: the newest active key of each (scope, provider) wins. */
const byokOf = (rows: ConfigDocument['byokKeys']): ByokSnapshot => {
  const project = new Map<string, string>();
  const users = new Map<string, Map<string, string>>();
  for (const r of rows) {
    if (r.userId === '') project.set(r.provider, r.secret);
    else {
      let m = users.get(r.userId);
      if (!m) users.set(r.userId, (m = new Map()));
      m.set(r.provider, r.secret);
    }
  }
  return Object.freeze({ project, users });
};

/** Pure: a config document → an immutable snapshot. Unknown adapters make their routes inactive. */
export const buildSnapshot = (
  doc: ConfigDocument,
  getAdapter: (id: string) => ProviderAdapter | undefined,
  now: number = Date.now(),
): ConfigSnapshot => {
  const catalogById = new Map<string, CatalogEntry>();
  const catalog = new Map<string, CatalogEntry>();
  for (const m of doc.catalog) {
    const entry: CatalogEntry = Object.freeze({
      id: m.id,
      model: m.model,
      provider: m.provider,
      mode: m.mode,
      capabilities: Object.freeze([...m.capabilities]),
      contextWindow: m.contextWindow,
      maxOutputTokens: m.maxOutputTokens,
      prices: Object.freeze({
        input: m.inputPricePerMillion,
        output: m.outputPricePerMillion,
        cached: m.cachedPricePerMillion,
        cacheWrite: m.cacheWritePricePerMillion,
      }),
      isEnabled: m.isEnabled,
      created: Math.floor(Date.parse(m.createdAt) / 1000),
    });
    catalogById.set(m.id, entry);
    if (m.isEnabled && !catalog.has(m.model)) catalog.set(m.model, entry);
  }

  // Children attach to their project by its row id, never by slug.
  const group = <T extends { projectUuid: string }>(rows: readonly T[]): Map<string, T[]> => {
    const out = new Map<string, T[]>();
    for (const r of rows) {
      const k = r.projectUuid;
      const list = out.get(k);
      if (list) list.push(r);
      else out.set(k, [r]);
    }
    return out;
  };
  const modelsByProject = group(doc.projectModels);
  const providersByProject = group(doc.projectProviders);
  const connectionsByProject = group(doc.connections);
  const routesByProject = group(doc.routes);
  const membersByProject = group(doc.projectMembers);
  const settingsByProject = group(doc.settings ?? []);
  const budgetsByProject = group(doc.budgets ?? []);
  const guardrailsByProject = group(doc.guardrails ?? []);
  const byokByProject = group(doc.byokKeys ?? []);

  const projects = new Map<string, ProjectSnapshot>();
  const projectsById = new Map<string, ProjectSnapshot>();
  for (const p of doc.projects) {
    const k = p.id;
    const models = new Map<string, CatalogEntry>();
    for (const pm of modelsByProject.get(k) ?? []) {
      const entry = catalogById.get(pm.modelId);
      if (entry?.isEnabled && !models.has(entry.model)) models.set(entry.model, entry);
    }
    const providers = new Set((providersByProject.get(k) ?? []).map((r) => r.providerName));
    const connections = new Map((connectionsByProject.get(k) ?? []).map((c) => [c.name, c]));
    const resolveTarget = (connection: string, model: string, priority: number, weight: number): ResolvedTarget | undefined => {
      const c = connections.get(connection);
      const adapter = c ? getAdapter(c.provider) : undefined;
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
        priority,
        weight,
      });
    };
    const governance = projectGovernance(settingsByProject.get(k) ?? [], budgetsByProject.get(k) ?? [], guardrailsByProject.get(k) ?? [], (c, m) => resolveTarget(c, m, 0, 1));
    const routes = new Map<string, RouteSnapshot>();
    for (const r of routesByProject.get(k) ?? []) {
      let complete = r.targets.length > 0;
      const resolved: ResolvedTarget[] = [];
      for (const t of r.targets) {
        const target = resolveTarget(t.connection, t.model, t.priority, t.weight);
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
          fallback: governance.fallback,
        }),
      );
    }
    const listed = [...models.values()].filter((m) => routes.get(m.model)?.active).sort((a, b) => a.model.localeCompare(b.model));
    const snapshot: ProjectSnapshot = Object.freeze({
      id: p.id,
      customerUuid: p.customerUuid,
      customerId: p.customerId,
      projectId: p.projectId,
      models,
      routes,
      members: new Set((membersByProject.get(k) ?? []).map((m) => m.userId)),
      byok: byokOf(byokByProject.get(k) ?? []),
      modelListJson: JSON.stringify({ object: 'list', data: listed.map(modelListEntry) }),
      ...governance,
    });
    projects.set(projectKey(p.customerId, p.projectId), snapshot);
    projectsById.set(p.id, snapshot);
  }

  const keys = new Map<string, KeySnapshot>();
  for (const key of doc.apiKeys) {
    const project = projectsById.get(key.projectUuid);
    if (!project) continue;
    keys.set(
      key.keyHash,
      Object.freeze({
        id: key.id,
        customerId: key.customerId,
        projectId: key.projectId,
        expiresAt: key.expiresAt ? Date.parse(key.expiresAt) : null,
        project,
      }),
    );
  }
  return Object.freeze({
    revision: doc.revision,
    builtAt: now,
    keys,
    projects,
    catalog,
    userTokenKeys: new Map(doc.userTokenKeys.map((k) => [k.kid, k.publicKeyPem])),
    revokedTokenIds: new Set(doc.revokedTokenIds),
    ...hostsOf(doc),
    mcp: mcpSnapshotOf(doc),
  });
};

/**
 * The host → projects map the request path looks up once per request. A project gateway's host
 * wins over a workspace URL of the same host (gateway hosts are unique; workspace URLs are not
 * checked against them); among workspaces, the first listed keeps a host.
 */
const hostsOf = (doc: ConfigDocument): Pick<ConfigSnapshot, 'hosts' | 'defaultProjects' | 'publicUrl'> => {
  const hosts = new Map<string, HostScope>();
  for (const g of doc.projectGateways ?? [])
    hosts.set(g.host, Object.freeze({ kind: 'project_gateway', id: g.id, name: g.projectGatewayId, projects: new Set(g.projectUuids) }));
  for (const w of doc.workspaceUrls ?? [])
    if (!hosts.has(w.host)) hosts.set(w.host, Object.freeze({ kind: 'workspace', id: w.id, name: w.workspaceId, projects: new Set([w.projectUuid]) }));
  const self = doc.self;
  return {
    hosts,
    defaultProjects: self ? new Set([self.projectUuid]) : undefined,
    publicUrl: self ? doc.workspaceUrls?.find((w) => w.id === self.workspaceUuid)?.url : undefined,
  };
};
