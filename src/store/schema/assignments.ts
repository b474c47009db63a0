import { index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, updatedAt } from './columns.ts';

/**
 * What is assigned to a project: members, catalog models, providers, MCP servers and settings.
 * Rows are keyed by the project's (customer, project) slugs; removing an assignment deletes its
 * row, and soft-deleting a project deletes its assignments (so a project re-created with the same
 * slug starts empty).
 */

export const projectMembers = pgTable(
  'project_members',
  {
    id: idColumn(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    userId: text('user_id').notNull(),
    role: text('role').$type<'admin' | 'member'>().notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('project_members_unique').on(t.customerId, t.projectId, t.userId), index('project_members_user').on(t.customerId, t.userId)],
);

/** Catalog models assigned to a project. */
export const projectModels = pgTable(
  'project_models',
  {
    id: idColumn(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    modelId: uuid('model_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('project_models_unique').on(t.customerId, t.projectId, t.modelId)],
);

/** Providers enabled for a project. */
export const projectProviders = pgTable(
  'project_providers',
  {
    id: idColumn(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    providerName: text('provider_name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('project_providers_unique').on(t.customerId, t.projectId, t.providerName)],
);

/** MCP servers assigned to a project (by catalog server id). */
export const projectMcpServers = pgTable(
  'project_mcp_servers',
  {
    id: idColumn(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    serverId: text('server_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('project_mcp_servers_unique').on(t.customerId, t.projectId, t.serverId)],
);

/** Project settings (`global-fallback`, `rate-limit`), string-encoded values. */
export const projectSettings = pgTable(
  'project_settings',
  {
    id: idColumn(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    settingName: text('setting_name').notNull(),
    settingValue: text('setting_value').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('project_settings_unique').on(t.customerId, t.projectId, t.settingName)],
);

export type ProjectMemberRow = typeof projectMembers.$inferSelect;
export type ProjectModelRow = typeof projectModels.$inferSelect;
export type ProjectProviderRow = typeof projectProviders.$inferSelect;
export type ProjectMcpServerRow = typeof projectMcpServers.$inferSelect;
export type ProjectSettingRow = typeof projectSettings.$inferSelect;
