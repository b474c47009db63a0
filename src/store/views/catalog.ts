import type { AiModelRow } from '../schema/index.ts';

/**
 * A catalog row as the data planes' configuration document lists it (propagation/load.ts); the
 * management API's view (`modelView`) is this with `mode` as a string and `updatedAt`. Written once
 * here so the two cannot drift.
 */
export const catalogEntry = (m: AiModelRow) => ({
  id: m.id,
  model: m.model,
  provider: m.provider,
  mode: m.mode,
  capabilities: m.capabilities,
  contextWindow: m.contextWindow,
  maxOutputTokens: m.maxOutputTokens,
  inputPricePerMillion: m.inputPricePerMillion,
  outputPricePerMillion: m.outputPricePerMillion,
  cachedPricePerMillion: m.cachedPricePerMillion,
  cacheWritePricePerMillion: m.cacheWritePricePerMillion,
  isEnabled: m.isEnabled,
  createdAt: m.createdAt.toISOString(),
});

/** A catalog row as the management API answers it (AIModel, api/ops/catalog.ts): `mode` is '' when unset. */
export const modelView = (m: AiModelRow) => ({ ...catalogEntry(m), mode: m.mode ?? '', updatedAt: m.updatedAt.toISOString() });
