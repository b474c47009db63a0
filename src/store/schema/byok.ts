import { boolean, index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, instant, updatedAt } from './columns.ts';
import { customers, projectOwner } from './tenancy.ts';

/**
 * BYOK provider keys (byok.v1.ByokService). The secret is wrapped by envelope encryption
 * (SecretBox: a data key per secret under the versioned KEK); only Fetch returns it.
 */
export const byokKeys = pgTable(
  'byok_keys',
  {
    /** `byok_` + random. */
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** The wire enum value (PROVIDER_OPENAI, …). */
    provider: text('provider').notNull(),
    customerUuid: uuid('customer_uuid')
      .notNull()
      .references(() => customers.id),
    ...projectOwner(),
    userScope: boolean('user_scope').notNull().default(false),
    /** The owning user of a user-scoped key; '' for a project-level key. */
    scopeUserId: text('scope_user_id').notNull().default(''),
    secretWrapped: text('secret_wrapped').notNull(),
    displaySuffix: text('display_suffix').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    revokedAt: instant('revoked_at'),
  },
  (t) => [index('byok_keys_project').on(t.projectUuid, t.createdAt)],
);

export type ByokKeyRow = typeof byokKeys.$inferSelect;
