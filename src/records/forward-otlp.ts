import { type Attributes, type HrTime, SpanKind, SpanStatusCode, ValueType } from '@opentelemetry/api';
import {
  JsonLogsSerializer,
  JsonMetricsSerializer,
  JsonTraceSerializer,
  ProtobufLogsSerializer,
  ProtobufMetricsSerializer,
  ProtobufTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import { createHash } from 'node:crypto';
import type { OtlpExport } from '../audit/otlp-export.ts';
import { connectError } from '../core/errors.ts';
import type { RequestRecordRow } from '../store/schema/index.ts';
import { apiOf, operationOf, providerNameOf } from '../telemetry/genai.ts';
import { Aggregates } from '../telemetry/aggregate.ts';
import { CARDINALITY_LIMIT, type HistogramDef, METRICS, type MetricDef } from '../telemetry/metrics.ts';
import { MAX_LABEL_VALUES, OTHER, TENANTS_HIDDEN } from '../telemetry/metrics-observer.ts';
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
 * Every item carries gateway.customer_id / gateway.project_id (metrics: the `project` label, unless
 * GATEWAY_METRICS_TENANT_LABELS is off: then it is TENANTS_HIDDEN on every series).
 */

type LogRecord = Parameters<typeof JsonLogsSerializer.serializeRequest>[0][number];
type Span = Parameters<typeof JsonTraceSerializer.serializeRequest>[0][number];

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
  return {
    json: () => encoded(JsonLogsSerializer.serializeRequest(logs)),
    protobuf: () => encoded(ProtobufLogsSerializer.serializeRequest(logs)),
  };
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
    spans.push({
      ...base,
      name,
      kind: SpanKind.SERVER,
      spanContext: () => server,
      attributes,
      status: { code: r.httpStatus >= 500 ? SpanStatusCode.ERROR : SpanStatusCode.UNSET },
    });
    if (!r.provider) continue;
    const client = { traceId, spanId: spanId(r.requestId, 'client'), traceFlags: 1 };
    const upstream = r.upstreamModel ?? r.model ?? '';
    const clientAttrs: Attributes = {
      'gen_ai.operation.name': op,
      'gen_ai.provider.name': isMcp(r) ? 'mcp' : providerNameOf(r.provider),
      'gateway.request_id': r.requestId,
    };
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
  return {
    json: () => encoded(JsonTraceSerializer.serializeRequest(spans)),
    protobuf: () => encoded(ProtobufTraceSerializer.serializeRequest(spans)),
  };
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

export const metricsExport = (
  rows: readonly RequestRecordRow[],
  from: Date,
  to: Date,
  version: string,
  tenantLabels: boolean,
): OtlpExport => {
  const models = bounded();
  const projects = bounded();
  const servers = bounded();
  const mcpMethods = bounded();
  const agg = new Aggregates(
    { AggregationTemporality, DataPointType },
    resourceOf(version),
    { name: 'ai-gateway.records', version },
    CARDINALITY_LIMIT,
    { temporality: 'delta', start: hr(from.getTime()) },
  );
  const sum = (d: MetricDef, valueType: ValueType) => agg.sum(d.name, d.description, d.unit, valueType);
  const histogram = (d: HistogramDef) => agg.histogram(d.name, d.unit, d.description, d.buckets);
  const requests = sum(METRICS.requests, ValueType.INT);
  const cost = sum(METRICS.cost, ValueType.DOUBLE);
  const mcpCalls = sum(METRICS.mcpCalls, ValueType.INT);
  const duration = histogram(METRICS.duration);
  const serverDuration = histogram(METRICS.serverDuration);
  const tokens = histogram(METRICS.tokenUsage);
  const ttft = histogram(METRICS.timeToFirstToken);
  /** A batch's series, named by their attributes (this path is not the request's: one key per point is fine). */
  const by = (attributes: Attributes): [string, () => Attributes] => [JSON.stringify(attributes), () => attributes];
  for (const r of rows) {
    const project = !tenantLabels ? TENANTS_HIDDEN : r.customerId && r.projectId ? projects(`${r.customerId}/${r.projectId}`) : OTHER;
    if (isMcp(r)) {
      mcpCalls.add(
        1,
        ...by({ server: servers(r.connection ?? OTHER), outcome: r.httpStatus === 504 ? 'timeout' : r.httpStatus >= 400 ? 'error' : 'ok' }),
      );
      const mcpOp = operationOf(r.endpoint, mcpMethods(r.model ?? ''));
      const mcpBase = { 'gen_ai.operation.name': mcpOp, 'gen_ai.request.model': OTHER, 'gen_ai.provider.name': 'mcp' };
      requests.add(1, ...by({ status_code: r.httpStatus, gateway_api: apiOf(r.endpoint, true), ...mcpBase, project }));
      continue;
    }
    // A model is a label value only when the request resolved to a route (unknown names are `other`).
    const model = r.provider && r.model ? models(r.model) : OTHER;
    const provider = r.provider ? providerNameOf(r.provider) : OTHER;
    const op = operation(r);
    const base = { 'gen_ai.operation.name': op, 'gen_ai.request.model': model, 'gen_ai.provider.name': provider };
    requests.add(1, ...by({ status_code: r.httpStatus, gateway_api: apiOf(r.endpoint, false), ...base, project }));
    const durationAttrs = r.httpStatus >= 400 ? { ...base, 'error.type': r.errorCode ?? String(r.httpStatus) } : base;
    duration.record(r.latencyMs / 1000, ...by(durationAttrs));
    serverDuration.record(r.latencyMs / 1000, ...by(durationAttrs));
    if (r.inputTokens > 0 || r.outputTokens > 0) {
      tokens.record(r.inputTokens, ...by({ ...base, 'gen_ai.token.type': 'input' }));
      tokens.record(r.outputTokens, ...by({ ...base, 'gen_ai.token.type': 'output' }));
    }
    if (r.costNanoUsd > 0) cost.add(r.costNanoUsd / 1e9, ...by({ project, 'gen_ai.request.model': model }));
    if (r.stream && r.ttfbMs !== null) ttft.record(r.ttfbMs / 1000, ...by(base));
  }
  const rm = agg.collect(hr(Math.max(to.getTime(), from.getTime())));
  return {
    json: () => encoded(JsonMetricsSerializer.serializeRequest(rm)),
    protobuf: () => encoded(ProtobufMetricsSerializer.serializeRequest(rm)),
  };
};
