import { boolean, index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, instant, updatedAt } from './columns.ts';
import { customers } from './tenancy.ts';

/**
 * SCIM 2.0 provisioning (contract §16): the tokens an identity provider calls `/scim/v2/` with (only
 * their SHA-256), and the Users and Groups it provisioned, per customer. A user's `userName` is its
 * gateway userId; groups named `{projectId}:{role}` make their members project members.
 */
export const scimTokens = pgTable(
  'scim_tokens',
  {
    id: idColumn(),
    customerUuid: uuid('customer_uuid')
      .notNull()
      .references(() => customers.id),
    customerId: text('customer_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    /** The token's first characters, to tell tokens apart in a list. */
    prefix: text('prefix').notNull(),
    name: text('name'),
    createdAt: createdAt(),
    lastUsedAt: instant('last_used_at'),
    revokedAt: instant('revoked_at'),
  },
  (t) => [uniqueIndex('scim_tokens_hash').on(t.tokenHash), index('scim_tokens_customer').on(t.customerUuid)],
);

/** A provisioned user; `resource` keeps the attributes the provider sent that the gateway does not read (name, emails, …). */
export const scimUsers = pgTable(
  'scim_users',
  {
    id: idColumn(),
    customerUuid: uuid('customer_uuid')
      .notNull()
      .references(() => customers.id),
    customerId: text('customer_id').notNull(),
    userName: text('user_name').notNull(),
    externalId: text('external_id'),
    displayName: text('display_name'),
    active: boolean('active').notNull().default(true),
    resource: jsonb('resource').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('scim_users_name').on(t.customerUuid, t.userName)],
);

/** A provisioned group; `members` are ids of scim_users of the same customer. */
export const scimGroups = pgTable(
  'scim_groups',
  {
    id: idColumn(),
    customerUuid: uuid('customer_uuid')
      .notNull()
      .references(() => customers.id),
    customerId: text('customer_id').notNull(),
    displayName: text('display_name').notNull(),
    externalId: text('external_id'),
    members: jsonb('members').$type<string[]>().notNull().default([]),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('scim_groups_name').on(t.customerUuid, t.displayName)],
);

export type ScimUserRow = typeof scimUsers.$inferSelect;
export type ScimGroupRow = typeof scimGroups.$inferSelect;
export type ScimTokenRow = typeof scimTokens.$inferSelect;
