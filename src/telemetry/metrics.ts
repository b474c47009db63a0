import type { Server } from 'bun';
import { tlsOption } from '../core/tls.ts';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { Histogram, Sum } from './aggregate.ts';
import { describeError, log } from '../core/log.ts';
import type { RequestObserver } from '../pipeline/observe.ts';
import type { ExportOptions, OtlpProtocol } from './otlp.ts';
import type { TelemetryConfig } from '../config/telemetry.ts';
import type { Breakers } from '../governance/breaker.ts';
import { exportOptions, resourceAttributesOf } from './tracing.ts';

/**
 * Metrics (contract §8), loaded by dynamic import only when the metrics listener or an OTLP metrics
 * endpoint is on. The aggregates are the gateway's own (aggregate.ts: the SDK's instruments hash
 * every point's attributes), collected in the OpenTelemetry SDK's data model; the metrics listener
 * renders them as Prometheus text on `GET /metrics` (GATEWAY_METRICS_PORT, never the inference
 * port), and when an endpoint is set the same collection is exported over OTLP (the SDK's
 * serializers) every OTEL_METRIC_EXPORT_INTERVAL. Series are bounded: labels by
 * metrics-observer.ts, and at most CARDINALITY_LIMIT series per metric (the overflow is one
 * `otel_metric_overflow` series).
 */

export const CARDINALITY_LIMIT = 2000;

/** What the gauges read, given once the process composed its parts. */
export interface MetricSources {
  recordsQueued?: () => number;
  /** Configuration revision per data plane: the one it should serve (`desired`) and the one it serves (`applied`). */
  revisions?: () => readonly { dataplane: string; desired: number | null; applied: number | null }[];
  /** This data plane's circuit breakers (contract §14): their states and transitions. */
  circuits?: Breakers;
}

/** The metrics listener (contract §17, `/readyz` says it): serving, not asked for (port 0), or could not listen (a taken port). */
export type MetricsListener = 'listening' | 'off' | 'failed';

export interface Metrics {
  observer: RequestObserver;
  port: number | undefined;
  listener: MetricsListener;
  watch(sources: MetricSources): void;
  /** The current collection as Prometheus text. */
  scrape(): Promise<string>;
  /** Exports over OTLP as `cfg` says from now on (none without `cfg.metrics.url`); the previous export is flushed and closed. */
  exportTo(cfg: TelemetryConfig): Promise<void>;
  shutdown(): Promise<void>;
}

const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const TPOT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5];

export interface MetricDef {
  name: string;
  description: string;
  unit: string;
}
export interface HistogramDef extends MetricDef {
  buckets: readonly number[];
}

/** The request metrics (contract §8), by their OpenTelemetry names: the process's own, and those of forwarded records (records/forward-otlp.ts). */
export const METRICS = {
  tokenUsage: {
    name: 'gen_ai.client.token.usage',
    unit: '{token}',
    description: 'Tokens per request by gen_ai.token.type (input, output)',
    buckets: TOKEN_BUCKETS,
  },
  duration: {
    name: 'gen_ai.client.operation.duration',
    unit: 's',
    description: 'Request duration as the client saw it (a stream: until its end)',
    buckets: DURATION_BUCKETS,
  },
  serverDuration: {
    name: 'gen_ai.server.request.duration',
    unit: 's',
    description: 'Request duration as the gateway served it, from arrival to the last byte sent',
    buckets: DURATION_BUCKETS,
  },
  timeToFirstToken: {
    name: 'gen_ai.server.time_to_first_token',
    unit: 's',
    description: 'Streams: time from arrival to the first byte sent, by operation, model and provider',
    buckets: TTFT_BUCKETS,
  },
  timePerOutputToken: {
    name: 'gen_ai.server.time_per_output_token',
    unit: 's',
    description: 'Streams: time per output token after the first',
    buckets: TPOT_BUCKETS,
  },
  guardrailDuration: {
    name: 'gateway.guardrail.duration',
    unit: 's',
    description: 'Provider guardrails (contract §15): time spent on the vendor per request and stage, by kind and outcome',
    buckets: TTFT_BUCKETS,
  },
  requests: {
    name: 'gateway.requests',
    unit: '',
    description: 'Inference requests and MCP calls by status code, API, operation, model, provider and project',
  },
  attempts: {
    name: 'gateway.upstream.attempts',
    unit: '',
    description: 'Upstream attempts by provider and outcome (ok, retryable_error, error, timeout)',
  },
  cost: { name: 'gateway.cost', unit: 'USD', description: 'Cost of requests in USD by project and model' },
  mcpCalls: { name: 'gateway.mcp.calls', unit: '', description: 'Governed MCP calls by server and outcome' },
  mcpDuration: {
    name: 'mcp.server.operation.duration',
    unit: 's',
    description: 'Governed MCP calls by the MCP conventions: mcp.method.name, gen_ai.tool.name, error.type',
    buckets: DURATION_BUCKETS,
  },
  refusals: {
    name: 'gateway.policy.refusals',
    unit: '',
    description: 'Requests refused by rate limits, budgets or guardrails, by reason and project',
  },
  cache: {
    name: 'gateway.cache.requests',
    unit: '',
    description: 'Requests of projects with a response cache by outcome (hit, miss, bypass) and project',
  },
  costSaved: {
    name: 'gateway.cache.cost_saved',
    unit: 'USD',
    description: 'Cost of the answers served from the response cache, in USD by project and model',
  },
} as const satisfies Record<string, MetricDef | HistogramDef>;

interface Delegate {
  export(items: ResourceMetrics, done: (r: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
}

const metricsDelegate = async (protocol: OtlpProtocol, url: string, o: ExportOptions): Promise<Delegate> => {
  const [{ JsonMetricsSerializer, ProtobufMetricsSerializer, MetricsExporterMetricsHelper }, { grpcOptions, httpOptions }] =
    await Promise.all([import('@opentelemetry/otlp-transformer'), import('./otlp.ts')]);
  if (protocol === 'grpc') {
    const { createOtlpGrpcExportDelegate, convertLegacyOtlpGrpcOptions } = await import('@opentelemetry/otlp-grpc-exporter-base');
    const options = convertLegacyOtlpGrpcOptions(await grpcOptions(url, o), 'METRICS');
    return createOtlpGrpcExportDelegate(
      options,
      ProtobufMetricsSerializer,
      'otlp_grpc_metric_exporter',
      MetricsExporterMetricsHelper,
      undefined,
      'MetricsExportService',
      '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
    );
  }
  const { createOtlpHttpExportDelegate, convertLegacyHttpOptions } = await import('@opentelemetry/otlp-exporter-base/node-http');
  const json = protocol === 'http/json';
  const options = convertLegacyHttpOptions(httpOptions(url, o), 'METRICS', 'v1/metrics', {
    'Content-Type': json ? 'application/json' : 'application/x-protobuf',
  });
  return createOtlpHttpExportDelegate(
    options,
    json ? JsonMetricsSerializer : ProtobufMetricsSerializer,
    'otlp_http_metric_exporter',
    MetricsExporterMetricsHelper,
    undefined,
  );
};

export const startMetrics = async (cfg: TelemetryConfig, version: string): Promise<Metrics> => {
  const mc = cfg.metrics;
  const [
    { AggregationTemporality, DataPointType },
    { resourceFromAttributes },
    { metricsObserver },
    { renderPrometheus },
    { Aggregates },
    { startRuntimeMetrics },
  ] = await Promise.all([
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/resources'),
    import('./metrics-observer.ts'),
    import('./prometheus.ts'),
    import('./aggregate.ts'),
    import('./process-metrics.ts'),
  ]);
  const agg = new Aggregates(
    { AggregationTemporality, DataPointType },
    resourceFromAttributes(resourceAttributesOf(cfg, version)),
    { name: 'ai-gateway', version },
    CARDINALITY_LIMIT,
  );
  const sum = (d: MetricDef): Sum => agg.sum(d.name, d.description, d.unit);
  const histogram = (d: HistogramDef): Histogram => agg.histogram(d.name, d.unit, d.description, d.buckets);
  const observer = metricsObserver(mc.tenantLabels, {
    tokenUsage: histogram(METRICS.tokenUsage),
    duration: histogram(METRICS.duration),
    serverDuration: histogram(METRICS.serverDuration),
    timeToFirstToken: histogram(METRICS.timeToFirstToken),
    timePerOutputToken: histogram(METRICS.timePerOutputToken),
    guardrailDuration: histogram(METRICS.guardrailDuration),
    requests: sum(METRICS.requests),
    attempts: sum(METRICS.attempts),
    cost: sum(METRICS.cost),
    mcpCalls: sum(METRICS.mcpCalls),
    mcpDuration: histogram(METRICS.mcpDuration),
    refusals: sum(METRICS.refusals),
    cache: sum(METRICS.cache),
    costSaved: sum(METRICS.costSaved),
  });

  let sources: MetricSources = {};
  agg.gauge('gateway.records.queued', 'Request records waiting to be written', (observe) => {
    if (sources.recordsQueued) observe(sources.recordsQueued());
  });
  agg.gauge('gateway.config.revision', 'Configuration revision per data plane (state: desired, applied)', (observe) => {
    for (const d of sources.revisions?.() ?? []) {
      if (d.desired !== null) observe(d.desired, { dataplane: d.dataplane, state: 'desired' });
      if (d.applied !== null) observe(d.applied, { dataplane: d.dataplane, state: 'applied' });
    }
  });

  // Circuit breakers: per (connection name, upstream model, state), how many breakers are in that state, and
  // the transitions into each state. Connections of different projects may share a name: their breakers add
  // up in one series (a Prometheus exposition may not repeat a series).
  const STATES = ['CLOSED', 'OPEN', 'HALF_OPEN', 'COOLING'] as const;
  const K = '\u0000';
  agg.gauge('gateway.circuit.state', 'Circuit breakers per target (connection and upstream model) in each state', (observe) => {
    const n = new Map<string, { connection: string; upstreamModel: string; counts: Record<string, number> }>();
    for (const c of sources.circuits?.circuits() ?? []) {
      const k = c.connection + K + c.upstreamModel;
      const e = n.get(k) ?? { connection: c.connection, upstreamModel: c.upstreamModel, counts: {} };
      n.set(k, e);
      e.counts[c.state] = (e.counts[c.state] ?? 0) + 1;
    }
    for (const e of n.values())
      for (const st of STATES) observe(e.counts[st] ?? 0, { connection: e.connection, upstream_model: e.upstreamModel, state: st });
  });
  agg.observedCounter('gateway.circuit.transitions', 'Circuit breaker transitions per target, by the state entered', (observe) => {
    const n = new Map<string, { connection: string; upstreamModel: string; to: string; n: number }>();
    for (const t of sources.circuits?.counts.values() ?? []) {
      const k = t.connection + K + t.upstreamModel + K + t.to;
      const e = n.get(k);
      if (e) e.n += t.n;
      else n.set(k, { connection: t.connection, upstreamModel: t.upstreamModel, to: t.to, n: t.n });
    }
    for (const e of n.values()) observe(e.n, { connection: e.connection, upstream_model: e.upstreamModel, state: e.to });
  });

  const collect = async (): Promise<ResourceMetrics> => agg.collect();
  const runtime = mc.port !== 0 ? startRuntimeMetrics() : undefined;
  const scrape = async (): Promise<string> => renderPrometheus(agg.collect(), DataPointType) + (runtime?.render() ?? '');

  let server: Server<undefined> | undefined;
  let listener: MetricsListener = 'off';
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
      listener = 'listening';
    } catch (e) {
      // Metrics never keep the gateway from serving: a taken port is logged, /readyz says `metrics: "failed"`, and OTLP export still runs.
      listener = 'failed';
      log.error('the metrics listener could not listen; no /metrics (set GATEWAY_METRICS_PORT)', {
        host: mc.host,
        port: mc.port,
        error: describeError(e),
      });
    }
  }

  /** The OTLP export: its delegate, the resource it reports, its timer. */
  interface Export {
    delegate: Delegate;
    resource: ResourceMetrics['resource'];
    timer: ReturnType<typeof setInterval>;
  }
  let exporting: Export | undefined;
  const push = async (e: Export | undefined = exporting): Promise<void> => {
    if (!e) return;
    const rm = { ...(await collect()), resource: e.resource };
    await new Promise<void>((resolve) =>
      e.delegate.export(rm, (r) => {
        if (r.code !== 0)
          log.every('metrics-export', 'warn', 'exporting metrics over OTLP failed', {
            error: r.error ? describeError(r.error) : 'unknown',
          });
        resolve();
      }),
    );
  };
  const close = async (e: Export | undefined): Promise<void> => {
    if (!e) return;
    clearInterval(e.timer);
    await push(e).catch(() => undefined);
    await e.delegate.shutdown();
  };
  const exportTo = async (c: TelemetryConfig): Promise<void> => {
    const previous = exporting;
    exporting = undefined;
    if (c.metrics.url) {
      const e: Export = {
        delegate: await metricsDelegate(c.protocol, c.metrics.url, exportOptions(c)),
        resource: resourceFromAttributes(resourceAttributesOf(c, version)),
        timer: setInterval(
          () =>
            void push(e).catch((err: unknown) =>
              log.every('metrics-export', 'warn', 'exporting metrics over OTLP failed', { error: describeError(err) }),
            ),
          c.metrics.intervalMs,
        ),
      };
      e.timer.unref?.();
      exporting = e;
    }
    await close(previous);
  };
  await exportTo(cfg);

  return {
    observer,
    port: server?.port,
    listener,
    watch: (s) => {
      sources = { ...sources, ...s };
    },
    scrape,
    exportTo,
    shutdown: async () => {
      const e = exporting;
      exporting = undefined;
      await close(e);
      runtime?.stop();
      void server?.stop(true);
    },
  };
};
