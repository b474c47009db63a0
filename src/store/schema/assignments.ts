import { index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, updatedAt } from './columns.ts';
import { projects } from './tenancy.ts';

/**
 * What is assigned to a project: members, catalog models, providers, MCP servers and settings.
 * Rows belong to a project row (`projectUuid`, a foreign key); the slugs are kept for display.
 * Removing an assignment deletes its row, and soft-deleting a project deletes its assignments; a
 * project re-created with the same slug is another row and starts empty.
 */

const projectRef = () =>
  uuid('project_uuid')
    .notNull()
    .references(() => projects.id);

export const projectMembers = pgTable(
  'project_members',
  {
    id: idColumn(),
    projectUuid: projectRef(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    userId: text('user_id').notNull(),
    role: text('role').$type<'admin' | 'member'>().notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('project_members_unique').on(t.projectUuid, t.userId), index('project_members_user').on(t.customerId, t.userId)],
);

/** Catalog models assigned to a project. */
export const projectModels = pgTable(
  'project_models',
  {
    id: idColumn(),
    projectUuid: projectRef(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    modelId: uuid('model_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('project_models_unique').on(t.projectUuid, t.modelId)],
);

/** Providers enabled for a project. */
export const projectProviders = pgTable(
  'project_providers',
  {
    id: idColumn(),
    projectUuid: projectRef(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    providerName: text('provider_name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('project_providers_unique').on(t.projectUuid, t.providerName)],
);

/** MCP servers assigned to a project (by catalog server id). */
export const projectMcpServers = pgTable(
  'project_mcp_servers',
  {
    id: idColumn(),
    projectUuid: projectRef(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    serverId: text('server_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('project_mcp_servers_unique').on(t.projectUuid, t.serverId)],
);

/** Project settings (`global-fallback`, `rate-limit`), string-encoded values. */
export const projectSettings = pgTable(
  'project_settings',
  {
    id: idColumn(),
    projectUuid: projectRef(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    settingName: text('setting_name').notNull(),
    settingValue: text('setting_value').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('project_settings_unique').on(t.projectUuid, t.settingName)],
);

export type ProjectMemberRow = typeof projectMembers.$inferSelect;
export type ProjectModelRow = typeof projectModels.$inferSelect;
export type ProjectProviderRow = typeof projectProviders.$inferSelect;
export type ProjectMcpServerRow = typeof projectMcpServers.$inferSelect;
export type ProjectSettingRow = typeof projectSettings.$inferSelect;
