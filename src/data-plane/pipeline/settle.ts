import type { Usage } from '../../canonical/types.ts';
import { describeError, log } from '../../core/log.ts';
import { costNanoUsd } from '../cost.ts';
import type { Outcome, RequestContext } from './context.ts';

/** Token counts as the record keeps them, and the cost they come to. */
export interface Settlement {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  costNanoUsd: number;
  /** Whether a reported count had to be clamped or rounded to fit its column. */
  adjusted: boolean;
}

/**
 * Settlement: after the answer went out (for a stream, once it ended), the request's usage and
 * cost are final. A policy charges them (budgets, quotas); it runs once per request, success or
 * failure, must not throw (an exception is logged and ignored) and must not block.
 */
export interface SettlementPolicy {
  readonly name: string;
  settle(ctx: Readonly<RequestContext>, outcome: Readonly<Outcome>, settlement: Readonly<Settlement>): void;
}

const INT4_MAX = 2_147_483_647;

/**
 * A token count as its integer column holds it: negative or NaN → 0, fractions rounded, capped at
 * the column's maximum. Cheap enough for every request; the record is flagged when it changed.
 */
const tokens = (n: number | undefined): number => {
  if (n === undefined || (Number.isInteger(n) && n >= 0 && n <= INT4_MAX)) return n ?? 0;
  return n > 0 ? Math.min(Math.round(n), INT4_MAX) : 0;
};

export const settlementOf = (ctx: RequestContext, u: Usage | undefined): Settlement => {
  const inputTokens = tokens(u?.inputTokens);
  const outputTokens = tokens(u?.outputTokens);
  const cachedInputTokens = tokens(u?.cachedInputTokens);
  const cacheWriteTokens = tokens(u?.cacheWriteTokens);
  const sum = inputTokens + outputTokens;
  const adjusted =
    u !== undefined &&
    (inputTokens !== u.inputTokens ||
      outputTokens !== u.outputTokens ||
      cachedInputTokens !== (u.cachedInputTokens ?? 0) ||
      cacheWriteTokens !== (u.cacheWriteTokens ?? 0) ||
      sum > INT4_MAX);
  const totals = { inputTokens, outputTokens, totalTokens: Math.min(sum, INT4_MAX), cachedInputTokens, cacheWriteTokens };
  return { ...totals, costNanoUsd: u && ctx.plan ? costNanoUsd(totals, ctx.plan.catalog.prices) : 0, adjusted };
};

/** Computes the settlement and runs the settlement policies. */
export const settle = (policies: readonly SettlementPolicy[], ctx: RequestContext, outcome: Outcome): Settlement => {
  const s = settlementOf(ctx, outcome.usage);
  for (const p of policies) {
    try {
      p.settle(ctx, outcome, s);
    } catch (e) {
      log.every(`settle-${p.name}`, 'error', 'a settlement policy failed', { policy: p.name, error: describeError(e) });
    }
  }
  return s;
};
