import { sql } from 'drizzle-orm';
import { bigint, boolean, customType, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** `bytea` as a Uint8Array (hashes, signatures). */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  toDriver: (v) => v,
  fromDriver: (v) => new Uint8Array(v),
});

/**
 * Audit log entries (the seed's AuditLogEntry), one per state-changing or refused management call.
 * Written in the same transaction as the change. `timestamp` has millisecond precision, so the
 * entry read back is exactly the entry hashed into a checkpoint (contract §3.3: leaves are ordered
 * by (timestamp, id)).
 */
export const auditLogs = pgTable(
  'audit_logs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    timestamp: timestamp('timestamp', { withTimezone: true, mode: 'date', precision: 3 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    userId: text('user_id').notNull().default(''),
    userEmail: text('user_email').notNull().default(''),
    actorType: text('actor_type').notNull(),
    actionType: text('action_type').notNull(),
    resourceType: text('resource_type').notNull().default(''),
    resourceId: text('resource_id').notNull().default(''),
    endpoint: text('endpoint').notNull().default(''),
    httpMethod: text('http_method').notNull().default('POST'),
    statusCode: integer('status_code').notNull(),
    success: boolean('success').notNull(),
    errorMessage: text('error_message').notNull().default(''),
    correlationId: text('correlation_id').notNull().default(''),
    sourceIp: text('source_ip').notNull().default(''),
    userAgent: text('user_agent').notNull().default(''),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    requestBody: jsonb('request_body').$type<Record<string, unknown>>().notNull().default({}),
    requestParams: jsonb('request_params').$type<Record<string, unknown>>().notNull().default({}),
    responseData: jsonb('response_data').$type<Record<string, unknown>>().notNull().default({}),
  },
  (t) => [
    index('audit_logs_time').on(t.timestamp, t.id),
    index('audit_logs_correlation').on(t.correlationId),
    index('audit_logs_resource').on(t.resourceId),
    index('audit_logs_user').on(t.userId, t.timestamp),
    index('audit_logs_action').on(t.actionType, t.timestamp),
    index('audit_logs_failed').on(t.timestamp).where(sql`${t.success} = false`),
  ],
);

/**
 * Sealed checkpoints over closed windows of audit entries (contract §3.3): an RFC 6962 Merkle root
 * over the window's entries, chained to the previous root, signed with Ed25519.
 */
export const auditCheckpoints = pgTable('audit_checkpoints', {
  seq: bigint('seq', { mode: 'number' }).primaryKey(),
  rangeStartId: text('range_start_id').notNull(),
  rangeEndId: text('range_end_id').notNull(),
  rangeStartTs: timestamp('range_start_ts', { withTimezone: true, mode: 'date', precision: 3 }).notNull(),
  rangeEndTs: timestamp('range_end_ts', { withTimezone: true, mode: 'date', precision: 3 }).notNull(),
  leafCount: bigint('leaf_count', { mode: 'number' }).notNull(),
  rootHash: bytea('root_hash').notNull(),
  prevRootHash: bytea('prev_root_hash').notNull(),
  algo: text('algo').notNull(),
  signature: bytea('signature').notNull(),
  signingKid: text('signing_kid').notNull(),
  kekVersion: integer('kek_version').notNull().default(1),
  signedAt: timestamp('signed_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
});

export type AuditLogRow = typeof auditLogs.$inferSelect;
export type NewAuditLogRow = typeof auditLogs.$inferInsert;
export type AuditCheckpointRow = typeof auditCheckpoints.$inferSelect;
