import type { SecretBox } from '../core/secrets.ts';
import type { McpProfileServerRow } from '../store/schema/index.ts';
import type { ConfigDocument } from '../api/config-document.ts';

/** The rows the loader reads for the MCP gateway (live projects only; catalog servers not deleted). */
export interface McpRows {
  servers: readonly {
    serverId: string;
    url: string;
    transport: string;
    authType: string;
    authHeader: string | null;
    authValueWrapped: string | null;
    allowPrivate: boolean;
  }[];
  assignments: readonly { projectUuid: string; serverId: string }[];
  profiles: readonly { id: string; projectUuid: string; profileId: string; servers: readonly McpProfileServerRow[] }[];
  /** Projects' and members' own credentials (userId '' = the project's). */
  credentials: readonly { projectUuid: string; serverId: string; userId: string; authValueWrapped: string }[];
}

/**
 * The document's MCP sections (contract §7): each profile lists only its entries whose server is
 * assigned to the profile's project and present in the catalog (an entry of an unassigned server
 * stays stored and comes back if it is assigned again), and `mcpServers` holds only the catalog
 * servers some listed entry uses — a data plane never receives the credential of a server none of
 * its profiles fronts, nor a project's (or member's) credential for a server none of that project's
 * profiles serves. Credentials are unwrapped here (the document is plaintext in memory; seal.ts
 * seals `authValue` for a separate data plane).
 */
export const mcpSections = (rows: McpRows, secrets: SecretBox, upstreamAllowPrivate: boolean): Pick<ConfigDocument, 'mcpServers' | 'mcpProfiles' | 'mcpCredentials'> => {
  const catalog = new Map(rows.servers.map((s) => [s.serverId, s]));
  const assigned = new Set(rows.assignments.map((a) => `${a.projectUuid}\n${a.serverId}`));
  const used = new Set<string>();
  const usedBy = new Set<string>();
  const mcpProfiles = rows.profiles.map((p) => {
    const servers = p.servers.filter((e) => catalog.has(e.serverId) && assigned.has(`${p.projectUuid}\n${e.serverId}`));
    for (const e of servers) {
      used.add(e.serverId);
      usedBy.add(`${p.projectUuid}\n${e.serverId}`);
    }
    return { id: p.id, projectUuid: p.projectUuid, profileId: p.profileId, servers: servers.map((e) => ({ serverId: e.serverId, ...(e.tools ? { tools: [...e.tools] } : {}), prefix: e.prefix })) };
  });
  const mcpServers = rows.servers
    .filter((s) => used.has(s.serverId))
    .map((s) => ({
      serverId: s.serverId,
      url: s.url,
      transport: s.transport,
      authType: s.authType,
      authHeader: s.authHeader,
      authValue: s.authValueWrapped ? secrets.unwrap(s.authValueWrapped) : null,
      allowPrivate: s.allowPrivate || upstreamAllowPrivate,
    }));
  const mcpCredentials = rows.credentials
    .filter((c) => usedBy.has(`${c.projectUuid}\n${c.serverId}`))
    .map((c) => ({ projectUuid: c.projectUuid, serverId: c.serverId, userId: c.userId, authValue: secrets.unwrap(c.authValueWrapped) }));
  return { mcpServers, mcpProfiles, mcpCredentials };
};
