/**
 * The MCP gateway's configuration as a data plane sees it: the interface between the management
 * side (catalog, assignments, profiles → the configuration document → the snapshot) and the data
 * plane side (src/mcp/*, serving `/mcp/{profileId}`). Plain immutable data, part of ConfigSnapshot.
 */

/** A catalog MCP server as a data plane sees it (secrets unwrapped, in memory only). */
export interface McpServerConfig {
  serverId: string;
  url: string;
  transport: 'streamable-http' | 'sse';
  authType: 'none' | 'bearer' | 'header';
  /** Header name for authType 'header'. */
  authHeader: string | null;
  /** The secret (bearer token or header value); null for 'none'. */
  authValue: string | null;
  /** The data plane may connect to private addresses for it (the platform admin's save, or GATEWAY_UPSTREAM_ALLOW_PRIVATE). */
  allowPrivate: boolean;
}
export interface McpProfileServer {
  serverId: string;
  /** Tool names or `*` globs; undefined = every tool. */
  tools?: readonly string[];
  /** Listed names are `${prefix}__${name}`; '' = no prefix. Default: the serverId. */
  prefix: string;
  /** Pinned tools (contract §7.1): only tools whose definition hash is in `pins` are listed and callable. */
  pin?: boolean;
  /** The approved definition hash of each tool by its name at the server; absent: never listed yet. */
  pins?: ReadonlyMap<string, string>;
}
/** Tools granted to one principal: `api_key:<keyId>` or `user:<userId>` (role grants arrive expanded to their members). */
export interface McpProfileGrant {
  principal: string;
  /** Listed (prefixed) names or `*` globs. */
  tools: readonly string[];
}
export interface McpProfileConfig {
  id: string; // row id (UUID)
  projectUuid: string; // the project row id
  profileId: string;
  servers: readonly McpProfileServer[]; // only servers assigned to the project AND present in the catalog
  /** Undefined: every caller of the project; else deny by default (contract §7.1). */
  grants?: readonly McpProfileGrant[];
}
/** A project's own credentials for one catalog server (sent instead of the catalog's `authValue`). */
export interface McpOwnCredentials {
  /** The project's. */
  project?: string;
  /** Members' own, by user id (user tokens' callers). */
  users: ReadonlyMap<string, string>;
}
/** What ConfigSnapshot carries for MCP. */
export interface McpSnapshot {
  /** By serverId. */
  servers: ReadonlyMap<string, McpServerConfig>;
  /** By projectUuid, then profileId. */
  profiles: ReadonlyMap<string, ReadonlyMap<string, McpProfileConfig>>;
  /** By projectUuid, then serverId. */
  credentials: ReadonlyMap<string, ReadonlyMap<string, McpOwnCredentials>>;
}
export const EMPTY_MCP: McpSnapshot = { servers: new Map(), profiles: new Map(), credentials: new Map() };
