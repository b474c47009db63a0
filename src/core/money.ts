/**
 * Money as the gateway counts it: nano-USD (1e-9 USD) integers, so that sums stay exact. Shared by
 * the data plane (costs of requests) and the management plane (budgets, usage reports); no
 * framework, no store.
 */

/** nano-USD → a plain decimal string in USD (`"0.000123"`, never exponent notation). */
export const formatUsd = (nano: number | bigint): string => {
  const n = BigInt(nano);
  const neg = n < 0n;
  const abs = neg ? -n : n;
  const whole = abs / 1_000_000_000n;
  const frac = (abs % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
};
