import type { Attributes, Counter, Histogram } from '@opentelemetry/api';
import type { RequestContext } from '../data-plane/pipeline/context.ts';
import type { RequestObserver } from '../data-plane/pipeline/observe.ts';
import { operationOf, providerNameOf } from './genai.ts';

/**
 * The request metrics of contract §8 as a request observer. Label values are bounded: a model is
 * its name only when the request resolved to a model of the project's catalog (unknown names are
 * `other`), and no label takes more than MAX_LABEL_VALUES distinct values (later ones are
 * `other`); no key, user or request id is ever a label. With the SDK's cardinality limit
 * (telemetry/metrics.ts) this bounds every metric's series whatever the traffic.
 */

export const MAX_LABEL_VALUES = 200;
export const OTHER = 'other';

export interface Instruments {
  tokenUsage: Histogram;
  duration: Histogram;
  timeToFirstToken: Histogram;
  timePerOutputToken: Histogram;
  requests: Counter;
  attempts: Counter;
  cost: Counter;
  mcpCalls: Counter;
  refusals: Counter;
  cache: Counter;
  costSaved: Counter;
}

/** Error codes of the gateway's own policies (limits, budgets, guardrails) counted as refusals. */
const REFUSALS = new Set(['rate_limit_exceeded', 'budget_exceeded', 'guardrail_blocked', 'limits_unavailable']);

/** A label's values, first come, up to MAX_LABEL_VALUES; the rest are `other`. */
class Bounded {
  readonly #seen = new Set<string>();
  of(v: string): string {
    if (this.#seen.has(v)) return v;
    if (this.#seen.size >= MAX_LABEL_VALUES) return OTHER;
    this.#seen.add(v);
    return v;
  }
}

const outcomeOf = (status: number, errorKind: string | undefined, retryable: boolean): string => {
  if (errorKind === undefined) return 'ok';
  if (errorKind === 'timeout') return 'timeout';
  return retryable && status !== 499 ? 'retryable_error' : 'error';
};

export const metricsObserver = (m: Instruments): RequestObserver => {
  const models = new Bounded();
  const projects = new Bounded();
  const servers = new Bounded();
  const model = (ctx: RequestContext): string => (ctx.plan && ctx.model !== undefined ? models.of(ctx.model) : OTHER);
  const project = (ctx: RequestContext): string => (ctx.key ? projects.of(`${ctx.key.customerId}/${ctx.key.projectId}`) : OTHER);
  /** Attribute sets of the token histogram, reused per (operation, model, provider). */
  const tokenAttrs = new Map<string, { input: Attributes; output: Attributes }>();

  return {
    name: 'metrics',
    attemptEnd(ctx, view, attempt, error) {
      if (ctx.mcp) return;
      m.attempts.add(1, { 'gen_ai.provider.name': providerNameOf(view.target.connection.provider), outcome: outcomeOf(attempt.status, error?.kind, error?.retryable ?? false) });
    },
    firstByte(ctx, ms) {
      if (ctx.mcp) return;
      m.timeToFirstToken.record(ms / 1000, { 'gen_ai.operation.name': operationOf(ctx.endpoint), 'gen_ai.request.model': model(ctx) });
    },
    finish(ctx, outcome, s) {
      const seconds = (performance.now() - ctx.t0) / 1000;
      const proj = project(ctx);
      const error = outcome.error;
      if (ctx.mcp) {
        m.mcpCalls.add(1, { server: servers.of(ctx.mcp.server), outcome: error ? (error.kind === 'timeout' ? 'timeout' : 'error') : 'ok' });
        return;
      }
      const op = operationOf(ctx.endpoint);
      const mod = model(ctx);
      const last = outcome.attempts?.at(-1);
      const provider = last ? providerNameOf(last.provider) : OTHER;
      m.requests.add(1, { status_code: outcome.status, 'gen_ai.operation.name': op, 'gen_ai.request.model': mod, 'gen_ai.provider.name': provider, project: proj });
      const base = { 'gen_ai.operation.name': op, 'gen_ai.request.model': mod, 'gen_ai.provider.name': provider };
      m.duration.record(seconds, error ? { ...base, 'error.type': error.errorCode } : base);
      if (error && REFUSALS.has(error.errorCode)) m.refusals.add(1, { reason: error.errorCode, project: proj });
      if (s.inputTokens > 0 || s.outputTokens > 0) {
        const k = `${op}\u0000${mod}\u0000${provider}`;
        let a = tokenAttrs.get(k);
        if (!a) {
          a = { input: { ...base, 'gen_ai.token.type': 'input' }, output: { ...base, 'gen_ai.token.type': 'output' } };
          tokenAttrs.set(k, a);
        }
        m.tokenUsage.record(s.inputTokens, a.input);
        m.tokenUsage.record(s.outputTokens, a.output);
      }
      if (s.costNanoUsd > 0) m.cost.add(s.costNanoUsd / 1e9, { project: proj, 'gen_ai.request.model': mod });
      if (outcome.cache !== undefined) {
        m.cache.add(1, { outcome: outcome.cache, project: proj });
        if (s.costSavedNanoUsd > 0) m.costSaved.add(s.costSavedNanoUsd / 1e9, { project: proj, 'gen_ai.request.model': mod });
      }
      if (ctx.stream && outcome.ttfbMs !== undefined && s.outputTokens > 1) {
        const generating = seconds - outcome.ttfbMs / 1000;
        if (generating > 0) m.timePerOutputToken.record(generating / (s.outputTokens - 1), base);
      }
    },
  };
};
