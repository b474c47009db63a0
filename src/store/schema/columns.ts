import { jsonb, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Columns every soft-deletable resource shares. */
export const idColumn = () => uuid('id').primaryKey().defaultRandom();
export const labelsColumn = () => jsonb('labels').$type<Record<string, string>>().notNull().default({});
export const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const deletedAt = () => timestamp('deleted_at', { withTimezone: true, mode: 'date' });
