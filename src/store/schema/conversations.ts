import { index, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import type { JsonObject } from '../../canonical/types.ts';
import { createdAt, instant } from './columns.ts';

/**
 * Server-side conversation state (contract §2): stored Responses and Messages threads, per project
 * (the project's row id; no foreign key, so that a project's deletion does not wait on them —
 * they expire). `body` is the whole stored conversation; `expires_at` is creation time plus
 * GATEWAY_RESPONSE_RETENTION; expired rows are never read and are purged periodically.
 */
export const storedConversations = pgTable(
  'stored_conversations',
  {
    projectId: uuid('project_id').notNull(),
    id: text('id').notNull(),
    kind: text('kind').notNull(),
    body: jsonb('body').$type<JsonObject>().notNull(),
    createdAt: createdAt(),
    expiresAt: instant('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.id] }), index('stored_conversations_expiry').on(t.expiresAt)],
);

/** Items of stored responses by item id (for `item_reference`); the first response that introduced an id owns it. */
export const storedConversationItems = pgTable(
  'stored_conversation_items',
  {
    projectId: uuid('project_id').notNull(),
    itemId: text('item_id').notNull(),
    conversationId: text('conversation_id').notNull(),
    item: jsonb('item').$type<JsonObject>().notNull(),
    expiresAt: instant('expires_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.itemId] }),
    index('stored_conversation_items_owner').on(t.projectId, t.conversationId),
    index('stored_conversation_items_expiry').on(t.expiresAt),
  ],
);
