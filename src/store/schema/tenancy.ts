import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, idColumn, labelsColumn, updatedAt } from './columns.ts';

/** Customers (tenants). `customerId` is the slug; unique among active customers. */
export const customers = pgTable(
  'customers',
  {
    id: idColumn(),
    customerId: text('customer_id').notNull(),
    name: text('name'),
    description: text('description'),
    labels: labelsColumn(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex('customers_slug_active').on(t.customerId).where(sql`${t.deletedAt} is null`)],
);

/**
 * Projects; every customer has `default` from creation. `customerUuid` is the owning customer row
 * (the slug `customerId` is kept for display and lookups): a customer re-created with the same slug
 * is another row, so nothing of the old one attaches to it.
 */
export const projects = pgTable(
  'projects',
  {
    id: idColumn(),
    customerUuid: uuid('customer_uuid')
      .notNull()
      .references(() => customers.id),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    name: text('name'),
    description: text('description'),
    labels: labelsColumn(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    uniqueIndex('projects_slug_active').on(t.customerId, t.projectId).where(sql`${t.deletedAt} is null`),
    index('projects_customer').on(t.customerId),
    index('projects_customer_uuid').on(t.customerUuid),
  ],
);

/**
 * The owner columns of a project's resource: the project row (removed with it, see
 * control-plane/cascade.ts) and its slugs, kept for display and lookups.
 */
export const projectOwner = () => ({
  projectUuid: uuid('project_uuid')
    .notNull()
    .references(() => projects.id),
  customerId: text('customer_id').notNull(),
  projectId: text('project_id').notNull(),
});

export type CustomerRow = typeof customers.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;
