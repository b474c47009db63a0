import type { KeySnapshot } from '../propagation/snapshot.ts';
import type { McpServerConfig, McpSnapshot } from './config.ts';

/**
 * Whose credential goes upstream (issue 24 item 3), as BYOK for providers: for each catalog server
 * that takes one (authType 'bearer' or 'header'), the calling member's own credential (only user
 * tokens carry an authenticated user; an API key's owner is a label), else the project's own, else
 * the catalog's. The header it goes in stays the catalog's. The caller's gateway credential is
 * never among them.
 *
 * The servers as one caller sees them are computed once per (snapshot, project, user) and reused
 * until the next configuration revision. A changed credential is a changed server config, so the
 * upstream pool opens a new upstream session with it (mcp/upstream.ts `sameServer`).
 */

const cache = new WeakMap<McpSnapshot, Map<string, ReadonlyMap<string, McpServerConfig>>>();

export const serversFor = (mcp: McpSnapshot, key: KeySnapshot): ReadonlyMap<string, McpServerConfig> => {
  const own = mcp.credentials.get(key.project.id);
  if (!own) return mcp.servers;
  const who = `${key.project.id}\n${key.userId ?? ''}`;
  let perCaller = cache.get(mcp);
  const hit = perCaller?.get(who);
  if (hit) return hit;
  const out = new Map(mcp.servers);
  for (const [serverId, creds] of own) {
    const server = mcp.servers.get(serverId);
    if (!server || server.authType === 'none') continue;
    const value = (key.userId !== undefined ? creds.users.get(key.userId) : undefined) ?? creds.project;
    if (value !== undefined) out.set(serverId, Object.freeze({ ...server, authValue: value }));
  }
  if (!perCaller) {
    perCaller = new Map();
    cache.set(mcp, perCaller);
  }
  perCaller.set(who, out);
  return out;
};
