import type { RequestContext } from '../pipeline/context.ts';
import type { Histogram, Sum } from './aggregate.ts';
import type { RequestObserver } from '../pipeline/observe.ts';
import { apiOf, operationOf, providerNameOf } from './genai.ts';

/**
 * The request metrics of contract §8 as a request observer. Label values are bounded: a model is
 * its name only when the request resolved to a model of the project's catalog (unknown names are
 * `other`), and no label takes more than MAX_LABEL_VALUES distinct values (later ones are
 * `other`); no key, user or request id is ever a label. With the SDK's cardinality limit
 * (telemetry/metrics.ts) this bounds every metric's series whatever the traffic. A series is named
 * by its label values joined (aggregate.ts); its attribute set is built once, when first seen.
 *
 * Everything is recorded at `finish`, from what the request holds then: the time to first token
 * too (a stream's `outcome.ttfbMs`, with the provider of the attempt that answered), so a
 * request costs one observer event (and one per upstream attempt).
 */

export const MAX_LABEL_VALUES = 200;
export const OTHER = 'other';
/**
 * The `project` label of every series with GATEWAY_METRICS_TENANT_LABELS=off: one value, so no
 * series names a customer or project and the series add up across tenants (a real value is
 * `customer/project`, always with a slash: this one is never a project's).
 */
export const TENANTS_HIDDEN = 'all';

export interface Instruments {
  tokenUsage: Histogram;
  duration: Histogram;
  serverDuration: Histogram;
  timeToFirstToken: Histogram;
  timePerOutputToken: Histogram;
  guardrailDuration: Histogram;
  requests: Sum;
  attempts: Sum;
  cost: Sum;
  mcpCalls: Sum;
  mcpDuration: Histogram;
  refusals: Sum;
  cache: Sum;
  costSaved: Sum;
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

/** `gen_ai.provider.name` of the requests counter for MCP calls (the upstream is an MCP server). */
const MCP_PROVIDER = 'mcp';

/** `gateway_api` and `gen_ai.provider.name` of an A2A call (the upstream is an agent), and its operation (GenAI agent conventions). */
const A2A = 'a2a';
const INVOKE_AGENT = 'invoke_agent';

/** A series key from label values (none of them holds the separator: they are bounded names). */
const K = '\u0000';

/** The `project` label of a request: `customer/project` (bounded), or TENANTS_HIDDEN for every request when tenant labels are off. */
const projectLabel = (tenantLabels: boolean): ((ctx: RequestContext) => string) => {
  if (!tenantLabels) return () => TENANTS_HIDDEN;
  const projects = new Bounded();
  return (ctx) => (ctx.key ? projects.of(`${ctx.key.customerId}/${ctx.key.projectId}`) : OTHER);
};

export const metricsObserver = (tenantLabels: boolean, m: Instruments): RequestObserver => {
  const models = new Bounded();
  const servers = new Bounded();
  const tools = new Bounded();
  const mcpMethods = new Bounded();
  const model = (ctx: RequestContext): string => (ctx.plan && ctx.model !== undefined ? models.of(ctx.model) : OTHER);
  const project = projectLabel(tenantLabels);

  return {
    name: 'metrics',
    attemptEnd(ctx, view, attempt, error) {
      if (ctx.mcp) return;
      const provider = providerNameOf(view.target.connection.provider);
      const outcome = outcomeOf(attempt.status, error?.kind, error?.retryable ?? false);
      m.attempts.add(1, provider + K + outcome, () => ({ 'gen_ai.provider.name': provider, outcome }));
    },
    finish(ctx, outcome, s) {
      const seconds = (performance.now() - ctx.t0) / 1000;
      const proj = project(ctx);
      const error = outcome.error;
      const status = outcome.status;
      const decisions = ctx.guardrails;
      // Kinds and outcomes are fixed sets: the series are bounded.
      if (decisions)
        for (const d of decisions) {
          const { provider: kind, action: outcome } = d;
          m.guardrailDuration.record(d.latencyMs / 1000, kind + K + outcome, () => ({ kind, outcome }));
        }
      if (ctx.mcp) {
        const server = servers.of(ctx.mcp.server);
        const result = error ? (error.kind === 'timeout' ? 'timeout' : 'error') : 'ok';
        m.mcpCalls.add(1, server + K + result, () => ({ server, outcome: result }));
        const method = mcpMethods.of(ctx.mcp.method);
        const tool = ctx.mcp.method === 'tools/call' && ctx.mcp.name !== undefined ? tools.of(ctx.mcp.name) : '';
        const errorType = error?.errorCode ?? '';
        m.mcpDuration.record(seconds, method + K + tool + K + errorType, () => ({
          'mcp.method.name': method,
          ...(tool ? { 'gen_ai.tool.name': tool } : {}),
          ...(errorType ? { 'error.type': errorType } : {}),
        }));
        const op = operationOf(ctx.endpoint, method);
        m.requests.add(1, `${status}${K}mcp${K}${op}${K}${proj}`, () => ({
          status_code: status,
          gateway_api: 'mcp',
          'gen_ai.operation.name': op,
          'gen_ai.request.model': OTHER,
          'gen_ai.provider.name': MCP_PROVIDER,
          project: proj,
        }));
        return;
      }
      if (ctx.agent) {
        // An A2A call: its own API and operation; the JSON-RPC method is no model, the agent no provider.
        const base = INVOKE_AGENT + K + OTHER + K + A2A;
        const attrs = () => ({ 'gen_ai.operation.name': INVOKE_AGENT, 'gen_ai.request.model': OTHER, 'gen_ai.provider.name': A2A });
        m.requests.add(1, `${status}${K}${A2A}${K}${base}${K}${proj}`, () => ({
          status_code: status,
          gateway_api: A2A,
          ...attrs(),
          project: proj,
        }));
        const key = error ? base + K + error.errorCode : base;
        const durationAttrs = error ? () => ({ ...attrs(), 'error.type': error.errorCode }) : attrs;
        m.serverDuration.record(seconds, key, durationAttrs);
        if (error && REFUSALS.has(error.errorCode))
          m.refusals.add(1, error.errorCode + K + proj, () => ({ reason: error.errorCode, project: proj }));
        return;
      }
      const op = operationOf(ctx.endpoint);
      const mod = model(ctx);
      const last = outcome.attempts?.at(-1);
      const provider = last ? providerNameOf(last.provider) : OTHER;
      const api = apiOf(ctx.endpoint, false);
      const base = op + K + mod + K + provider;
      const baseAttrs = () => ({ 'gen_ai.operation.name': op, 'gen_ai.request.model': mod, 'gen_ai.provider.name': provider });
      m.requests.add(1, `${status}${K}${api}${K}${base}${K}${proj}`, () => ({
        status_code: status,
        gateway_api: api,
        ...baseAttrs(),
        project: proj,
      }));
      if (error) {
        const key = base + K + error.errorCode;
        const attrs = () => ({ ...baseAttrs(), 'error.type': error.errorCode });
        m.duration.record(seconds, key, attrs);
        m.serverDuration.record(seconds, key, attrs);
      } else {
        m.duration.record(seconds, base, baseAttrs);
        m.serverDuration.record(seconds, base, baseAttrs);
      }
      const ttfb = ctx.stream ? outcome.ttfbMs : undefined;
      if (ttfb !== undefined) m.timeToFirstToken.record(ttfb / 1000, base, baseAttrs);
      if (error && REFUSALS.has(error.errorCode))
        m.refusals.add(1, error.errorCode + K + proj, () => ({ reason: error.errorCode, project: proj }));
      if (s.inputTokens > 0 || s.outputTokens > 0) {
        m.tokenUsage.record(s.inputTokens, `${base}${K}input`, () => ({ ...baseAttrs(), 'gen_ai.token.type': 'input' }));
        m.tokenUsage.record(s.outputTokens, `${base}${K}output`, () => ({ ...baseAttrs(), 'gen_ai.token.type': 'output' }));
      }
      const projModel = proj + K + mod;
      const projModelAttrs = () => ({ project: proj, 'gen_ai.request.model': mod });
      if (s.costNanoUsd > 0) m.cost.add(s.costNanoUsd / 1e9, projModel, projModelAttrs);
      const cache = outcome.cache;
      if (cache !== undefined) {
        m.cache.add(1, cache + K + proj, () => ({ outcome: cache, project: proj }));
        if (s.costSavedNanoUsd > 0) m.costSaved.add(s.costSavedNanoUsd / 1e9, projModel, projModelAttrs);
      }
      if (ttfb !== undefined && s.outputTokens > 1) {
        const generating = seconds - ttfb / 1000;
        if (generating > 0) m.timePerOutputToken.record(generating / (s.outputTokens - 1), base, baseAttrs);
      }
    },
  };
};
