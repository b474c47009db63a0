import { sql } from 'drizzle-orm';
import { boolean, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, idColumn, labelsColumn, updatedAt } from './columns.ts';
import { projects } from './tenancy.ts';

/**
 * The A2A agent gateway (contract §12): the catalog of agents with their pinned cards, and the
 * projects each is assigned to.
 */

/** One skill of a pinned card, as the catalog shows it. */
export interface A2aSkillRow {
  id: string;
  name: string;
}

/** Catalog A2A agents (platform admin's). `agent_id` is unique among live rows; deletes are soft. */
export const a2aAgents = pgTable(
  'a2a_agents',
  {
    id: idColumn(),
    agentId: text('agent_id').notNull(),
    cardUrl: text('card_url').notNull(),
    /** The pinned card, exactly as fetched (its SHA-256 is `card_sha256`). */
    card: text('card').notNull(),
    cardSha256: text('card_sha256').notNull(),
    name: text('name').notNull(),
    skills: jsonb('skills').$type<A2aSkillRow[]>().notNull().default([]),
    /** The JSON-RPC interface URL the pinned card names (where calls go). */
    rpcUrl: text('rpc_url').notNull(),
    description: text('description'),
    authType: text('auth_type').$type<'none' | 'bearer' | 'header'>().notNull(),
    authHeader: text('auth_header'),
    /** The credential, wrapped by the SecretBox (a `*_wrapped` column: KEK rotation re-wraps it). */
    authValueWrapped: text('auth_value_wrapped'),
    /** The card URL (or the interface URL) is an inward address and the platform admin saved it. */
    allowPrivate: boolean('allow_private').notNull().default(false),
    labels: labelsColumn(),
    pinnedAt: timestamp('pinned_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex('a2a_agents_agent_id_active').on(t.agentId).where(sql`${t.deletedAt} is null`)],
);

/** Agents assigned to a project; removed with the project (control-plane/cascade.ts). */
export const projectA2aAgents = pgTable(
  'project_a2a_agents',
  {
    id: idColumn(),
    projectUuid: uuid('project_uuid')
      .notNull()
      .references(() => projects.id),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    agentId: text('agent_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('project_a2a_agents_unique').on(t.projectUuid, t.agentId)],
);

export type A2aAgentRow = typeof a2aAgents.$inferSelect;
