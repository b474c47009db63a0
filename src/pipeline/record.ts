import type { RecordEntry, RecordSink } from '../core/records.ts';
import { FULL_RETENTION, type RecordRetentionSetting } from '../governance/setting-values.ts';
import type { Outcome, RequestContext } from './context.ts';
import type { RequestObserver } from './observe.ts';
import type { Settlement } from './settle.ts';

const MAX_BODY_CHARS = 256 * 1024;

/**
 * A body as the record keeps it: JSON text, never parsed or serialised again. Text the database
 * refuses (lone surrogates, NUL) is cleaned by the writer only when a write fails.
 */
const keepText = (text: string): string => (text.length > MAX_BODY_CHARS ? `{"truncated":true,"chars":${text.length}}` : text);

const keepValue = (value: unknown): string | null => {
  if (value === undefined) return null;
  try {
    return keepText(JSON.stringify(value) ?? 'null');
  } catch {
    return '{"omitted":"not serialisable"}';
  }
};

const responseBody = (outcome: Outcome): string | null => {
  if (outcome.error)
    return keepValue({ error: { code: outcome.error.errorCode, message: outcome.error.message, attempts: outcome.attempts } });
  if (outcome.responseText !== undefined) return keepText(outcome.responseText);
  return keepValue(outcome.response);
};

/** A body cut to at most `max` UTF-8 bytes, kept as JSON (the column is jsonb): the cut text and the original size. */
const truncated = (text: string, max: number): string => {
  if (text.length * 3 <= max) return text;
  const bytes = Buffer.byteLength(text);
  if (bytes <= max) return text;
  const cut = Buffer.from(text).subarray(0, max).toString('utf8');
  return JSON.stringify({ truncated: true, bytes, text: cut });
};

/** A body as the project's `record-retention` keeps it: not at all, cut, or whole (up to the record's bound). */
const retained = (text: string | null, r: RecordRetentionSetting): string | null =>
  text === null || r.bodies === 'none' ? null : r.bodies === 'truncated' ? truncated(text, r.maxBodyBytes) : text;

/**
 * The record stage: one entry per request (the request_records columns as one flat object, the
 * bodies as the JSON texts they are and only when the retention setting keeps them), reported to
 * the observers that take records (pipeline/index.ts `finish`).
 */
export const recordEntry = (keepBodies: boolean, ctx: RequestContext, outcome: Outcome, s: Settlement): RecordEntry => {
  const last = outcome.attempts?.at(-1);
  const key = ctx.key;
  const row = {
    request_id: ctx.ids.requestId,
    client_request_id: ctx.ids.clientRequestId ?? null,
    received_at: new Date(ctx.receivedAt).toISOString(),
    customer_id: key?.customerId ?? null,
    project_id: key?.projectId ?? null,
    api_key_id: key?.id ?? null,
    endpoint: ctx.endpoint,
    model: ctx.model ?? null,
    provider: last?.provider ?? null,
    connection: last?.connection ?? null,
    upstream_model: last?.upstreamModel ?? null,
    http_status: outcome.status,
    latency_ms: Math.round(performance.now() - ctx.t0),
    ttfb_ms: outcome.ttfbMs ?? null,
    stream: ctx.stream,
    input_tokens: s.inputTokens,
    output_tokens: s.outputTokens,
    total_tokens: s.totalTokens,
    cached_input_tokens: s.cachedInputTokens,
    cache_write_tokens: s.cacheWriteTokens,
    cost_nano_usd: s.costNanoUsd,
    attempts: outcome.attempts?.length ?? 0,
    error_code: outcome.error?.errorCode ?? null,
    guardrail_flags: ctx.flags ? [...ctx.flags].join(',') : null,
    correlation_id: ctx.correlationId ?? ctx.headers?.get('x-gateway-correlation-id')?.slice(0, 128) ?? null,
    guardrails: ctx.guardrails ? JSON.stringify(ctx.guardrails) : null,
    cache: outcome.cache ?? null,
    cost_saved_nano_usd: outcome.cache === 'hit' ? s.costSavedNanoUsd : null,
  };
  const retention = key?.project.retention ?? FULL_RETENTION;
  const keep = keepBodies && retention.bodies !== 'none';
  return {
    row,
    requestBody: keep && ctx.bodyText !== undefined ? retained(keepText(ctx.bodyText), retention) : null,
    responseBody: keep ? retained(responseBody(outcome), retention) : null,
    sanitized: s.adjusted ? 'usage' : null,
  };
};

/** The request records as an observer: each record goes to the sink (the writer, or a data plane's remote sink). */
export const recordsObserver = (sink: RecordSink): RequestObserver => ({ name: 'records', record: (_ctx, entry) => sink.add(entry) });
