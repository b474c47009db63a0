import { bigint, bigserial, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Configuration-change records: one row per affected data plane (or project gateway) per change,
 * written in the same transaction as the change. The highest id is the desired revision.
 */
export const configChanges = pgTable(
  'config_changes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** `local` for the embedded data plane, otherwise a data plane or project gateway id. */
    target: text('target').notNull(),
    kind: text('kind').notNull(),
    entity: text('entity').notNull(),
    entityId: text('entity_id').notNull(),
    customerId: text('customer_id'),
    projectId: text('project_id'),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('config_changes_target').on(t.target, t.id)],
);

/** What each data plane reports it serves. */
export const dataplaneStatus = pgTable('dataplane_status', {
  dataplaneId: text('dataplane_id').primaryKey(),
  appliedRevision: bigint('applied_revision', { mode: 'number' }).notNull().default(0),
  lastPollAt: timestamp('last_poll_at', { withTimezone: true, mode: 'date' }),
  lastDriftSweepAt: timestamp('last_drift_sweep_at', { withTimezone: true, mode: 'date' }),
  faults: jsonb('faults').$type<string[]>().notNull().default([]),
});
