import { bigint, boolean, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, updatedAt } from './columns.ts';
import { projects } from './tenancy.ts';

/**
 * Governance (contract §3.2): spend budgets and guardrails of a project. Rows belong to a project
 * row (`projectUuid`); the slugs are kept for display and lookups. Soft-deleting a project deletes
 * them (cascade.ts).
 */

const projectRef = () =>
  uuid('project_uuid')
    .notNull()
    .references(() => projects.id);

export const budgets = pgTable(
  'budgets',
  {
    id: idColumn(),
    projectUuid: projectRef(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    /** The API key the budget covers; null: the whole project. */
    apiKeyId: text('api_key_id'),
    name: text('name').notNull(),
    /** The limit in nano-USD (1e-9 USD), exact. */
    limitNanoUsd: bigint('limit_nano_usd', { mode: 'number' }).notNull(),
    /** `day`, `week`, `month` (UTC calendar periods) or `total`. */
    period: text('period').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('budgets_unique').on(t.projectUuid, t.name)],
);

export const guardrails = pgTable(
  'guardrails',
  {
    id: idColumn(),
    projectUuid: projectRef(),
    customerId: text('customer_id').notNull(),
    projectId: text('project_id').notNull(),
    name: text('name').notNull(),
    /** `input`, `output` or `both`. */
    stage: text('stage').notNull(),
    /** `regex`, `pii`, `max_input_tokens` or a provider kind (contract §15: `webhook`, `lakera`, …). */
    kind: text('kind').notNull(),
    pattern: text('pattern'),
    piiTypes: jsonb('pii_types').$type<string[]>().notNull().default([]),
    maxTokens: integer('max_tokens'),
    /** `block`, `redact` or `flag`. */
    action: text('action').notNull(),
    /** Input documents the gateway cannot read: `scan` (let through) or `refuse`. */
    documents: text('documents').notNull().default('scan'),
    /** Provider kinds: the vendor's endpoint and options (the credential apart, wrapped below). */
    provider: jsonb('provider').$type<{ connectionId?: string; url?: string; options?: Record<string, unknown> }>(),
    /** Provider kinds: the credential given as `provider.authValue`, wrapped by the SecretBox (never returned). */
    authValueWrapped: text('auth_value_wrapped'),
    timeoutMs: integer('timeout_ms'),
    /** `closed` or `open`; null: closed on input, open on output. */
    failMode: text('fail_mode'),
    /** Output streams: the window checked at a time (null: 1000). */
    windowChars: integer('window_chars'),
    /** The provider URL is (or resolved to) an inward address and the platform admin saved it. */
    allowPrivate: boolean('allow_private').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('guardrails_unique').on(t.projectUuid, t.name), index('guardrails_project').on(t.projectUuid)],
);

export type BudgetRow = typeof budgets.$inferSelect;
export type GuardrailRow = typeof guardrails.$inferSelect;
