import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, instant } from './columns.ts';

/**
 * Files and batches (contract §11), per project (the project's row id; no foreign key, as for
 * stored conversations). A file's content is kept in the row as text (JSON lines). A batch's
 * progress is its `batch_lines` rows: a line with a row is done, so a batch interrupted by a
 * restart resumes at the lines without one; `lease_*` tells which process runs it.
 */
export const gatewayFiles = pgTable(
  'gateway_files',
  {
    id: text('id').primaryKey(),
    projectUuid: uuid('project_uuid').notNull(),
    purpose: text('purpose').notNull(),
    filename: text('filename').notNull(),
    bytes: integer('bytes').notNull(),
    content: text('content').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('gateway_files_project').on(t.projectUuid, t.createdAt)],
);

export const gatewayBatches = pgTable(
  'gateway_batches',
  {
    id: text('id').primaryKey(),
    projectUuid: uuid('project_uuid').notNull(),
    /** The id of the key (or user token) that created it: its lines run as that caller. */
    apiKeyId: text('api_key_id').notNull(),
    endpoint: text('endpoint').notNull(),
    inputFileId: text('input_file_id').notNull(),
    completionWindow: text('completion_window').notNull(),
    status: text('status').notNull(),
    metadata: jsonb('metadata').$type<Record<string, string>>(),
    outputFileId: text('output_file_id'),
    errorFileId: text('error_file_id'),
    total: integer('total').notNull().default(0),
    completed: integer('completed').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    /** Why the batch failed as a whole (OpenAI's `errors.data`), when it did. */
    errors: jsonb('errors').$type<{ code: string; message: string; line: number | null }[]>(),
    createdAt: createdAt(),
    inProgressAt: instant('in_progress_at'),
    finalizingAt: instant('finalizing_at'),
    completedAt: instant('completed_at'),
    failedAt: instant('failed_at'),
    expiresAt: instant('expires_at').notNull(),
    cancellingAt: instant('cancelling_at'),
    cancelledAt: instant('cancelled_at'),
    leaseOwner: text('lease_owner'),
    leaseUntil: instant('lease_until'),
  },
  (t) => [index('gateway_batches_project').on(t.projectUuid, t.createdAt), index('gateway_batches_status').on(t.status)],
);

/** One finished line of a batch: its output (or error) line as written to the output (or error) file. */
export const gatewayBatchLines = pgTable(
  'gateway_batch_lines',
  {
    batchId: text('batch_id').notNull(),
    line: integer('line').notNull(),
    ok: boolean('ok').notNull(),
    text: text('text').notNull(),
  },
  (t) => [primaryKey({ columns: [t.batchId, t.line] })],
);

export type GatewayFileRow = typeof gatewayFiles.$inferSelect;
export type GatewayBatchRow = typeof gatewayBatches.$inferSelect;
