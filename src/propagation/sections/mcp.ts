import { eq, inArray, isNull } from 'drizzle-orm';
import type { DocumentSections } from '../../api/config-document.ts';
import { mcpProfiles, mcpServerCredentials, mcpServers, mcpToolPins, projectMcpServers, projectMembers } from '../../store/schema/index.ts';
import type { LoadContext } from '../loader.ts';

/**
 * The document's MCP sections (contract §7): each profile lists only its entries whose server is
 * assigned to the profile's project and present in the catalog (an entry of an unassigned server
 * stays stored and comes back if it is assigned again), and `mcpServers` holds only the catalog
 * servers some listed entry uses — a data plane never receives the credential of a server none of
 * its profiles fronts, nor a project's (or member's) credential for a server none of that project's
 * profiles serves. Credentials are unwrapped here (the document is plaintext in memory; seal.ts
 * seals `authValue` for a separate data plane).
 */
export const mcpLoader = async ({
  tx,
  select,
  live,
  secrets,
  upstreamAllowPrivate,
}: LoadContext): Promise<Pick<DocumentSections, 'mcpServers' | 'mcpProfiles' | 'mcpCredentials'>> => {
  const [catalogRows, assignments, profiles, credentials, pinRows] = await select([
    tx
      .select({
        serverId: mcpServers.serverId,
        url: mcpServers.url,
        transport: mcpServers.transport,
        authType: mcpServers.authType,
        authHeader: mcpServers.authHeader,
        authValueWrapped: mcpServers.authValueWrapped,
        allowPrivate: mcpServers.allowPrivate,
      })
      .from(mcpServers)
      .where(isNull(mcpServers.deletedAt))
      .orderBy(mcpServers.serverId),
    tx
      .select({ projectUuid: projectMcpServers.projectUuid, serverId: projectMcpServers.serverId })
      .from(projectMcpServers)
      .where(inArray(projectMcpServers.projectUuid, live())),
    tx
      .select({
        id: mcpProfiles.id,
        projectUuid: mcpProfiles.projectUuid,
        profileId: mcpProfiles.profileId,
        servers: mcpProfiles.servers,
        grants: mcpProfiles.grants,
      })
      .from(mcpProfiles)
      .where(inArray(mcpProfiles.projectUuid, live()))
      .orderBy(mcpProfiles.profileId),
    tx
      .select({
        projectUuid: mcpServerCredentials.projectUuid,
        serverId: mcpServerCredentials.serverId,
        userId: mcpServerCredentials.userId,
        authValueWrapped: mcpServerCredentials.authValueWrapped,
      })
      .from(mcpServerCredentials)
      .where(inArray(mcpServerCredentials.projectUuid, live()))
      .orderBy(mcpServerCredentials.serverId, mcpServerCredentials.userId),
    tx
      .select({
        profileUuid: mcpToolPins.profileUuid,
        serverId: mcpToolPins.serverId,
        name: mcpToolPins.name,
        hash: mcpToolPins.pinnedHash,
      })
      .from(mcpToolPins)
      .innerJoin(mcpProfiles, eq(mcpProfiles.id, mcpToolPins.profileUuid))
      .where(inArray(mcpProfiles.projectUuid, live()))
      .orderBy(mcpToolPins.name),
  ]);
  // Pins of the `pin: true` entries: a server once listed has its marker row (name ''), and a row per approved tool.
  const pins = new Map<string, { name: string; hash: string }[]>();
  for (const r of pinRows) {
    const k = `${r.profileUuid}\n${r.serverId}`;
    const m = pins.get(k) ?? [];
    if (r.name !== '' && r.hash !== null) m.push({ name: r.name, hash: r.hash });
    pins.set(k, m);
  }
  // Members of the projects whose profiles grant by role: a `role:` grant goes out as its members' `user:` grants.
  const byRole = [...new Set(profiles.filter((p) => p.grants?.some((g) => g.principal.startsWith('role:'))).map((p) => p.projectUuid))];
  const members =
    byRole.length === 0
      ? []
      : await tx
          .select({ projectUuid: projectMembers.projectUuid, userId: projectMembers.userId, role: projectMembers.role })
          .from(projectMembers)
          .where(inArray(projectMembers.projectUuid, byRole));
  const expand = (projectUuid: string, grants: readonly { principal: string; tools: string[] }[]) =>
    grants.flatMap((g) =>
      g.principal.startsWith('role:')
        ? members
            .filter((m) => m.projectUuid === projectUuid && `role:${m.role}` === g.principal)
            .map((m) => ({ principal: `user:${m.userId}`, tools: [...g.tools] }))
        : [{ principal: g.principal, tools: [...g.tools] }],
    );
  const catalog = new Map(catalogRows.map((s) => [s.serverId, s]));
  const assigned = new Set(assignments.map((a) => `${a.projectUuid}\n${a.serverId}`));
  const used = new Set<string>();
  const usedBy = new Set<string>();
  const mcpProfileDocs = profiles.map((p) => {
    const servers = p.servers.filter((e) => catalog.has(e.serverId) && assigned.has(`${p.projectUuid}\n${e.serverId}`));
    for (const e of servers) {
      used.add(e.serverId);
      usedBy.add(`${p.projectUuid}\n${e.serverId}`);
    }
    return {
      id: p.id,
      projectUuid: p.projectUuid,
      profileId: p.profileId,
      servers: servers.map((e) => {
        const pinned = e.pin ? pins.get(`${p.id}\n${e.serverId}`) : undefined;
        return {
          serverId: e.serverId,
          ...(e.tools ? { tools: [...e.tools] } : {}),
          prefix: e.prefix,
          ...(e.pin ? { pin: true } : {}),
          ...(pinned ? { pins: pinned } : {}),
        };
      }),
      ...(p.grants ? { grants: expand(p.projectUuid, p.grants) } : {}),
    };
  });
  const mcpServerDocs = catalogRows
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
  const mcpCredentials = credentials
    .filter((c) => usedBy.has(`${c.projectUuid}\n${c.serverId}`))
    .map((c) => ({ projectUuid: c.projectUuid, serverId: c.serverId, userId: c.userId, authValue: secrets.unwrap(c.authValueWrapped) }));
  return { mcpServers: mcpServerDocs, mcpProfiles: mcpProfileDocs, mcpCredentials };
};
