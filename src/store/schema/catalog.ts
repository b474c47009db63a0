import { sql } from 'drizzle-orm';
import { boolean, doublePrecision, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, idColumn, updatedAt } from './columns.ts';

/** The model catalog (AIModel). `model` is the public id clients send. */
export const aiModels = pgTable(
  'ai_models',
  {
    id: idColumn(),
    model: text('model').notNull(),
    provider: text('provider').notNull(),
    mode: text('mode'),
    capabilities: jsonb('capabilities').$type<string[]>().notNull().default([]),
    contextWindow: integer('context_window').notNull().default(0),
    maxOutputTokens: integer('max_output_tokens').notNull().default(0),
    inputPricePerMillion: doublePrecision('input_price_per_million').notNull().default(0),
    outputPricePerMillion: doublePrecision('output_price_per_million').notNull().default(0),
    cachedPricePerMillion: doublePrecision('cached_price_per_million').notNull().default(0),
    cacheWritePricePerMillion: doublePrecision('cache_write_price_per_million').notNull().default(0),
    isEnabled: boolean('is_enabled').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex('ai_models_model_provider_active').on(t.model, t.provider).where(sql`${t.deletedAt} is null`)],
);

export type AiModelRow = typeof aiModels.$inferSelect;
