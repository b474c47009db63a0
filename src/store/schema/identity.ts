import { sql } from 'drizzle-orm';
import { jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, instant } from './columns.ts';
import { customers, projects } from './tenancy.ts';

/** Keys the management plane signs user tokens with. The private key is wrapped with the KEK. */
export const signingKeys = pgTable(
  'signing_keys',
  {
    /** The JWT `kid`. */
    kid: text('kid').primaryKey(),
    purpose: text('purpose').notNull(),
    alg: text('alg').notNull(),
    publicKeyPem: text('public_key_pem').notNull(),
    privateKeyWrapped: text('private_key_wrapped').notNull(),
    createdAt: createdAt(),
    retiredAt: instant('retired_at'),
  },
  (t) => [uniqueIndex('signing_keys_active').on(t.purpose).where(sql`${t.retiredAt} is null`)],
);

/** Issued user tokens (impersonation tokens are not persisted). Only claims, never the token. */
export const userTokens = pgTable('user_tokens', {
  jti: text('jti').primaryKey(),
  userId: text('user_id').notNull(),
  /** The customer row the token was issued in (a re-created slug is another customer). */
  customerUuid: uuid('customer_uuid')
    .notNull()
    .references(() => customers.id),
  customerId: text('customer_id').notNull(),
  workspaceId: text('workspace_id').notNull(),
  projectId: text('project_id'),
  projectUuid: uuid('project_uuid').references(() => projects.id),
  organizationUnit: text('organization_unit').notNull(),
  role: text('role').notNull(),
  scopes: jsonb('scopes').$type<string[]>().notNull().default([]),
  name: text('name'),
  createdAt: createdAt(),
  expiresAt: instant('expires_at').notNull(),
  lastUsedAt: instant('last_used_at'),
  revokedAt: instant('revoked_at'),
  revokedReason: text('revoked_reason'),
});

export type SigningKeyRow = typeof signingKeys.$inferSelect;
export type UserTokenRow = typeof userTokens.$inferSelect;
