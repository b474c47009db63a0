import { sql } from 'drizzle-orm';
import { boolean, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, idColumn, labelsColumn, updatedAt } from './columns.ts';
import { projectOwner } from './tenancy.ts';

/**
 * The MCP gateway (contract §7): the catalog of MCP servers and the MCP profiles of projects.
 * A project's assigned servers are `project_mcp_servers` (assignments.ts), by `server_id`.
 */

/** Catalog MCP servers (platform admin's). `server_id` is unique among live rows; deletes are soft. */
export const mcpServers = pgTable(
  'mcp_servers',
  {
    id: idColumn(),
    serverId: text('server_id').notNull(),
    url: text('url').notNull(),
    transport: text('transport').$type<'streamable-http' | 'sse'>().notNull(),
    description: text('description'),
    authType: text('auth_type').$type<'none' | 'bearer' | 'header'>().notNull(),
    authHeader: text('auth_header'),
    /** The credential, wrapped by the SecretBox (a `*_wrapped` column: KEK rotation re-wraps it). */
    authValueWrapped: text('auth_value_wrapped'),
    /** The URL is (or resolved to) an inward address and the platform admin saved it. */
    allowPrivate: boolean('allow_private').notNull().default(false),
    labels: labelsColumn(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex('mcp_servers_server_id_active').on(t.serverId).where(sql`${t.deletedAt} is null`)],
);

/** One server of a profile: `prefix` is stored resolved (the serverId unless given). */
/** Who may use which tools of a profile (contract §7.1): `api_key:<keyId>`, `user:<userId>` or `role:<project role>`. */
export interface McpProfileGrantRow {
  principal: string;
  /** Listed (prefixed) tool names or `*` globs. */
  tools: string[];
}

export interface McpProfileServerRow {
  serverId: string;
  tools?: string[];
  prefix: string;
  /** Pinned tools (contract §7.1): each tool's definition is pinned when first listed. */
  pin?: boolean;
}

/** MCP profiles of a project; removed with the project (see control-plane/cascade.ts). */
export const mcpProfiles = pgTable(
  'mcp_profiles',
  {
    id: idColumn(),
    ...projectOwner(),
    profileId: text('profile_id').notNull(),
    description: text('description'),
    servers: jsonb('servers').$type<McpProfileServerRow[]>().notNull().default([]),
    /** Null: every caller of the project uses every tool; a list: only what it grants (deny by default). */
    grants: jsonb('grants').$type<McpProfileGrantRow[]>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('mcp_profiles_unique').on(t.projectUuid, t.profileId)],
);

/**
 * A project's or a member's own credential for a catalog server (as BYOK keys are for providers):
 * sent upstream instead of the catalog's, the member's first, then the project's. `user_id` is ''
 * for the project's credential. Tied to the catalog row (`server_uuid`): deleting the server
 * deletes them, so a server re-created under the same serverId starts without them. Removed with
 * the project (control-plane/cascade.ts).
 */
export const mcpServerCredentials = pgTable(
  'mcp_server_credentials',
  {
    id: idColumn(),
    ...projectOwner(),
    serverUuid: uuid('server_uuid')
      .notNull()
      .references(() => mcpServers.id),
    serverId: text('server_id').notNull(),
    userId: text('user_id').notNull().default(''),
    /** The credential, wrapped by the SecretBox (a `*_wrapped` column: KEK rotation re-wraps it). */
    authValueWrapped: text('auth_value_wrapped').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('mcp_server_credentials_unique').on(t.projectUuid, t.serverUuid, t.userId)],
);

export type McpServerRow = typeof mcpServers.$inferSelect;
export type McpServerCredentialRow = typeof mcpServerCredentials.$inferSelect;
export type McpProfileRow = typeof mcpProfiles.$inferSelect;

/**
 * Pinned tool definitions (contract §7.1) of the `pin: true` servers of a profile, one row per tool
 * name: `pinned_hash` the approved definition's hash (null: added since, not approved), `seen_hash`
 * the definition the data planes last listed (null: no longer listed). A row whose two differ is
 * pending; ApproveMcpTools makes `pinned_hash` what was seen. Removed with the profile.
 */
export const mcpToolPins = pgTable(
  'mcp_tool_pins',
  {
    profileUuid: uuid('profile_uuid')
      .notNull()
      .references(() => mcpProfiles.id, { onDelete: 'cascade' }),
    serverId: text('server_id').notNull(),
    name: text('name').notNull(),
    pinnedHash: text('pinned_hash'),
    seenHash: text('seen_hash'),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.profileUuid, t.serverId, t.name] })],
);
