import { sql } from 'drizzle-orm';
import { boolean, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, idColumn, updatedAt } from './columns.ts';
import { projectOwner } from './tenancy.ts';

/** A provider connection: where and how to reach an upstream. The API key is wrapped (KEK). */
export const providerConnections = pgTable(
  'provider_connections',
  {
    id: idColumn(),
    /** The owning project row; the slugs are kept for display and lookups. */
    ...projectOwner(),
    name: text('name').notNull(),
    provider: text('provider').notNull(),
    baseUrl: text('base_url'),
    apiKeyWrapped: text('api_key_wrapped'),
    options: jsonb('options').$type<Record<string, unknown>>().notNull().default({}),
    /** Saved by the platform admin with a loopback/private/metadata address: the data plane may connect to it. */
    allowPrivate: boolean('allow_private').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex('provider_connections_name_active').on(t.projectUuid, t.name).where(sql`${t.deletedAt} is null`)],
);

export interface RouteTarget {
  connection: string;
  model: string;
  priority: number;
  weight: number;
}

/** One route per (customer, project, public model); targets kept in the order given. */
export const routes = pgTable(
  'routes',
  {
    id: idColumn(),
    /** The owning project row; the slugs are kept for display and lookups. */
    ...projectOwner(),
    model: text('model').notNull(),
    targets: jsonb('targets').$type<RouteTarget[]>().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    timeoutMs: integer('timeout_ms'),
    maxRetries: integer('max_retries'),
    /** How targets are picked: 'ordered' (null: the default), 'latency' or 'headroom'. */
    strategy: text('strategy'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex('routes_model_active').on(t.projectUuid, t.model).where(sql`${t.deletedAt} is null`)],
);

export type ProviderConnectionRow = typeof providerConnections.$inferSelect;
export type RouteRow = typeof routes.$inferSelect;
