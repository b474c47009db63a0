import { type DocumentBuild, perDocument, type SnapshotBuilder } from '../section.ts';

export interface Prices {
  /** USD per million tokens. */
  input: number;
  output: number;
  cached: number;
  cacheWrite: number;
}

export interface CatalogEntry {
  id: string;
  model: string;
  provider: string;
  mode: string | null;
  capabilities: readonly string[];
  contextWindow: number;
  maxOutputTokens: number;
  prices: Prices;
  isEnabled: boolean;
  /** Unix seconds. */
  created: number;
}

/** The catalog's entries by row id (what a project's model assignment names) and, enabled ones, by public model id (the first listed keeps an id). */
export const catalogOf = perDocument(
  ({ doc }: DocumentBuild): { byId: ReadonlyMap<string, CatalogEntry>; byModel: ReadonlyMap<string, CatalogEntry> } => {
    const byId = new Map<string, CatalogEntry>();
    const byModel = new Map<string, CatalogEntry>();
    for (const m of doc.catalog) {
      const entry: CatalogEntry = Object.freeze({
        id: m.id,
        model: m.model,
        provider: m.provider,
        mode: m.mode,
        capabilities: Object.freeze([...m.capabilities]),
        contextWindow: m.contextWindow,
        maxOutputTokens: m.maxOutputTokens,
        prices: Object.freeze({
          input: m.inputPricePerMillion,
          output: m.outputPricePerMillion,
          cached: m.cachedPricePerMillion,
          cacheWrite: m.cacheWritePricePerMillion,
        }),
        isEnabled: m.isEnabled,
        created: Math.floor(Date.parse(m.createdAt) / 1000),
      });
      byId.set(m.id, entry);
      if (m.isEnabled && !byModel.has(m.model)) byModel.set(m.model, entry);
    }
    return { byId, byModel };
  },
);

export interface CatalogPart {
  /** Enabled catalog entries, by public model id. */
  catalog: ReadonlyMap<string, CatalogEntry>;
}

/** The model catalog (not scoped: the platform's). */
export const catalogSnapshot = {
  global: perDocument((d): CatalogPart => ({ catalog: catalogOf(d).byModel })),
} satisfies SnapshotBuilder;
