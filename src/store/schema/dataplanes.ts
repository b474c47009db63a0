import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, idColumn, labelsColumn, updatedAt } from './columns.ts';
import { customers, projectOwner, projects } from './tenancy.ts';

/**
 * Data planes. A workspace IS a data plane: one table, the customer-chosen slug exposed as
 * `dataplaneId` by the Dataplane operations and as `workspaceId` by the Workspace operations, so
 * both share one slug space per customer.
 */
export const dataplanes = pgTable(
  'dataplanes',
  {
    id: idColumn(),
    customerUuid: uuid('customer_uuid')
      .notNull()
      .references(() => customers.id),
    customerId: text('customer_id').notNull(),
    slug: text('slug').notNull(),
    /** The project row it belongs to (`projectId` is that project's slug). */
    projectUuid: uuid('project_uuid')
      .notNull()
      .references(() => projects.id),
    /** The project the data plane belongs to; `default` when none was given. */
    projectId: text('project_id').notNull().default('default'),
    name: text('name'),
    description: text('description'),
    labels: labelsColumn(),
    /** Customer-facing URL of the data plane's gateway endpoint. */
    url: text('url'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    uniqueIndex('dataplanes_slug_active').on(t.customerUuid, t.slug).where(sql`${t.deletedAt} is null`),
    index('dataplanes_customer').on(t.customerId),
    index('dataplanes_customer_uuid').on(t.customerUuid),
  ],
);

/** Project gateways: a customer-facing URL on a data plane (workspace) serving attached projects. */
export const projectGateways = pgTable(
  'project_gateways',
  {
    id: idColumn(),
    customerUuid: uuid('customer_uuid')
      .notNull()
      .references(() => customers.id),
    customerId: text('customer_id').notNull(),
    /** Slug of the hosting data plane (workspace) of the same customer. */
    workspaceId: text('workspace_id').notNull(),
    projectGatewayId: text('project_gateway_id').notNull(),
    name: text('name'),
    description: text('description'),
    labels: labelsColumn(),
    url: text('url'),
    /** Lower-cased host of `url`; globally unique among active gateways. */
    urlHost: text('url_host'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    uniqueIndex('project_gateways_slug_active').on(t.customerUuid, t.workspaceId, t.projectGatewayId).where(sql`${t.deletedAt} is null`),
    uniqueIndex('project_gateways_host_active').on(t.urlHost).where(sql`${t.deletedAt} is null and ${t.urlHost} is not null`),
  ],
);

/** Projects a gateway serves. */
export const projectGatewayProjects = pgTable(
  'project_gateway_projects',
  {
    id: idColumn(),
    gatewayId: uuid('gateway_id')
      .notNull()
      .references(() => projectGateways.id),
    ...projectOwner(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('project_gateway_projects_unique').on(t.gatewayId, t.projectUuid),
    index('project_gateway_projects_project').on(t.customerId, t.projectId),
  ],
);

export type DataplaneRow = typeof dataplanes.$inferSelect;
export type ProjectGatewayRow = typeof projectGateways.$inferSelect;
