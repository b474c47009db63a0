import type { Usage } from '../canonical/types.ts';
import { describeError, log } from '../core/log.ts';
import { inputTokenBound } from '../governance/token-bound.ts';
import { costNanoUsd } from './cost.ts';
import type { Outcome, RequestContext } from './context.ts';

/** Token counts as the record keeps them, and the cost they come to. */
export interface Settlement {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  costNanoUsd: number;
  /** A response-cache hit: what the answer would have cost (costNanoUsd is 0); 0 otherwise. */
  costSavedNanoUsd: number;
  /** Whether a reported count had to be clamped or rounded to fit its column. */
  adjusted: boolean;
  /**
   * A stream that ended early without any usage reported: charged at its reservation (the counts
   * above are the budgets' reservation), so admission holds stand as reserved.
   */
  atReservation: boolean;
}

/**
 * Settlement: after the answer went out (for a stream, once it ended), the request's usage and
 * cost are final (a stream that ended early: see `chargedUsage`). A policy charges them (budgets,
 * quotas); it runs once per request, success or failure, must not throw (an exception is logged
 * and ignored) and must not block.
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

/** The input a request reserves: the upper-bound token count of its body (governance/token-bound.ts). */
export const reservedInput = (ctx: Readonly<RequestContext>): number => inputTokenBound(ctx.bodyText ?? '');

/** The output a budget reserves: the request's maximum (`max_tokens` and kin), else the model's. */
export const reservedOutput = (ctx: Readonly<RequestContext>): number => ctx.maxOutputTokens ?? ctx.plan?.catalog.maxOutputTokens ?? 0;

/**
 * Whether the upstream was sent the request and the client then went away before the answer was
 * complete (contract §14, client abort): the provider bills what it received, so the request is
 * charged, never $0.
 */
const abandoned = (outcome: Readonly<Outcome>): boolean =>
  outcome.error?.errorCode === 'client_closed' && (outcome.attempts?.length ?? 0) > 0;

/**
 * The usage a request is charged (contract §14). A finished request: what the upstream reported
 * (none → 0). A request the client abandoned after it was sent, or a stream that ended early
 * (`outcome.partial`): the usage the upstream reported so far, its output raised to what was
 * streamed (one token per character, up to the reserved output) — e.g. an Anthropic-family
 * stream's `message_start` counts the input and one output token; when the upstream reported
 * nothing yet (an OpenAI-family stream reports usage at its end; a non-streamed answer never came),
 * the input of the request (its token bound) and the output streamed: never 0, and never the whole
 * reservation when part of the answer was received. A stream that broke before anything reached
 * the client and reported nothing stays at its reservation (`atReservation`, budgets keep their holds).
 */
const chargedUsage = (ctx: Readonly<RequestContext>, outcome: Readonly<Outcome>): { usage: Usage | undefined; atReservation: boolean } => {
  const u = outcome.usage;
  const partial = outcome.partial;
  const gone = abandoned(outcome);
  if (!partial && !gone) return { usage: u, atReservation: false };
  const chars = partial?.outputChars ?? 0;
  if (!u && !gone && chars === 0)
    return { usage: { inputTokens: reservedInput(ctx), outputTokens: reservedOutput(ctx) }, atReservation: true };
  return { usage: streamedUsage(ctx, u, chars), atReservation: false };
};

/**
 * What an upstream stream that ended early produced, as it is charged: the usage it reported so
 * far with its output raised to what was streamed (one token per character, up to the reserved
 * output), or, with nothing reported, the request's input (its token bound) and the output streamed.
 * Also the share of a broken attempt continued by another target (data-plane/continuation.ts).
 */
export const streamedUsage = (ctx: Readonly<RequestContext>, u: Usage | undefined, chars: number): Usage => {
  const maxOut = reservedOutput(ctx);
  const streamed = maxOut > 0 ? Math.min(chars, maxOut) : chars;
  if (!u) return { inputTokens: reservedInput(ctx), outputTokens: streamed };
  return streamed > u.outputTokens ? { ...u, outputTokens: streamed } : u;
};

export const settlementOf = (ctx: RequestContext, outcome: Readonly<Outcome>): Settlement => {
  const { usage: u, atReservation } = chargedUsage(ctx, outcome);
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
  const cost = u && ctx.plan ? costNanoUsd(totals, ctx.plan.catalog.prices) : 0;
  // A cached answer is served without an upstream call: it costs nothing and saves what it cost.
  if (outcome.cache === 'hit') return { ...totals, costNanoUsd: 0, costSavedNanoUsd: cost, adjusted, atReservation };
  return { ...totals, costNanoUsd: cost, costSavedNanoUsd: 0, adjusted, atReservation };
};

/** Computes the settlement and runs the settlement policies. */
export const settle = (policies: readonly SettlementPolicy[], ctx: RequestContext, outcome: Outcome): Settlement => {
  const s = settlementOf(ctx, outcome);
  for (const p of policies) {
    try {
      p.settle(ctx, outcome, s);
    } catch (e) {
      log.every(`settle-${p.name}`, 'error', 'a settlement policy failed', { policy: p.name, error: describeError(e) });
    }
  }
  return s;
};
