import type { Attributes, Span, Tracer } from '@opentelemetry/api';

/**
 * OpenTelemetry traces over OTLP/HTTP (JSON). Enabled only when an endpoint is configured with the
 * standard variables (declared in config/settings.ts); otherwise every call here is a no-op that costs nothing on the hot path.
 */

export interface TelemetryConfig {
  /** Full traces URL (`…/v1/traces`), or undefined for no export. */
  tracesUrl: string | undefined;
  headers: Record<string, string>;
  serviceName: string;
  /** Request headers copied onto spans as `gateway.header.<name>` (session, user, workflow ids). */
  spanHeaders: readonly string[];
}

export interface Telemetry {
  readonly enabled: boolean;
  /** Starts the span of one inference request; undefined when tracing is off. */
  startRequest(name: string, headers: Headers, attributes: Attributes): Span | undefined;
  endRequest(span: Span | undefined, status: number, attributes: Attributes): void;
  shutdown(): Promise<void>;
}

const DISABLED: Telemetry = {
  enabled: false,
  startRequest: () => undefined,
  endRequest: () => undefined,
  shutdown: async () => undefined,
};

/**
 * Tracing when a traces URL is configured. The OpenTelemetry SDK and its OTLP exporter are loaded
 * only then: they are ~15–20 MB of a process's memory (most of a data plane's modules) and nothing
 * of them runs when no span is exported.
 */
export const startTelemetry = async (cfg: TelemetryConfig, version: string): Promise<Telemetry> => {
  if (!cfg.tracesUrl) return DISABLED;
  const [{ SpanKind, SpanStatusCode }, { OTLPTraceExporter }, { resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': cfg.serviceName, 'service.version': version }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: cfg.tracesUrl, headers: cfg.headers }), { scheduledDelayMillis: 500 })],
  });
  const tracer: Tracer = provider.getTracer('ai-gateway', version);
  return {
    enabled: true,
    startRequest(name, headers, attributes) {
      const span: Span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes });
      for (const h of cfg.spanHeaders) {
        const v = headers.get(h);
        if (v !== null) span.setAttribute(`gateway.header.${h}`, v.slice(0, 256));
      }
      return span;
    },
    endRequest(span, status, attributes) {
      if (!span) return;
      span.setAttributes({ ...attributes, 'http.response.status_code': status });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
    shutdown: () => provider.shutdown(),
  };
};
