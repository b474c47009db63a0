import { openContext, type Outcome } from '../../src/pipeline/context.ts';
import { Observers } from '../../src/pipeline/observe.ts';
import type { Settlement } from '../../src/pipeline/settle.ts';
import { FULL_RETENTION } from '../../src/governance/setting-values.ts';
import type { CatalogEntry, KeySnapshot, ProjectSnapshot, RouteSnapshot } from '../../src/propagation/snapshot.ts';
import { startMetrics } from '../../src/telemetry/metrics.ts';

/**
 * `metrics_cpu_us_per_req`: CPU µs the metrics observer adds to one request (contract §8 metrics
 * with the OTel SDK): the events a chat request reports (one attempt, finish) through the same
 * Observers the pipeline uses, timed in this process over many requests with 20 models and 5
 * projects in rotation, after a warm-up. The gateway's own per-request CPU (`cpu_us_per_req`)
 * includes it; this isolates it.
 */

const catalog = (model: string): CatalogEntry => ({
  id: model,
  model,
  provider: 'openai',
  mode: 'chat',
  capabilities: ['chat'],
  contextWindow: 128000,
  maxOutputTokens: 4096,
  prices: { input: 0.15, output: 0.6, cached: 0.075, cacheWrite: 0 },
  isEnabled: true,
  created: 0,
});

const project = (i: number): ProjectSnapshot => ({
  id: `p${i}`,
  customerUuid: 'c',
  customerId: 'bench',
  projectId: `project-${i}`,
  models: new Map(),
  routes: new Map(),
  members: new Set(),
  modelListJson: '',
  rateLimit: undefined,
  traceContent: false,
  retention: FULL_RETENTION,
  responseCache: undefined,
  breaker: undefined,
  midStreamFallback: false,
  fallback: [],
  budgets: [],
  guardrails: { input: [], output: [] },
  byok: { project: new Map(), users: new Map() },
  a2aAgents: new Map(),
});

export const measureMetricsCost = async (requests = 50_000, tenantLabels = true): Promise<number> => {
  const metrics = await startMetrics(
    {
      protocol: 'http/json',
      tracesUrl: undefined,
      headers: {},
      serviceName: 'bench',
      spanHeaders: [],
      metrics: { port: 0, host: '127.0.0.1', tenantLabels, url: undefined, intervalMs: 60_000 },
    },
    'bench',
  );
  const observers = new Observers([metrics.observer]);
  const keys: KeySnapshot[] = Array.from({ length: 5 }, (_, i) => ({
    id: `k${i}`,
    customerId: 'bench',
    projectId: `project-${i}`,
    expiresAt: null,
    project: project(i),
  }));
  const models = Array.from({ length: 20 }, (_, i) => `model-${i}`);
  const route: RouteSnapshot = {
    id: 'r',
    model: 'm',
    tiers: [],
    timeoutMs: 1000,
    maxRetries: 0,
    active: true,
    fallback: [],
    breaker: undefined,
    midStreamFallback: false,
    strategy: 'ordered',
  };
  const target = { connection: { name: 'conn', provider: 'openai' }, upstreamModel: 'up' };
  const view = { target, call: { url: 'https://api.openai.com/v1/chat/completions' } };
  const s: Settlement = {
    inputTokens: 120,
    outputTokens: 40,
    totalTokens: 160,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    costNanoUsd: 42_000,
    costSavedNanoUsd: 0,
    adjusted: false,
    atReservation: false,
  };
  const run = (n: number): void => {
    for (let i = 0; i < n; i++) {
      const ctx = openContext('/v1/chat/completions', { requestId: 'r', clientRequestId: undefined }, observers);
      const model = models[i % models.length] ?? 'm';
      ctx.key = keys[i % keys.length];
      ctx.model = model;
      ctx.plan = { route, catalog: catalog(model) };
      const attempt = { connection: 'conn', provider: 'openai', upstreamModel: 'up', status: 200, ms: 5 };
      observers.attemptStart(ctx, view);
      observers.attemptEnd(ctx, view, attempt, undefined);
      const outcome: Outcome = { status: 200, attempts: [attempt], usage: { inputTokens: 120, outputTokens: 40 } };
      observers.finish(ctx, outcome, s);
    }
  };
  const baseline = (n: number): void => {
    // The same objects without the observer: only what the observer adds is counted.
    for (let i = 0; i < n; i++) {
      const ctx = openContext('/v1/chat/completions', { requestId: 'r', clientRequestId: undefined });
      const model = models[i % models.length] ?? 'm';
      ctx.key = keys[i % keys.length];
      ctx.model = model;
      ctx.plan = { route, catalog: catalog(model) };
      const attempt = { connection: 'conn', provider: 'openai', upstreamModel: 'up', status: 200, ms: 5 };
      const outcome: Outcome = { status: 200, attempts: [attempt], usage: { inputTokens: 120, outputTokens: 40 } };
      ctx.observers.finish(ctx, outcome, s);
    }
  };
  const cpu = (f: () => void): number => {
    const t0 = process.cpuUsage();
    f();
    const d = process.cpuUsage(t0);
    return d.user + d.system;
  };
  run(5_000);
  baseline(5_000);
  const withMetrics = cpu(() => run(requests));
  const without = cpu(() => baseline(requests));
  await metrics.shutdown();
  return Math.max(0, (withMetrics - without) / requests);
};

if (import.meta.main) console.log(JSON.stringify({ metrics_cpu_us_per_req: Math.round((await measureMetricsCost()) * 1000) / 1000 }));
