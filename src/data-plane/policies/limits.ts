import { GatewayError } from '../../core/errors.ts';
import { describeError, log } from '../../core/log.ts';
import type { CounterAdd, Counters, Refused } from '../../governance/counters.ts';
import { budgetCounterKey, budgetCounterTtlMs, MINUTE, minuteWindow, periodBounds, secondsUntil } from '../../governance/periods.ts';
import type { BudgetSnapshot } from '../../propagation/snapshot.ts';
import { costNanoUsd } from '../../pipeline/cost.ts';
import type { AdmissionPolicy } from '../../pipeline/admit.ts';
import type { Hold, RequestContext } from '../../pipeline/context.ts';
import { reservedInput, reservedOutput, type SettlementPolicy } from '../../pipeline/settle.ts';

/**
 * Rate limits (`rate-limit` setting) and budgets, admitted in ONE atomic check-and-reserve on the
 * shared counters (in process, or one Redis script call):
 *
 * - requests per minute: +1 in the current one-minute window (UTC, fixed windows);
 * - tokens per minute: the input bound (the request body's upper-bound token count:
 *   governance/token-bound.ts) plus the requested maximum output (`max_tokens` and kin; none → 0)
 *   is reserved in the window and corrected to the upstream's usage at settlement; a request whose
 *   estimate alone exceeds the limit passes only in an empty window;
 * - budgets (the project's, and those of the calling key): the catalog prices × (input bound +
 *   maximum output: the request's, else the model's `maxOutputTokens`) in nano-USD is reserved
 *   when it fits under the limit and corrected to the exact cost at settlement. Reservations never
 *   pass the limit, so concurrent requests overshoot it by at most what one request's real cost
 *   exceeds its reservation.
 *
 * An MCP call (no plan: no model, no tokens, no price) counts one request per minute and nothing else.
 *
 * A stream that ended early is settled at the usage seen so far (pipeline/settle.ts); when the
 * upstream reported none, every hold stays at its reservation.
 *
 * When the counters fail (Redis unreachable), `onError` decides: `closed` (default) refuses
 * requests of projects that have limits with 503 `limits_unavailable`; `open` serves them
 * unlimited. Either way it is logged once per interval, not per request.
 */

export type OnCounterError = 'open' | 'closed';

export interface LimitsOptions {
  counters: Counters;
  onError: OnCounterError;
  now?: () => number;
}

const rateLimited = (what: string, retryAfterSeconds: number): GatewayError =>
  new GatewayError({
    kind: 'rate_limit',
    errorCode: 'rate_limit_exceeded',
    message: `Rate limit reached: ${what}. Retry after ${retryAfterSeconds} s.`,
    retryAfterSeconds,
    retryable: false,
  });

const budgetExceeded = (b: BudgetSnapshot, retryAfterSeconds: number | undefined): GatewayError =>
  new GatewayError({
    kind: 'rate_limit',
    errorCode: 'budget_exceeded',
    message: `The budget '${b.name}' is exhausted${retryAfterSeconds === undefined ? '' : `; it resets in ${retryAfterSeconds} s`}.`,
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    retryable: false,
  });

const countersDown = (): GatewayError =>
  new GatewayError({
    kind: 'unavailable',
    errorCode: 'limits_unavailable',
    message: 'Rate limits and budgets cannot be checked right now; try again shortly.',
    retryAfterSeconds: 1,
  });

type Refusal = (now: number) => GatewayError;

export const limitsPolicies = (o: LimitsOptions): { admit: AdmissionPolicy; settle: SettlementPolicy } => {
  const now = o.now ?? Date.now;
  const failed = (e: unknown): GatewayError | undefined => {
    log.every(
      'limits-counters',
      'error',
      `the shared counters failed; rate limits and budgets are ${o.onError === 'open' ? 'not enforced (GATEWAY_LIMITS_ON_REDIS_ERROR=open)' : 'refusing requests (GATEWAY_LIMITS_ON_REDIS_ERROR=closed)'}`,
      { error: describeError(e) },
      10_000,
    );
    return o.onError === 'open' ? undefined : countersDown();
  };

  const admit: AdmissionPolicy = {
    name: 'limits',
    admit(ctx) {
      const key = ctx.key;
      const plan = ctx.plan;
      if (!key) return undefined;
      const project = key.project;
      const rl = project.rateLimit;
      // Without a plan (an MCP call: no model, no tokens, no price) only requests per minute count.
      let budgets: BudgetSnapshot[] | undefined;
      if (plan) {
        for (const b of project.budgets) {
          if (b.apiKeyId !== null && b.apiKeyId !== key.id) continue;
          budgets ??= [];
          budgets.push(b);
        }
      }
      if (!rl && !budgets) return undefined;
      const t = now();
      const entries: CounterAdd[] = [];
      const refusals: Refusal[] = [];
      const holds: Hold[] = [];
      const inputEstimate = reservedInput(ctx);
      if (rl) {
        const win = minuteWindow(t);
        const scope = rl.per === 'project' ? `p:${project.id}` : `k:${key.id}`;
        if (rl.requestsPerMinute !== undefined) {
          entries.push({ key: `gw:rl:${scope}:r:${win.start}`, add: 1, limit: rl.requestsPerMinute, ttlMs: 2 * MINUTE });
          refusals.push((n) => rateLimited(`${rl.requestsPerMinute} requests per minute`, secondsUntil(win.end, n)));
        }
        if (rl.tokensPerMinute !== undefined && plan) {
          const k = `gw:rl:${scope}:t:${win.start}`;
          const reserved = inputEstimate + (ctx.maxOutputTokens ?? 0);
          entries.push({ key: k, add: reserved, limit: rl.tokensPerMinute, ttlMs: 2 * MINUTE, orEmpty: true });
          refusals.push((n) => rateLimited(`${rl.tokensPerMinute} tokens per minute`, secondsUntil(win.end, n)));
          holds.push({ key: k, reserved, measure: 'tokens' });
        }
      }
      if (budgets && plan) {
        const maxOut = reservedOutput(ctx);
        const cost = costNanoUsd({ inputTokens: inputEstimate, outputTokens: maxOut }, plan.catalog.prices);
        for (const b of budgets) {
          const k = budgetCounterKey(b.id, b.period, t);
          entries.push({ key: k, add: cost, limit: b.limitNanoUsd, ttlMs: budgetCounterTtlMs(b.period, t) });
          refusals.push((n) => {
            const end = periodBounds(b.period, n).end;
            return budgetExceeded(b, end === null ? undefined : secondsUntil(end, n));
          });
          holds.push({ key: k, reserved: cost, measure: 'cost' });
        }
      }
      const verdict = (r: Refused | undefined): GatewayError | undefined => {
        if (r) return (refusals[r.index] as Refusal)(now());
        (ctx as RequestContext).holds = holds;
        return undefined;
      };
      let result: ReturnType<Counters['tryAdd']>;
      try {
        result = o.counters.tryAdd(entries);
      } catch (e) {
        return failed(e);
      }
      return result instanceof Promise ? result.then(verdict, failed) : verdict(result);
    },
  };

  const settle: SettlementPolicy = {
    name: 'limits',
    settle(ctx, _outcome, s) {
      const holds = ctx.holds;
      if (!holds || holds.length === 0 || s.atReservation) return;
      const corrections = holds.map((h) => ({ key: h.key, delta: (h.measure === 'tokens' ? s.totalTokens : s.costNanoUsd) - h.reserved }));
      const done = o.counters.adjust(corrections);
      if (done instanceof Promise)
        done.catch((e: unknown) =>
          log.every('limits-settle', 'error', 'correcting a rate-limit or budget reservation failed', { error: describeError(e) }, 10_000),
        );
    },
  };
  return { admit, settle };
};
