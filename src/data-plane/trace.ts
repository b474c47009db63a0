import type { Span } from '@opentelemetry/api';
import type { Usage } from '../canonical/types.ts';
import { GatewayError, invalidRequest } from '../core/errors.ts';
import { checkNesting } from '../formats/validate.ts';
import type { SnapshotHolder } from '../propagation/holder.ts';
import type { KeySnapshot } from '../propagation/snapshot.ts';
import type { NewRequestRecord } from '../store/schema/index.ts';
import type { Telemetry } from '../telemetry/tracing.ts';
import { costNanoUsd } from './cost.ts';
import type { Attempt } from './dispatch.ts';
import { RawJson, type RecordSink } from './records.ts';
import type { Plan } from './resolve.ts';
import type { RequestIds } from './respond.ts';

/**
 * The life of one data-plane request for observability: a Trace is opened when the request
 * arrives and closed exactly once by `finishTrace`, which ends its span and queues its record.
 */

export interface InferenceDeps {
  snapshots: SnapshotHolder;
  telemetry: Telemetry;
  records: RecordSink | undefined;
  /** Whether request and response bodies are kept in records (data-retention setting). */
  recordBodies: boolean;
  keepAliveMs: number;
  /** Request-body limits; the defaults when absent. */
  bodyLimits?: BodyLimits;
}

/** Per-request state gathered on the way, for the record. */
export interface Trace {
  ids: RequestIds;
  receivedAt: number;
  t0: number;
  endpoint: string;
  key?: KeySnapshot;
  model?: string;
  plan?: Plan;
  body?: unknown;
  /** The request body as received (kept in the record without serialising `body` again). */
  bodyText?: string;
  stream: boolean;
  span?: Span;
}

const INT4_MAX = 2_147_483_647;

/**
 * A token count as its integer column holds it: negative or NaN → 0, fractions rounded, capped at
 * the column's maximum. Cheap enough for every request; the record is flagged when it changed.
 */
const tokens = (n: number | undefined): number => {
  if (n === undefined || (Number.isInteger(n) && n >= 0 && n <= INT4_MAX)) return n ?? 0;
  return n > 0 ? Math.min(Math.round(n), INT4_MAX) : 0;
};

const usageTotals = (u: Usage | undefined) => {
  const inputTokens = tokens(u?.inputTokens);
  const outputTokens = tokens(u?.outputTokens);
  const cachedInputTokens = tokens(u?.cachedInputTokens);
  const cacheWriteTokens = tokens(u?.cacheWriteTokens);
  const sum = inputTokens + outputTokens;
  const adjusted =
    u !== undefined &&
    (inputTokens !== u.inputTokens ||
      outputTokens !== u.outputTokens ||
      cachedInputTokens !== (u.cachedInputTokens ?? 0) ||
      cacheWriteTokens !== (u.cacheWriteTokens ?? 0) ||
      sum > INT4_MAX);
  return { totals: { inputTokens, outputTokens, totalTokens: Math.min(sum, INT4_MAX), cachedInputTokens, cacheWriteTokens }, adjusted };
};

const MAX_BODY_CHARS = 256 * 1024;
/**
 * The body as the record keeps it. Nothing is scanned here (the request path pays for it): text
 * that the database refuses (lone surrogates, NUL) is cleaned by the record sink only when a write
 * fails (records.ts).
 */
const keepBody = (deps: InferenceDeps, body: unknown): unknown => {
  if (!deps.recordBodies || body === undefined) return null;
  let text: string;
  try {
    text = body instanceof RawJson ? body.text : (JSON.stringify(body) ?? 'null');
  } catch {
    return { omitted: 'not serialisable' };
  }
  if (text.length > MAX_BODY_CHARS) return { truncated: true, chars: text.length };
  return body instanceof RawJson ? body : new RawJson(text);
};

export const finishTrace = (
  deps: InferenceDeps,
  tr: Trace,
  status: number,
  out: { usage?: Usage; attempts?: Attempt[]; error?: GatewayError; response?: unknown; ttfbMs?: number },
): void => {
  const last = out.attempts?.at(-1);
  const { totals, adjusted } = usageTotals(out.usage);
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
    endpoint: tr.endpoint,
    model: tr.model ?? null,
    provider: last?.provider ?? null,
    connection: last?.connection ?? null,
    upstreamModel: last?.upstreamModel ?? null,
    httpStatus: status,
    latencyMs: Math.round(performance.now() - tr.t0),
    ttfbMs: out.ttfbMs ?? null,
    stream: tr.stream,
    ...totals,
    costNanoUsd: out.usage && tr.plan ? costNanoUsd(totals, tr.plan.catalog.prices) : 0,
    attempts: out.attempts?.length ?? 0,
    errorCode: out.error?.errorCode ?? null,
    requestBody: keepBody(deps, tr.bodyText !== undefined ? new RawJson(tr.bodyText) : tr.body),
    responseBody: keepBody(deps, out.error ? { error: { code: out.error.errorCode, message: out.error.message, attempts: out.attempts } } : out.response),
    sanitized: adjusted ? 'usage' : null,
  };
  deps.records.add(row);
};

/** Opens the trace (and its span, when tracing is on). */
export const openTrace = (deps: InferenceDeps, endpoint: string, req: Request, ids: RequestIds): Trace => {
  const tr: Trace = { ids, receivedAt: Date.now(), t0: performance.now(), endpoint, stream: false };
  if (deps.telemetry.enabled) {
    tr.span = deps.telemetry.startRequest(`POST ${endpoint}`, req.headers, {
      'gateway.request_id': ids.requestId,
      ...(ids.clientRequestId !== undefined ? { 'gateway.client_request_id': ids.clientRequestId } : {}),
      'http.request.method': 'POST',
      'url.path': endpoint,
    });
  }
  return tr;
};

export const noSnapshot = (): GatewayError => new GatewayError({ kind: 'unavailable', message: 'The data plane has no configuration yet.' });

/** Request-body limits of the listener (GATEWAY_MAX_BODY, GATEWAY_BODY_TIMEOUT). */
export interface BodyLimits {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
}
export const DEFAULT_BODY_LIMITS: BodyLimits = { maxBodyBytes: 32 * 1024 * 1024, bodyTimeoutMs: 30_000 };

export const bodyTooLarge = (max: number): GatewayError =>
  new GatewayError({ kind: 'invalid_request', status: 413, errorCode: 'request_too_large', message: `The request body is larger than the limit of ${max} bytes.` });

const bodyTimedOut = (ms: number): GatewayError =>
  new GatewayError({ kind: 'invalid_request', status: 408, errorCode: 'request_timeout', message: `The request body did not arrive within ${ms} ms.` });

/** A body without Content-Length (chunked): counted as it arrives, refused past the limit. */
const readCounted = async (body: ReadableStream<Uint8Array>, max: number): Promise<string> => {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      reader.cancel().catch(() => undefined);
      throw bodyTooLarge(max);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
};

/** Reads the body within the size and time limits. */
const readBody = async (req: Request, limits: BodyLimits): Promise<string> => {
  const declared = req.headers.get('content-length');
  if (declared !== null && Number(declared) > limits.maxBodyBytes) throw bodyTooLarge(limits.maxBodyBytes);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(bodyTimedOut(limits.bodyTimeoutMs)), limits.bodyTimeoutMs);
  });
  try {
    const reading = declared !== null || !req.body ? req.text() : readCounted(req.body, limits.maxBodyBytes);
    return await Promise.race([reading, deadline]);
  } catch (e) {
    if (e instanceof GatewayError) throw e;
    throw invalidRequest('The request body could not be read.', null, 'invalid_body');
  } finally {
    clearTimeout(timer);
  }
};

/**
 * Reads a JSON request body; too large → 413, too slow → 408, empty or malformed → 400
 * invalid_json, nested deeper than MAX_JSON_DEPTH → 400 naming the parameter.
 */
export const parseJsonBody = async (req: Request, tr?: Trace, limits: BodyLimits = DEFAULT_BODY_LIMITS): Promise<unknown> => {
  const text = await readBody(req, limits);
  if (text.trim() === '') throw invalidRequest('The request body is empty; send a JSON object.', null, 'invalid_json');
  checkNesting(text);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw invalidRequest('The request body is not valid JSON.', null, 'invalid_json');
  }
  if (tr) tr.bodyText = text;
  return body;
};
