import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, instant, updatedAt } from './columns.ts';

/**
 * Telemetry forwarding configs (the seed's TelemetryForwardingConfig). `authValueWrapped` is the
 * auth value wrapped with the KEK. Every type is served by the forwarder (src/audit/forwarder.ts),
 * whose durable state lives here too:
 * - the cursor `(cursorTs, cursorId)`: the last item the sink accepted — an audit entry in
 *   (timestamp, id) order for `audit_logs`, a request record in (stored_at, request_id) order for
 *   `traces`, `metrics` and `logs`; starts at the config's creation (items from then on are forwarded);
 * - `nextAttemptAt` / `failures`: the schedule (forwardIntervalSeconds for audit_logs, every second
 *   for the others, or backoff after failures);
 * - `leaseOwner` / `leaseUntil`: which management replica is forwarding for the config right now.
 */
export const telemetryConfigs = pgTable(
  'telemetry_configs',
  {
    id: idColumn(),
    userId: text('user_id').notNull(),
    telemetryType: text('telemetry_type').notNull(),
    sinkUrl: text('sink_url').notNull(),
    protocol: text('protocol').notNull(),
    authType: text('auth_type').notNull(),
    authValueWrapped: text('auth_value_wrapped'),
    apiKeyHeader: text('api_key_header'),
    enabled: boolean('enabled').notNull().default(true),
    forwardIntervalSeconds: integer('forward_interval_seconds').notNull().default(300),
    status: text('status').notNull().default('disconnected'),
    lastCheckedAt: instant('last_checked_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    cursorTs: timestamp('cursor_ts', { withTimezone: true, mode: 'date', precision: 3 }).notNull(),
    cursorId: uuid('cursor_id').notNull().default(sql`'00000000-0000-0000-0000-000000000000'::uuid`),
    nextAttemptAt: instant('next_attempt_at').notNull().defaultNow(),
    failures: integer('failures').notNull().default(0),
    leaseOwner: text('lease_owner'),
    leaseUntil: instant('lease_until'),
  },
  (t) => [index('telemetry_configs_due').on(t.nextAttemptAt).where(sql`${t.enabled}`)],
);

export type TelemetryConfigRow = typeof telemetryConfigs.$inferSelect;
