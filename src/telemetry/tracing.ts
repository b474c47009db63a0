import type { RequestObserver } from '../pipeline/observe.ts';
import type { TelemetryConfig } from '../config/telemetry.ts';
import type { MetricSources, MetricsListener } from './metrics.ts';
import { type ExportOptions, spanExporter } from './otlp.ts';

/**
 * OpenTelemetry for the data plane: traces over OTLP (grpc, http/protobuf or http/json) when an
 * endpoint is configured with the standard variables (declared in config/settings.ts), and
 * metrics (telemetry/metrics.ts). Both are request observers (pipeline/observe.ts);
 * with neither on, no observer is added and nothing of them runs on the hot path.
 */

export interface Telemetry {
  /** The observers to add to the request path (none when nothing is exported). */
  readonly observers: readonly RequestObserver[];
  /** The metrics listener's port, when it listens. */
  readonly metricsPort: number | undefined;
  /** The metrics listener's state, as `/readyz` reports it (`metrics`). */
  readonly metricsListener: MetricsListener;
  /** Tells the metrics what their gauges read (records queue, configuration revisions). */
  watchMetrics(sources: MetricSources): void;
  shutdown(): Promise<void>;
}

/** The export options of a configuration. */
export const exportOptions = (cfg: TelemetryConfig): ExportOptions => ({
  headers: cfg.headers,
  ...(cfg.insecure ? { insecure: true } : {}),
  ...(cfg.timeoutMs ? { timeoutMs: cfg.timeoutMs } : {}),
});

/** The resource attributes of every span and exported metric. */
export const resourceAttributesOf = (cfg: TelemetryConfig, version: string): Record<string, string> => ({
  ...cfg.resourceAttributes,
  'service.name': cfg.serviceName,
  'service.version': version,
});

export interface Tracing {
  observer: RequestObserver;
  shutdown(): Promise<void>;
}

/**
 * Tracing when a traces URL is configured. The OpenTelemetry SDK and its OTLP exporter are loaded
 * only then: they are ~15–20 MB of a process's memory (most of a data plane's modules) and nothing
 * of them runs when no span is exported.
 */
export const startTracing = async (cfg: TelemetryConfig, version: string): Promise<Tracing | undefined> => {
  if (!cfg.tracesUrl) return undefined;
  const [api, { resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor }, { traceObserver }, exporter] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('./trace-observer.ts'),
    spanExporter(cfg.protocol, cfg.tracesUrl, exportOptions(cfg)),
  ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(resourceAttributesOf(cfg, version)),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 })],
  });
  return { observer: traceObserver(api, provider.getTracer('ai-gateway', version), cfg.spanHeaders), shutdown: () => provider.shutdown() };
};

export const startTelemetry = async (cfg: TelemetryConfig, version: string): Promise<Telemetry> => {
  const tracing = await startTracing(cfg, version);
  const metrics = cfg.metrics.port !== 0 || cfg.metrics.url ? await (await import('./metrics.ts')).startMetrics(cfg, version) : undefined;
  const observers = [...(tracing ? [tracing.observer] : []), ...(metrics ? [metrics.observer] : [])];
  return {
    observers,
    metricsPort: metrics?.port,
    metricsListener: metrics?.listener ?? 'off',
    watchMetrics: (sources) => metrics?.watch(sources),
    shutdown: async () => {
      await Promise.all([tracing?.shutdown(), metrics?.shutdown()]);
    },
  };
};
