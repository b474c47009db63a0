import type { Usage } from '../canonical/types.ts';
import type { Prices } from '../propagation/snapshot.ts';

/** A token count for pricing: never negative, never NaN. */
const count = (n: number | undefined): number => (n !== undefined && n > 0 ? n : 0);

/**
 * Cost in nano-USD (1e-9 USD), an integer so that sums stay exact. Prices are USD per million
 * tokens, so tokens × price × 1000 is nano-USD. Cached reads and cache writes are priced apart
 * from the rest of the input. Negative or NaN counts from an upstream count as 0, so a cost is
 * never negative; it is capped at the largest exact integer.
 */
export const costNanoUsd = (usage: Usage, prices: Prices): number => {
  const cached = count(usage.cachedInputTokens);
  const written = count(usage.cacheWriteTokens);
  const plainInput = Math.max(0, count(usage.inputTokens) - cached - written);
  const nano = Math.round(
    (plainInput * prices.input + cached * prices.cached + written * prices.cacheWrite + count(usage.outputTokens) * prices.output) * 1000,
  );
  return nano > 0 ? Math.min(nano, Number.MAX_SAFE_INTEGER) : 0;
};
