import { jsonb, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Columns every soft-deletable resource shares. Timestamps are stored with millisecond precision
 * (what a JavaScript Date holds), so a value read back compares equal to the stored one — keyset
 * paging cursors rely on that.
 */
export const idColumn = () => uuid('id').primaryKey().defaultRandom();
export const labelsColumn = () => jsonb('labels').$type<Record<string, string>>().notNull().default({});
export const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow();
export const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow();
export const deletedAt = () => timestamp('deleted_at', { withTimezone: true, mode: 'date', precision: 3 });
/** A nullable point in time (revokedAt, expiresAt, …). */
export const instant = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });
