import protobuf from 'protobufjs';

/**
 * A local OTLP receiver for tests: takes `POST /v1/traces` and `/v1/metrics` as OTLP/JSON or
 * OTLP/protobuf (decoded with the subset of the OTLP protos below) and keeps what it got.
 */

const PROTO = `
syntax = "proto3";
package otlp;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Span { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; Status status = 15; }
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message NumberDataPoint { repeated KeyValue attributes = 7; double as_double = 4; sfixed64 as_int = 6; }
message HistogramDataPoint { repeated KeyValue attributes = 9; fixed64 count = 4; double sum = 5; }
message Gauge { repeated NumberDataPoint data_points = 1; }
message Sum { repeated NumberDataPoint data_points = 1; bool is_monotonic = 3; }
message Histogram { repeated HistogramDataPoint data_points = 1; }
message Metric { string name = 1; string unit = 3; Gauge gauge = 5; Sum sum = 7; Histogram histogram = 9; }
message ScopeMetrics { repeated Metric metrics = 2; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
message LogRecord { fixed64 time_unix_nano = 1; int32 severity_number = 2; string severity_text = 3; AnyValue body = 5; repeated KeyValue attributes = 6; }
message ScopeLogs { repeated LogRecord log_records = 2; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; }
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
`;

const root = protobuf.parse(PROTO, { keepCase: false }).root;
const TraceRequest = root.lookupType('otlp.ExportTraceServiceRequest');
const MetricsRequest = root.lookupType('otlp.ExportMetricsServiceRequest');
const LogsRequest = root.lookupType('otlp.ExportLogsServiceRequest');
const REQUEST_TYPES: Readonly<Record<Signal, protobuf.Type>> = { traces: TraceRequest, metrics: MetricsRequest, logs: LogsRequest };

export type Signal = 'traces' | 'metrics' | 'logs';

export type AttrValue = string | number | boolean | AttrValue[];

export interface ReceivedSpan {
  /** The path before `/v1/traces` (a sink URL's own path; '' for none), or `grpc`. */
  sink: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 2 SERVER, 3 CLIENT. */
  kind: number;
  /** OTLP status code: 2 ERROR. */
  statusCode: number;
  /** End minus start time of the span (ms). */
  durationMs: number;
  attributes: Record<string, AttrValue>;
  /** Attributes of the span's resource (`service.name`, …). */
  resource: Record<string, AttrValue>;
}

export interface ReceivedPoint {
  sink: string;
  metric: string;
  attributes: Record<string, AttrValue>;
  /** Counter or gauge value; a histogram's count. */
  value: number;
  sum?: number;
}

interface JsonAny {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAny[] };
}

const anyValue = (v: JsonAny | undefined): AttrValue => {
  if (!v) return '';
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(anyValue);
  return '';
};

const attrs = (list: { key: string; value?: JsonAny }[] | undefined): Record<string, AttrValue> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, anyValue(a.value)]));

/** Hex of an id: OTLP/JSON sends hex already; protobuf decoded to JSON gives base64. */
const hex = (id: string | undefined, json: boolean): string =>
  id === undefined || id === '' ? '' : json ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');

interface SpanIn {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  status?: { code?: number };
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: { key: string; value?: JsonAny }[];
}

interface MetricIn {
  name: string;
  sum?: { dataPoints?: PointIn[] };
  gauge?: { dataPoints?: PointIn[] };
  histogram?: { dataPoints?: PointIn[] };
}
interface PointIn {
  attributes?: { key: string; value?: JsonAny }[];
  asDouble?: number;
  asInt?: string | number;
  count?: string | number;
  sum?: number;
}

export interface ReceivedLog {
  sink: string;
  body: string;
  severityNumber: number;
  attributes: Record<string, AttrValue>;
}

interface LogIn {
  severityNumber?: number;
  body?: JsonAny;
  attributes?: { key: string; value?: JsonAny }[];
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  points: ReceivedPoint[];
  logs: ReceivedLog[];
  /** Content types of the requests received, per path. */
  contentTypes: Map<string, Set<string>>;
  /** Every export request's path and headers, in arrival order. */
  requests: { path: string; headers: Headers }[];
  /** Authorization-like headers of the requests received (authorization, x-api-key), per sink. */
  auth: Map<string, Set<string>>;
  /** Sinks answering 500 (their requests are counted in `refused`, their items not kept). */
  failing: Set<string>;
  refused: Map<string, number>;
  /** Keeps what one export request carries (also the gRPC receiver's entry). */
  ingest(sink: string, signal: Signal, body: unknown, json: boolean): void;
  stop(): void;
}

/** An OTLP protobuf request decoded to the JSON mapping's shape (ids base64, int64 as strings). */
export const decodeOtlp = (signal: Signal, bytes: Uint8Array): unknown => {
  const t = REQUEST_TYPES[signal];
  return t.toObject(t.decode(bytes), { longs: String, bytes: String, defaults: false, oneofs: false });
};

export const startOtlpReceiver = (): OtlpReceiver => {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const logs: ReceivedLog[] = [];
  const contentTypes = new Map<string, Set<string>>();
  const requests: { path: string; headers: Headers }[] = [];
  const auth = new Map<string, Set<string>>();
  const failing = new Set<string>();
  const refused = new Map<string, number>();
  const ingest = (sink: string, signal: Signal, body: unknown, json: boolean): void => {
    if (signal === 'traces') {
      const b = body as {
        resourceSpans?: { resource?: { attributes?: { key: string; value?: JsonAny }[] }; scopeSpans?: { spans?: SpanIn[] }[] }[];
      };
      for (const rs of b.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              sink,
              resource: attrs(rs.resource?.attributes),
              traceId: hex(s.traceId, json),
              spanId: hex(s.spanId, json),
              parentSpanId: hex(s.parentSpanId, json),
              name: s.name,
              kind: s.kind ?? 0,
              statusCode: s.status?.code ?? 0,
              durationMs: Number(BigInt(s.endTimeUnixNano ?? 0) - BigInt(s.startTimeUnixNano ?? 0)) / 1e6,
              attributes: attrs(s.attributes),
            });
    } else if (signal === 'metrics') {
      const b = body as { resourceMetrics?: { scopeMetrics?: { metrics?: MetricIn[] }[] }[] };
      for (const rm of b.resourceMetrics ?? [])
        for (const sm of rm.scopeMetrics ?? [])
          for (const m of sm.metrics ?? []) {
            for (const p of m.sum?.dataPoints ?? m.gauge?.dataPoints ?? [])
              points.push({ sink, metric: m.name, attributes: attrs(p.attributes), value: Number(p.asDouble ?? p.asInt ?? 0) });
            for (const p of m.histogram?.dataPoints ?? [])
              points.push({
                sink,
                metric: m.name,
                attributes: attrs(p.attributes),
                value: Number(p.count ?? 0),
                ...(p.sum !== undefined ? { sum: p.sum } : {}),
              });
          }
    } else {
      const b = body as { resourceLogs?: { scopeLogs?: { logRecords?: LogIn[] }[] }[] };
      for (const rl of b.resourceLogs ?? [])
        for (const sl of rl.scopeLogs ?? [])
          for (const l of sl.logRecords ?? [])
            logs.push({ sink, body: String(anyValue(l.body)), severityNumber: l.severityNumber ?? 0, attributes: attrs(l.attributes) });
    }
  };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const m = /^(.*)\/v1\/(traces|metrics|logs)$/.exec(path);
      if (!m) return new Response('not found', { status: 404 });
      const sink = m[1] ?? '';
      const signal = m[2] as Signal;
      const type = req.headers.get('content-type') ?? '';
      contentTypes.set(path, (contentTypes.get(path) ?? new Set()).add(type));
      requests.push({ path, headers: req.headers });
      for (const h of ['authorization', 'x-api-key']) {
        const v = req.headers.get(h);
        if (v !== null) auth.set(sink, (auth.get(sink) ?? new Set()).add(`${h}: ${v}`));
      }
      const json = type.includes('json');
      const bytes = new Uint8Array(await req.arrayBuffer());
      if (failing.has(sink)) {
        refused.set(sink, (refused.get(sink) ?? 0) + 1);
        return new Response('down', { status: 500 });
      }
      ingest(sink, signal, json ? JSON.parse(new TextDecoder().decode(bytes)) : decodeOtlp(signal, bytes), json);
      return json ? Response.json({}) : new Response(new Uint8Array(0), { headers: { 'content-type': 'application/x-protobuf' } });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    points,
    logs,
    contentTypes,
    requests,
    auth,
    failing,
    refused,
    ingest,
    stop: () => void server.stop(true),
  };
};

/** Polls until `check` gives a value (spans and metrics are exported in batches). */
export const eventually = async <T>(check: () => T | undefined, timeoutMs = 10_000): Promise<T> => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out waiting for telemetry');
    await Bun.sleep(50);
  }
};

const GRPC_SERVICES: readonly [Signal, string][] = [
  ['traces', '/opentelemetry.proto.collector.trace.v1.TraceService/Export'],
  ['metrics', '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export'],
  ['logs', '/opentelemetry.proto.collector.logs.v1.LogsService/Export'],
];

/**
 * An OTLP/gRPC receiver (@grpc/grpc-js, plaintext) feeding `into` as sink `grpc` (and its
 * `authorization` metadata into `into.auth`); `into.failing.has('grpc')` answers UNAVAILABLE.
 */
export const startGrpcOtlpReceiver = async (into: OtlpReceiver): Promise<{ url: string; stop(): void }> => {
  const grpc = await import('@grpc/grpc-js');
  const server = new grpc.Server();
  const raw = (b: Buffer): Buffer => b;
  for (const [signal, path] of GRPC_SERVICES) {
    const definition = {
      Export: {
        path,
        requestStream: false,
        responseStream: false,
        requestSerialize: raw,
        requestDeserialize: raw,
        responseSerialize: raw,
        responseDeserialize: raw,
      },
    };
    server.addService(definition, {
      Export: (
        call: { request: Buffer; metadata: { get(k: string): unknown[] } },
        done: (err: { code: number; details: string } | null, res?: Buffer) => void,
      ) => {
        for (const v of call.metadata.get('authorization'))
          into.auth.set('grpc', (into.auth.get('grpc') ?? new Set()).add(`authorization: ${String(v)}`));
        if (into.failing.has('grpc')) {
          into.refused.set('grpc', (into.refused.get('grpc') ?? 0) + 1);
          return done({ code: grpc.status.UNAVAILABLE, details: 'down' });
        }
        into.ingest('grpc', signal, decodeOtlp(signal, new Uint8Array(call.request)), false);
        done(null, Buffer.alloc(0));
      },
    });
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { url: `http://127.0.0.1:${port}`, stop: () => server.forceShutdown() };
};
