import { describeError, log } from '../core/log.ts';
import type { RequestObserver } from '../pipeline/observe.ts';
import type { Metrics, MetricSources } from './metrics.ts';
import type { TelemetryConfig } from '../config/telemetry.ts';
import { startTracing, type Telemetry, type Tracing } from './tracing.ts';

/**
 * Telemetry whose export target can change while the process serves: a separate data plane's
 * (app-data.ts), which exports where its service account's `dataExports.telemetry` says, and
 * follows the management plane when that changes (data-plane/remote/exports.ts). The embedded
 * gateway keeps startTelemetry (tracing.ts), fixed by the OTEL_* variables.
 *
 * Its observers are fixed at start (the request path's Observers are), so they delegate: tracing to
 * the current tracer provider (a request begun under a replaced one ends its spans on it), metrics
 * to the metrics, started on the first need (the listener, or an OTLP metrics URL). Nothing of the
 * OpenTelemetry SDK is loaded until something is exported or scraped.
 */

/** How long a replaced tracer provider lives on for the requests that began under it. */
const RETIRE_MS = 60_000;

export interface SwitchableTelemetry extends Telemetry {
  /** Exports as `cfg` says from now on (traces: a new provider and exporter; metrics: a new OTLP export). */
  reconfigure(cfg: TelemetryConfig): Promise<void>;
}

export const startSwitchableTelemetry = async (cfg: TelemetryConfig, version: string): Promise<SwitchableTelemetry> => {
  let tracing = await startTracing(cfg, version);
  /** The newest tracing observer: ends the spans of requests begun before tracing was switched off. */
  let last = tracing?.observer;
  const retired = new Set<Tracing>();
  const startMetrics = async (c: TelemetryConfig): Promise<Metrics> => (await import('./metrics.ts')).startMetrics(c, version);
  let metrics = cfg.metrics.port !== 0 || cfg.metrics.url ? await startMetrics(cfg) : undefined;
  let sources: MetricSources = {};
  let queue = Promise.resolve();

  // A request's spans (ctx.trace) end on the observer of now, or on the last one when tracing went off.
  const traced = (): RequestObserver | undefined => tracing?.observer ?? last;
  const tracingObserver: RequestObserver = {
    name: 'tracing',
    start(ctx) {
      tracing?.observer.start?.(ctx);
    },
    attemptStart(ctx, view) {
      if (ctx.trace) traced()?.attemptStart?.(ctx, view);
    },
    attemptEnd(ctx, view, attempt, error) {
      if (ctx.trace) traced()?.attemptEnd?.(ctx, view, attempt, error);
    },
    finish(ctx, outcome, s) {
      if (ctx.trace) traced()?.finish?.(ctx, outcome, s);
    },
  };
  const metricsObserver: RequestObserver = {
    name: 'metrics',
    attemptEnd(ctx, view, attempt, error) {
      metrics?.observer.attemptEnd?.(ctx, view, attempt, error);
    },
    finish(ctx, outcome, s) {
      metrics?.observer.finish?.(ctx, outcome, s);
    },
  };

  const retire = (t: Tracing): void => {
    retired.add(t);
    const timer = setTimeout(() => {
      retired.delete(t);
      void t.shutdown().catch((e: unknown) => log.warn('closing a replaced trace exporter failed', { error: describeError(e) }));
    }, RETIRE_MS);
    timer.unref?.();
  };

  const switchTo = async (next: TelemetryConfig): Promise<void> => {
    const previous = tracing;
    tracing = await startTracing(next, version);
    if (tracing) last = tracing.observer;
    if (previous) retire(previous);
    if (metrics) await metrics.exportTo(next);
    else if (next.metrics.url) {
      metrics = await startMetrics(next);
      metrics.watch(sources);
    }
  };

  return {
    observers: [tracingObserver, metricsObserver],
    get metricsPort() {
      return metrics?.port;
    },
    get metricsListener() {
      return metrics?.listener ?? 'off';
    },
    watchMetrics: (s) => {
      sources = { ...sources, ...s };
      metrics?.watch(sources);
    },
    reconfigure: (next) => {
      // One switch at a time, in the order asked.
      const run = queue.then(() => switchTo(next));
      queue = run.catch(() => undefined);
      return run;
    },
    shutdown: async () => {
      await queue;
      await Promise.all([tracing?.shutdown(), ...[...retired].map((t) => t.shutdown()), metrics?.shutdown()]);
    },
  };
};
