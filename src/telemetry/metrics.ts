import type { Server } from 'bun';
import { type TlsFiles, tlsOption } from '../core/tls.ts';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { describeError, log } from '../core/log.ts';
import type { RequestObserver } from '../data-plane/pipeline/observe.ts';
import type { OtlpProtocol } from './otlp.ts';
import type { TelemetryConfig } from './tracing.ts';

/**
 * Metrics (contract §8): the OpenTelemetry metrics SDK, loaded by dynamic import only when the
 * metrics listener or an OTLP metrics endpoint is on. One pull reader holds the aggregates; the
 * metrics listener renders it as Prometheus text on `GET /metrics` (GATEWAY_METRICS_PORT, never
 * the inference port), and when an endpoint is set the same collection is exported over OTLP
 * every OTEL_METRIC_EXPORT_INTERVAL. Series are bounded: labels by metrics-observer.ts, and at most
 * CARDINALITY_LIMIT series per metric by the SDK (the overflow is one `otel_metric_overflow` series).
 */

export interface MetricsConfig {
  /** Port of the metrics listener; 0: none. */
  port: number;
  host: string;
  /** GATEWAY_METRICS_TLS_*: serve /metrics over HTTPS. */
  tls?: TlsFiles;
  /** OTLP metrics URL (`…/v1/metrics` for HTTP, the collector's address for gRPC), or undefined for no export. */
  url: string | undefined;
  intervalMs: number;
}

export const CARDINALITY_LIMIT = 2000;

/** What the gauges read, given once the process composed its parts. */
export interface MetricSources {
  recordsQueued?: () => number;
  /** Configuration revision per data plane: the one it should serve (`desired`) and the one it serves (`applied`). */
  revisions?: () => readonly { dataplane: string; desired: number | null; applied: number | null }[];
}

export interface Metrics {
  observer: RequestObserver;
  port: number | undefined;
  watch(sources: MetricSources): void;
  /** The current collection as Prometheus text. */
  scrape(): Promise<string>;
  shutdown(): Promise<void>;
}

export const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
export const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
export const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const TPOT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5];

interface Delegate {
  export(items: ResourceMetrics, done: (r: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
}

const metricsDelegate = async (protocol: OtlpProtocol, url: string, headers: Record<string, string>): Promise<Delegate> => {
  const [{ JsonMetricsSerializer, ProtobufMetricsSerializer, MetricsExporterMetricsHelper }] = await Promise.all([import('@opentelemetry/otlp-transformer')]);
  if (protocol === 'grpc') {
    const [{ createOtlpGrpcExportDelegate, convertLegacyOtlpGrpcOptions }, { grpcMetadata }] = await Promise.all([import('@opentelemetry/otlp-grpc-exporter-base'), import('./otlp.ts')]);
    const options = convertLegacyOtlpGrpcOptions({ url, metadata: await grpcMetadata(headers) }, 'METRICS');
    return createOtlpGrpcExportDelegate(options, ProtobufMetricsSerializer, 'otlp_grpc_metric_exporter', MetricsExporterMetricsHelper, undefined, 'MetricsExportService', '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export');
  }
  const { createOtlpHttpExportDelegate, convertLegacyHttpOptions } = await import('@opentelemetry/otlp-exporter-base/node-http');
  const json = protocol === 'http/json';
  const options = convertLegacyHttpOptions({ url, headers }, 'METRICS', 'v1/metrics', { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' });
  return createOtlpHttpExportDelegate(options, json ? JsonMetricsSerializer : ProtobufMetricsSerializer, 'otlp_http_metric_exporter', MetricsExporterMetricsHelper, undefined);
};

export const startMetrics = async (cfg: TelemetryConfig, version: string): Promise<Metrics> => {
  const mc = cfg.metrics;
  const [{ MeterProvider, MetricReader, AggregationTemporality, DataPointType }, { resourceFromAttributes }, { metricsObserver }, { renderPrometheus }] = await Promise.all([
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/resources'),
    import('./metrics-observer.ts'),
    import('./prometheus.ts'),
  ]);
  class PullReader extends MetricReader {
    protected override async onShutdown(): Promise<void> {}
    protected override async onForceFlush(): Promise<void> {}
  }
  const reader = new PullReader({ cardinalitySelector: () => CARDINALITY_LIMIT, aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': cfg.serviceName, 'service.version': version }), readers: [reader] });
  const meter = provider.getMeter('ai-gateway', version);
  const histogram = (name: string, unit: string, description: string, buckets: number[]) => meter.createHistogram(name, { unit, description, advice: { explicitBucketBoundaries: buckets } });
  const observer = metricsObserver({
    tokenUsage: histogram('gen_ai.client.token.usage', '{token}', 'Tokens per request by gen_ai.token.type (input, output)', TOKEN_BUCKETS),
    duration: histogram('gen_ai.client.operation.duration', 's', 'Request duration as the client saw it (a stream: until its end)', DURATION_BUCKETS),
    timeToFirstToken: histogram('gen_ai.server.time_to_first_token', 's', 'Streams: time from arrival to the first byte sent', TTFT_BUCKETS),
    timePerOutputToken: histogram('gen_ai.server.time_per_output_token', 's', 'Streams: time per output token after the first', TPOT_BUCKETS),
    requests: meter.createCounter('gateway.requests', { description: 'Inference requests by status code, operation, model, provider and project' }),
    attempts: meter.createCounter('gateway.upstream.attempts', { description: 'Upstream attempts by provider and outcome (ok, retryable_error, error, timeout)' }),
    cost: meter.createCounter('gateway.cost', { unit: 'USD', description: 'Cost of requests in USD by project and model' }),
    mcpCalls: meter.createCounter('gateway.mcp.calls', { description: 'Governed MCP calls by server and outcome' }),
    refusals: meter.createCounter('gateway.policy.refusals', { description: 'Requests refused by rate limits, budgets or guardrails, by reason and project' }),
    cache: meter.createCounter('gateway.cache.requests', { description: 'Requests of projects with a response cache by outcome (hit, miss, bypass) and project' }),
    costSaved: meter.createCounter('gateway.cache.cost_saved', { unit: 'USD', description: 'Cost of the answers served from the response cache, in USD by project and model' }),
  });

  let sources: MetricSources = {};
  meter.createObservableGauge('gateway.records.queued', { description: 'Request records waiting to be written' }).addCallback((r) => {
    if (sources.recordsQueued) r.observe(sources.recordsQueued());
  });
  meter.createObservableGauge('gateway.config.revision', { description: 'Configuration revision per data plane (state: desired, applied)' }).addCallback((r) => {
    for (const d of sources.revisions?.() ?? []) {
      if (d.desired !== null) r.observe(d.desired, { dataplane: d.dataplane, state: 'desired' });
      if (d.applied !== null) r.observe(d.applied, { dataplane: d.dataplane, state: 'applied' });
    }
  });

  const collect = async (): Promise<ResourceMetrics> => (await reader.collect()).resourceMetrics;
  const scrape = async (): Promise<string> => renderPrometheus(await collect(), DataPointType);

  let server: Server<undefined> | undefined;
  if (mc.port !== 0) {
    try {
      server = Bun.serve({
        hostname: mc.host,
        port: mc.port,
        ...tlsOption(mc.tls),
        fetch: async (req) => {
          const path = new URL(req.url).pathname;
          if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) return new Response('not found\n', { status: 404 });
          return new Response(await scrape(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } });
        },
      });
    } catch (e) {
      // Metrics never keep the gateway from serving: a taken port is logged, and OTLP export still runs.
      log.error('the metrics listener could not listen; no /metrics (set GATEWAY_METRICS_PORT)', { port: mc.port, error: describeError(e) });
    }
  }

  let delegate: Delegate | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  const push = async (): Promise<void> => {
    if (!delegate) return;
    const d = delegate;
    const rm = await collect();
    await new Promise<void>((resolve) =>
      d.export(rm, (r) => {
        if (r.code !== 0) log.every('metrics-export', 'warn', 'exporting metrics over OTLP failed', { error: r.error ? describeError(r.error) : 'unknown' });
        resolve();
      }),
    );
  };
  if (mc.url) {
    delegate = await metricsDelegate(cfg.protocol, mc.url, cfg.headers);
    timer = setInterval(() => void push().catch((e: unknown) => log.every('metrics-export', 'warn', 'exporting metrics over OTLP failed', { error: describeError(e) })), mc.intervalMs);
    timer.unref?.();
  }

  return {
    observer,
    port: server?.port,
    watch: (s) => {
      sources = { ...sources, ...s };
    },
    scrape,
    shutdown: async () => {
      if (timer) clearInterval(timer);
      await push().catch(() => undefined);
      await delegate?.shutdown();
      void server?.stop(true);
      await provider.shutdown();
    },
  };
};
