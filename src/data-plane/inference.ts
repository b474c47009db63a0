import type { CanonicalRequest, ClientFormat, Usage } from '../canonical/types.ts';
import { asGatewayError, GatewayError, invalidRequest } from '../core/errors.ts';
import { codecFor } from '../formats/registry.ts';
import type { ClientFormatCodec } from '../formats/types.ts';
import type { SnapshotHolder } from '../propagation/holder.ts';
import type { KeySnapshot } from '../propagation/snapshot.ts';
import type { NewRequestRecord } from '../store/schema/index.ts';
import type { Span } from '@opentelemetry/api';
import type { Telemetry } from '../telemetry/tracing.ts';
import { authenticate } from './auth.ts';
import { costNanoUsd } from './cost.ts';
import { type Attempt, dispatchComplete, dispatchStream } from './dispatch.ts';
import type { RecordSink } from './records.ts';
import { type Plan, resolve } from './resolve.ts';
import { errorResponse, jsonResponse, type RequestIds, sseResponse, type StreamSummary } from './respond.ts';

export interface InferenceDeps {
  snapshots: SnapshotHolder;
  telemetry: Telemetry;
  records: RecordSink | undefined;
  /** Whether request and response bodies are kept in records (data-retention setting). */
  recordBodies: boolean;
  keepAliveMs: number;
}

const ENDPOINT: Record<ClientFormat, string> = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' };

/** Per-request state gathered on the way, for the record. */
interface Trace {
  ids: RequestIds;
  receivedAt: number;
  t0: number;
  format: ClientFormat;
  key?: KeySnapshot;
  model?: string;
  plan?: Plan;
  body?: unknown;
  stream: boolean;
  span?: Span;
}

const usageTotals = (u: Usage | undefined) => ({
  inputTokens: u?.inputTokens ?? 0,
  outputTokens: u?.outputTokens ?? 0,
  totalTokens: (u?.inputTokens ?? 0) + (u?.outputTokens ?? 0),
  cachedInputTokens: u?.cachedInputTokens ?? 0,
  cacheWriteTokens: u?.cacheWriteTokens ?? 0,
});

const MAX_BODY_CHARS = 256 * 1024;
const keepBody = (deps: InferenceDeps, body: unknown): unknown => {
  if (!deps.recordBodies || body === undefined) return null;
  const text = JSON.stringify(body);
  return text.length <= MAX_BODY_CHARS ? body : { truncated: true, chars: text.length };
};

const record = (
  deps: InferenceDeps,
  tr: Trace,
  status: number,
  out: { usage?: Usage; attempts?: Attempt[]; error?: GatewayError; response?: unknown; ttfbMs?: number },
): void => {
  const last = out.attempts?.at(-1);
  const totals = usageTotals(out.usage);
  if (tr.span) {
    deps.telemetry.endRequest(tr.span, status, {
      'gateway.model': tr.model ?? '',
      'gateway.provider': last?.provider ?? '',
      'gateway.connection': last?.connection ?? '',
      'gateway.upstream_model': last?.upstreamModel ?? '',
      'gateway.customer_id': tr.key?.customerId ?? '',
      'gateway.project_id': tr.key?.projectId ?? '',
      'gateway.api_key_id': tr.key?.id ?? '',
      'gateway.attempts': out.attempts?.length ?? 0,
      'gateway.stream': tr.stream,
      'gen_ai.usage.input_tokens': totals.inputTokens,
      'gen_ai.usage.output_tokens': totals.outputTokens,
      ...(out.error ? { 'error.type': out.error.errorCode } : {}),
    });
  }
  if (!deps.records) return;
  const row: NewRequestRecord = {
    requestId: tr.ids.requestId,
    clientRequestId: tr.ids.clientRequestId ?? null,
    receivedAt: new Date(tr.receivedAt),
    customerId: tr.key?.customerId ?? null,
    projectId: tr.key?.projectId ?? null,
    apiKeyId: tr.key?.id ?? null,
    endpoint: ENDPOINT[tr.format],
    model: tr.model ?? null,
    provider: last?.provider ?? null,
    connection: last?.connection ?? null,
    upstreamModel: last?.upstreamModel ?? null,
    httpStatus: status,
    latencyMs: Math.round(performance.now() - tr.t0),
    ttfbMs: out.ttfbMs ?? null,
    stream: tr.stream,
    ...totals,
    costNanoUsd: out.usage && tr.plan ? costNanoUsd(out.usage, tr.plan.catalog.prices) : 0,
    attempts: out.attempts?.length ?? 0,
    errorCode: out.error?.errorCode ?? null,
    requestBody: keepBody(deps, tr.body),
    responseBody: keepBody(deps, out.error ? { error: { code: out.error.errorCode, message: out.error.message, attempts: out.attempts } } : out.response),
  };
  deps.records.add(row);
};

const parseBody = async (req: Request): Promise<unknown> => {
  const text = await req.text();
  if (text.trim() === '') throw invalidRequest('The request body is empty; send a JSON object.', null, 'invalid_json');
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest('The request body is not valid JSON.', null, 'invalid_json');
  }
};

const complete = async (deps: InferenceDeps, tr: Trace, codec: ClientFormatCodec, creq: CanonicalRequest, plan: Plan, signal: AbortSignal): Promise<Response> => {
  const outcome = await dispatchComplete(creq, plan.route, signal);
  if (!outcome.ok) {
    record(deps, tr, outcome.error.status, { attempts: outcome.attempts, error: outcome.error });
    return errorResponse(outcome.error, tr.ids, codec);
  }
  const body = codec.encodeResponse(outcome.response, { model: creq.model, requestId: tr.ids.requestId, includeUsage: creq.includeUsage });
  record(deps, tr, 200, { usage: outcome.response.usage, attempts: outcome.attempts, response: body });
  return jsonResponse(200, JSON.stringify(body), tr.ids);
};

const stream = async (deps: InferenceDeps, tr: Trace, codec: ClientFormatCodec, creq: CanonicalRequest, plan: Plan, signal: AbortSignal): Promise<Response> => {
  const outcome = await dispatchStream(creq, plan.route, signal);
  if (!outcome.ok) {
    record(deps, tr, outcome.error.status, { attempts: outcome.attempts, error: outcome.error });
    return errorResponse(outcome.error, tr.ids, codec);
  }
  const encoder = codec.createStreamEncoder({ model: creq.model, requestId: tr.ids.requestId, includeUsage: creq.includeUsage });
  const ttfbMs = Math.round(performance.now() - tr.t0);
  return sseResponse(outcome.stream, encoder, tr.ids, {
    idleTimeoutMs: plan.route.timeoutMs,
    keepAliveMs: deps.keepAliveMs,
    onDone: (s: StreamSummary) => {
      const response = { text: s.text, toolCalls: s.toolCalls.filter(Boolean), finishReason: s.finishReason ?? null };
      record(deps, tr, 200, { usage: s.usage, attempts: outcome.stream.attempts, ...(s.error ? { error: s.error } : {}), response, ttfbMs });
    },
  });
};

/** One inference request in any of the three client formats, end to end. */
export const handleInference = async (deps: InferenceDeps, format: ClientFormat, req: Request, ids: RequestIds): Promise<Response> => {
  const codec = codecFor(format);
  const tr: Trace = { ids, receivedAt: Date.now(), t0: performance.now(), format, stream: false };
  if (deps.telemetry.enabled) {
    tr.span = deps.telemetry.startRequest(`POST ${ENDPOINT[format]}`, req.headers, {
      'gateway.request_id': ids.requestId,
      ...(ids.clientRequestId !== undefined ? { 'gateway.client_request_id': ids.clientRequestId } : {}),
      'http.request.method': 'POST',
      'url.path': ENDPOINT[format],
    });
  }
  try {
    const snapshot = deps.snapshots.current;
    if (!snapshot) throw new GatewayError({ kind: 'unavailable', message: 'The data plane has no configuration yet.' });
    tr.key = authenticate(req.headers, snapshot, tr.receivedAt);
    tr.body = await parseBody(req);
    const creq = codec.decodeRequest(tr.body);
    tr.model = creq.model;
    tr.stream = creq.stream;
    tr.plan = resolve(snapshot, tr.key, creq.model);
    return creq.stream ? await stream(deps, tr, codec, creq, tr.plan, req.signal) : await complete(deps, tr, codec, creq, tr.plan, req.signal);
  } catch (e) {
    const err = asGatewayError(e);
    record(deps, tr, err.status, { error: err });
    return errorResponse(err, ids, codec);
  }
};

/** `GET /v1/models`: the key's routable models, serialised once per snapshot revision. */
export const handleModels = (deps: InferenceDeps, req: Request, ids: RequestIds): Response => {
  try {
    const snapshot = deps.snapshots.current;
    if (!snapshot) throw new GatewayError({ kind: 'unavailable', message: 'The data plane has no configuration yet.' });
    const key = authenticate(req.headers, snapshot, Date.now());
    return jsonResponse(200, key.project.modelListJson, ids);
  } catch (e) {
    return errorResponse(asGatewayError(e), ids);
  }
};
