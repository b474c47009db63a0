import { index, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, idColumn } from './columns.ts';
import { projectOwner } from './tenancy.ts';

/** Inference API keys. Only the SHA-256 of the key is stored. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: idColumn(),
    name: text('name').notNull().default(''),
    userId: text('user_id').notNull().default(''),
    keyHash: text('key_hash').notNull(),
    /** First characters of the key, for display (`sk-AbCd…`). */
    keyPrefix: text('key_prefix').notNull(),
    keyAddress: text('key_address').notNull(),
    /** The project row the key serves; the slugs are kept for display. */
    ...projectOwner(),
    workspaceId: text('workspace_id'),
    role: text('role'),
    organizationUnit: text('organization_unit'),
    scopes: jsonb('scopes').$type<string[]>().notNull().default([]),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('api_keys_hash').on(t.keyHash),
    index('api_keys_project').on(t.customerId, t.projectId),
    index('api_keys_project_uuid').on(t.projectUuid),
  ],
);

/** Platform-admin credentials (hash only). */
export const adminTokens = pgTable('admin_tokens', {
  id: idColumn(),
  tokenHash: text('token_hash').notNull(),
  createdAt: createdAt(),
});

export type ApiKeyRow = typeof apiKeys.$inferSelect;
