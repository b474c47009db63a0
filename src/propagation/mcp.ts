import { EMPTY_MCP, type McpOwnCredentials, type McpProfileConfig, type McpServerConfig, type McpSnapshot } from '../mcp/config.ts';
import type { ConfigDocument } from '../api/config-document.ts';

const isTransport = (v: string): v is McpServerConfig['transport'] => v === 'streamable-http' || v === 'sse';
const isAuthType = (v: string): v is McpServerConfig['authType'] => v === 'none' || v === 'bearer' || v === 'header';

/**
 * The document's MCP sections as the snapshot carries them (src/mcp/config.ts). A server of an
 * unknown transport or auth type is left out (and with it every profile entry naming it), as is a
 * profile entry whose server is not in the document: a profile only ever fronts catalog servers.
 */
export const mcpSnapshotOf = (doc: Pick<ConfigDocument, 'mcpServers' | 'mcpProfiles' | 'mcpCredentials'>): McpSnapshot => {
  if (!doc.mcpServers?.length && !doc.mcpProfiles?.length) return EMPTY_MCP;
  const servers = new Map<string, McpServerConfig>();
  for (const s of doc.mcpServers ?? []) {
    if (!isTransport(s.transport) || !isAuthType(s.authType)) continue;
    servers.set(
      s.serverId,
      Object.freeze({
        serverId: s.serverId,
        url: s.url,
        transport: s.transport,
        authType: s.authType,
        authHeader: s.authHeader,
        authValue: s.authValue,
        allowPrivate: s.allowPrivate,
      }),
    );
  }
  const profiles = new Map<string, Map<string, McpProfileConfig>>();
  for (const p of doc.mcpProfiles ?? []) {
    let byId = profiles.get(p.projectUuid);
    if (!byId) {
      byId = new Map();
      profiles.set(p.projectUuid, byId);
    }
    const entries = p.servers
      .filter((e) => servers.has(e.serverId))
      .map((e) =>
        Object.freeze({
          serverId: e.serverId,
          prefix: e.prefix,
          ...(e.tools ? { tools: Object.freeze([...e.tools]) } : {}),
          ...(e.pin ? { pin: true } : {}),
          ...(e.pin && e.pins ? { pins: new Map(e.pins.map((x) => [x.name, x.hash])) } : {}),
        }),
      );
    const grants = p.grants?.map((g) => Object.freeze({ principal: g.principal, tools: Object.freeze([...g.tools]) }));
    byId.set(
      p.profileId,
      Object.freeze({
        id: p.id,
        projectUuid: p.projectUuid,
        profileId: p.profileId,
        servers: Object.freeze(entries),
        ...(grants ? { grants: Object.freeze(grants) } : {}),
      }),
    );
  }
  const credentials = new Map<string, Map<string, { project?: string; users: Map<string, string> }>>();
  for (const c of doc.mcpCredentials ?? []) {
    if (!servers.has(c.serverId)) continue;
    let byServer = credentials.get(c.projectUuid);
    if (!byServer) {
      byServer = new Map();
      credentials.set(c.projectUuid, byServer);
    }
    let own = byServer.get(c.serverId);
    if (!own) {
      own = { users: new Map() };
      byServer.set(c.serverId, own);
    }
    if (c.userId === '') own.project = c.authValue;
    else own.users.set(c.userId, c.authValue);
  }
  const frozen: Map<string, ReadonlyMap<string, McpOwnCredentials>> = new Map(
    [...credentials].map(([p, m]) => [p, new Map([...m].map(([sid, o]) => [sid, Object.freeze(o)]))]),
  );
  return Object.freeze({ servers, profiles, credentials: frozen });
};
