import type { ConfigDocument } from '../api/config-document.ts';
import type { ProviderAdapter } from '../providers/types.ts';
import type { DocumentBuild, ProjectBuild } from './section.ts';
import { globalParts, projectParts } from './sections/snapshots.ts';
import { type ConfigSnapshot, type HostScope, type KeySnapshot, type ProjectSnapshot, projectKey } from './snapshot.ts';

/**
 * Pure: a config document → an immutable snapshot. The core (projects, keys, user tokens, hosts) is
 * built here; every section adds its own fields through its builder (sections/*.snapshot.ts, spread
 * in by the generated sections/snapshots.ts), so a new section needs no edit here. Unknown adapters
 * make their routes inactive.
 */
export const buildSnapshot = (
  doc: ConfigDocument,
  getAdapter: (id: string) => ProviderAdapter | undefined,
  now: number = Date.now(),
): ConfigSnapshot => {
  const document: DocumentBuild = { doc, getAdapter, now };
  const projects = new Map<string, ProjectSnapshot>();
  const projectsById = new Map<string, ProjectSnapshot>();
  for (const p of doc.projects) {
    const build: ProjectBuild = { document, project: p };
    const snapshot: ProjectSnapshot = Object.freeze({
      id: p.id,
      customerUuid: p.customerUuid,
      customerId: p.customerId,
      projectId: p.projectId,
      ...projectParts(build),
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
    userTokenKeys: new Map(doc.userTokenKeys.map((k) => [k.kid, k.publicKeyPem])),
    revokedTokenIds: new Set(doc.revokedTokenIds),
    ...hostsOf(doc),
    ...globalParts(document),
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
    if (!hosts.has(w.host))
      hosts.set(w.host, Object.freeze({ kind: 'workspace', id: w.id, name: w.workspaceId, projects: new Set([w.projectUuid]) }));
  const self = doc.self;
  return {
    hosts,
    defaultProjects: self ? new Set([self.projectUuid]) : undefined,
    publicUrl: self ? doc.workspaceUrls?.find((w) => w.id === self.workspaceUuid)?.url : undefined,
  };
};
