import { type Attributes, type HrTime, SpanKind, SpanStatusCode, ValueType } from '@opentelemetry/api';
import { JsonLogsSerializer, JsonMetricsSerializer, JsonTraceSerializer, ProtobufLogsSerializer, ProtobufMetricsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import { createHash } from 'node:crypto';
import type { OtlpExport } from '../audit/otlp-export.ts';
import { connectError } from '../core/errors.ts';
import type { RequestRecordRow } from '../store/schema/index.ts';
import { operationOf, providerNameOf } from '../telemetry/genai.ts';
import { DURATION_BUCKETS, TOKEN_BUCKETS, TTFT_BUCKETS } from '../telemetry/metrics.ts';
import { MAX_LABEL_VALUES, OTHER } from '../telemetry/metrics-observer.ts';
import { recordView } from './view.ts';

/**
 * Request records as OTLP (contract §8's names), built as the OpenTelemetry SDK's own data and
 * encoded by its serializers (JSON or protobuf):
 * - `logs`: one log record per request record; body = the record as SearchRequestRecords returns
 *   it (bodies as stored, under the `record-retention` setting), `log.record.uid` = the request id;
 * - `traces`: one SERVER span per record, `{gen_ai.operation.name} {gen_ai.request.model}`, trace
 *   id = the request id's 16 bytes, from received_at to received_at + latency, and a CLIENT child
 *   for the upstream call when the record has a provider; span ids derive from the request id, so
 *   a batch sent again carries the same ids;
 * - `metrics`: per batch, delta sums and histograms over its records (the interval from the cursor
 *   before the batch to its last record's stored_at), with the gateway's own metric names and the
 *   label bounds of telemetry/metrics-observer.ts.
 * Every item carries gateway.customer_id / gateway.project_id (metrics: the `project` label).
 */

type LogRecord = Parameters<typeof JsonLogsSerializer.serializeRequest>[0][number];
type Span = Parameters<typeof JsonTraceSerializer.serializeRequest>[0][number];
type ResourceMetrics = Parameters<typeof JsonMetricsSerializer.serializeRequest>[0];
type MetricData = ResourceMetrics['scopeMetrics'][number]['metrics'][number];

let resource: Resource | undefined;
const resourceOf = (version: string): Resource => {
  resource ??= resourceFromAttributes({ 'service.name': 'ai-gateway', 'service.version': version });
  return resource;
};

const encoded = (bytes: Uint8Array | undefined): Uint8Array => {
  if (!bytes) throw connectError('internal', 'the OTLP serializer produced no request');
  return bytes;
};

const hr = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];
const isMcp = (r: RequestRecordRow): boolean => r.provider === 'mcp';
const operation = (r: RequestRecordRow): string => operationOf(r.endpoint, isMcp(r) ? (r.model ?? '') : undefined);

/** The attributes of contract §8 the record holds (ids, GenAI names, status, usage, cost). */
const recordAttributes = (r: RequestRecordRow): Attributes => {
  const a: Attributes = {
    'gateway.request_id': r.requestId,
    'gen_ai.operation.name': operation(r),
    'http.response.status_code': r.httpStatus,
    'url.path': r.endpoint,
    'gateway.latency_ms': r.latencyMs,
    'gateway.attempts': r.attempts,
    'gateway.stream': r.stream,
    'gen_ai.usage.input_tokens': r.inputTokens,
    'gen_ai.usage.output_tokens': r.outputTokens,
    'gateway.cost_usd': r.costNanoUsd / 1e9,
  };
  const set = (k: string, v: string | null) => {
    if (v) a[k] = v;
  };
  set('gateway.client_request_id', r.clientRequestId);
  set('gateway.customer_id', r.customerId);
  set('gateway.project_id', r.projectId);
  set('gateway.api_key_id', r.apiKeyId);
  if (isMcp(r)) {
    set('mcp.method.name', r.model);
    set('gateway.mcp.server', r.connection);
    if (r.model === 'tools/call') set('gen_ai.tool.name', r.upstreamModel);
  } else {
    set('gen_ai.request.model', r.model);
    set('gateway.connection', r.connection);
    set('gateway.upstream_model', r.upstreamModel);
  }
  if (r.provider) a['gen_ai.provider.name'] = isMcp(r) ? 'mcp' : providerNameOf(r.provider);
  if (r.ttfbMs !== null) a['gateway.ttfb_ms'] = r.ttfbMs;
  if (r.httpStatus >= 400) a['error.type'] = r.errorCode ?? String(r.httpStatus);
  if (r.cache) a['gateway.cache'] = r.cache;
  return a;
};

export const logsExport = (rows: readonly RequestRecordRow[], version: string): OtlpExport => {
  const scope = { name: 'ai-gateway.records', version };
  const res = resourceOf(version);
  const now = hr(Date.now());
  const logs: LogRecord[] = rows.map((r) => ({
    hrTime: hr(r.receivedAt.getTime()),
    hrTimeObserved: now,
    severityNumber: r.httpStatus >= 500 ? 17 : r.httpStatus >= 400 ? 13 : 9,
    severityText: r.httpStatus >= 500 ? 'ERROR' : r.httpStatus >= 400 ? 'WARN' : 'INFO',
    body: JSON.stringify(recordView(r)),
    eventName: 'gateway.request',
    resource: res,
    instrumentationScope: scope,
    attributes: { 'log.record.uid': r.requestId, ...recordAttributes(r) },
    droppedAttributesCount: 0,
  }));
  return { json: () => encoded(JsonLogsSerializer.serializeRequest(logs)), protobuf: () => encoded(ProtobufLogsSerializer.serializeRequest(logs)) };
};

/** A span id (8 bytes, hex) derived from the request id and the span's role. */
const spanId = (requestId: string, role: string): string => createHash('sha256').update(`${role}:${requestId}`).digest('hex').slice(0, 16);

export const tracesExport = (rows: readonly RequestRecordRow[], version: string): OtlpExport => {
  const scope = { name: 'ai-gateway.records', version };
  const res = resourceOf(version);
  const spans: Span[] = [];
  for (const r of rows) {
    const traceId = r.requestId.replaceAll('-', '').toLowerCase();
    const server = { traceId, spanId: spanId(r.requestId, 'server'), traceFlags: 1 };
    const start = r.receivedAt.getTime();
    const end = start + r.latencyMs;
    const attributes = recordAttributes(r);
    const op = operation(r);
    const base = {
      startTime: hr(start),
      endTime: hr(end),
      duration: hr(r.latencyMs),
      ended: true,
      links: [],
      events: [],
      resource: res,
      instrumentationScope: scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
    const name = isMcp(r) ? `${r.model ?? op}${r.upstreamModel ? ` ${r.upstreamModel}` : ''}` : r.model ? `${op} ${r.model}` : op;
    // A SERVER span is an error for the gateway's own failures (5xx), as the live spans are.
    spans.push({ ...base, name, kind: SpanKind.SERVER, spanContext: () => server, attributes, status: { code: r.httpStatus >= 500 ? SpanStatusCode.ERROR : SpanStatusCode.UNSET } });
    if (!r.provider) continue;
    const client = { traceId, spanId: spanId(r.requestId, 'client'), traceFlags: 1 };
    const upstream = r.upstreamModel ?? r.model ?? '';
    const clientAttrs: Attributes = { 'gen_ai.operation.name': op, 'gen_ai.provider.name': isMcp(r) ? 'mcp' : providerNameOf(r.provider), 'gateway.request_id': r.requestId };
    if (upstream) clientAttrs[isMcp(r) ? 'gateway.upstream_name' : 'gen_ai.request.model'] = upstream;
    if (r.connection) clientAttrs['gateway.connection'] = r.connection;
    if (r.httpStatus >= 400) clientAttrs['error.type'] = attributes['error.type'] ?? String(r.httpStatus);
    spans.push({
      ...base,
      name: `${op} ${upstream}`.trim(),
      kind: SpanKind.CLIENT,
      spanContext: () => client,
      parentSpanContext: server,
      attributes: clientAttrs,
      status: { code: r.httpStatus >= 400 ? SpanStatusCode.ERROR : SpanStatusCode.UNSET },
    });
  }
  return { json: () => encoded(JsonTraceSerializer.serializeRequest(spans)), protobuf: () => encoded(ProtobufTraceSerializer.serializeRequest(spans)) };
};

/** A label's values in one batch, first come, up to MAX_LABEL_VALUES; the rest are `other`. */
const bounded = () => {
  const seen = new Set<string>();
  return (v: string): string => {
    if (seen.has(v)) return v;
    if (seen.size >= MAX_LABEL_VALUES) return OTHER;
    seen.add(v);
    return v;
  };
};

interface Hist {
  attributes: Attributes;
  counts: number[];
  sum: number;
  count: number;
  min: number;
  max: number;
}

/** Aggregates per (metric, label set) of one batch. */
class Aggregates {
  readonly sums = new Map<string, Map<string, { attributes: Attributes; value: number }>>();
  readonly hists = new Map<string, Map<string, Hist>>();
  add(metric: string, attributes: Attributes, value: number): void {
    const m = this.sums.get(metric) ?? new Map<string, { attributes: Attributes; value: number }>();
    this.sums.set(metric, m);
    const k = JSON.stringify(attributes);
    const p = m.get(k) ?? { attributes, value: 0 };
    p.value += value;
    m.set(k, p);
  }
  record(metric: string, buckets: readonly number[], attributes: Attributes, value: number): void {
    const m = this.hists.get(metric) ?? new Map<string, Hist>();
    this.hists.set(metric, m);
    const k = JSON.stringify(attributes);
    const h = m.get(k) ?? { attributes, counts: new Array<number>(buckets.length + 1).fill(0), sum: 0, count: 0, min: value, max: value };
    const i = buckets.findIndex((b) => value <= b);
    h.counts[i === -1 ? buckets.length : i] = (h.counts[i === -1 ? buckets.length : i] ?? 0) + 1;
    h.sum += value;
    h.count += 1;
    h.min = Math.min(h.min, value);
    h.max = Math.max(h.max, value);
    m.set(k, h);
  }
}

const SUMS: Readonly<Record<string, { description: string; unit: string; valueType: ValueType }>> = {
  'gateway.requests': { description: 'Inference requests by status code, operation, model, provider and project', unit: '', valueType: ValueType.INT },
  'gateway.cost': { description: 'Cost of requests in USD by project and model', unit: 'USD', valueType: ValueType.DOUBLE },
  'gateway.mcp.calls': { description: 'Governed MCP calls by server and outcome', unit: '', valueType: ValueType.INT },
};
const HISTS: Readonly<Record<string, { description: string; unit: string; buckets: readonly number[] }>> = {
  'gen_ai.client.token.usage': { description: 'Tokens per request by gen_ai.token.type (input, output)', unit: '{token}', buckets: TOKEN_BUCKETS },
  'gen_ai.client.operation.duration': { description: 'Request duration as the client saw it (a stream: until its end)', unit: 's', buckets: DURATION_BUCKETS },
  'gen_ai.server.time_to_first_token': { description: 'Streams: time from arrival to the first byte sent', unit: 's', buckets: TTFT_BUCKETS },
};

export const metricsExport = (rows: readonly RequestRecordRow[], from: Date, to: Date, version: string): OtlpExport => {
  const models = bounded();
  const projects = bounded();
  const servers = bounded();
  const agg = new Aggregates();
  for (const r of rows) {
    const project = r.customerId && r.projectId ? projects(`${r.customerId}/${r.projectId}`) : OTHER;
    if (isMcp(r)) {
      agg.add('gateway.mcp.calls', { server: servers(r.connection ?? OTHER), outcome: r.httpStatus === 504 ? 'timeout' : r.httpStatus >= 400 ? 'error' : 'ok' }, 1);
      continue;
    }
    // A model is a label value only when the request resolved to a route (unknown names are `other`).
    const model = r.provider && r.model ? models(r.model) : OTHER;
    const provider = r.provider ? providerNameOf(r.provider) : OTHER;
    const op = operation(r);
    const base = { 'gen_ai.operation.name': op, 'gen_ai.request.model': model, 'gen_ai.provider.name': provider };
    agg.add('gateway.requests', { status_code: r.httpStatus, ...base, project }, 1);
    agg.record('gen_ai.client.operation.duration', DURATION_BUCKETS, r.httpStatus >= 400 ? { ...base, 'error.type': r.errorCode ?? String(r.httpStatus) } : base, r.latencyMs / 1000);
    if (r.inputTokens > 0 || r.outputTokens > 0) {
      agg.record('gen_ai.client.token.usage', TOKEN_BUCKETS, { ...base, 'gen_ai.token.type': 'input' }, r.inputTokens);
      agg.record('gen_ai.client.token.usage', TOKEN_BUCKETS, { ...base, 'gen_ai.token.type': 'output' }, r.outputTokens);
    }
    if (r.costNanoUsd > 0) agg.add('gateway.cost', { project, 'gen_ai.request.model': model }, r.costNanoUsd / 1e9);
    if (r.stream && r.ttfbMs !== null) agg.record('gen_ai.server.time_to_first_token', TTFT_BUCKETS, { 'gen_ai.operation.name': op, 'gen_ai.request.model': model }, r.ttfbMs / 1000);
  }
  const startTime = hr(from.getTime());
  const endTime = hr(Math.max(to.getTime(), from.getTime()));
  const metrics: MetricData[] = [];
  for (const [name, points] of agg.sums) {
    const d = SUMS[name];
    if (!d) continue;
    metrics.push({
      descriptor: { name, description: d.description, unit: d.unit, valueType: d.valueType },
      aggregationTemporality: AggregationTemporality.DELTA,
      dataPointType: DataPointType.SUM,
      isMonotonic: true,
      dataPoints: [...points.values()].map((p) => ({ startTime, endTime, attributes: p.attributes, value: p.value })),
    });
  }
  for (const [name, points] of agg.hists) {
    const d = HISTS[name];
    if (!d) continue;
    metrics.push({
      descriptor: { name, description: d.description, unit: d.unit, valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.DELTA,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: [...points.values()].map((h) => ({
        startTime,
        endTime,
        attributes: h.attributes,
        value: { buckets: { boundaries: [...d.buckets], counts: h.counts }, sum: h.sum, count: h.count, min: h.min, max: h.max },
      })),
    });
  }
  const rm: ResourceMetrics = { resource: resourceOf(version), scopeMetrics: [{ scope: { name: 'ai-gateway.records', version }, metrics }] };
  return { json: () => encoded(JsonMetricsSerializer.serializeRequest(rm)), protobuf: () => encoded(ProtobufMetricsSerializer.serializeRequest(rm)) };
};
