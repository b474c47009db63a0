import type { Usage } from '../canonical/types.ts';
import type { Prices } from '../propagation/snapshot.ts';

/**
 * Cost in nano-USD (1e-9 USD), an integer so that sums stay exact. Prices are USD per million
 * tokens, so tokens × price × 1000 is nano-USD. Cached reads and cache writes are priced apart
 * from the rest of the input.
 */
export const costNanoUsd = (usage: Usage, prices: Prices): number => {
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const plainInput = Math.max(0, usage.inputTokens - cached - written);
  return Math.round(
    (plainInput * prices.input + cached * prices.cached + written * prices.cacheWrite + usage.outputTokens * prices.output) * 1000,
  );
};

/** nano-USD → a plain decimal string in USD (`"0.000123"`, never exponent notation). */
export const formatUsd = (nano: number | bigint): string => {
  const n = BigInt(nano);
  const neg = n < 0n;
  const abs = neg ? -n : n;
  const whole = abs / 1_000_000_000n;
  const frac = (abs % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
};
