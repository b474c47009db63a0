import type { RecordEntry, RecordSink } from '../records.ts';
import type { Outcome, RequestContext } from './context.ts';
import type { Settlement } from './settle.ts';

const MAX_BODY_CHARS = 256 * 1024;

const str = (s: string | null | undefined): string => (s === null || s === undefined ? 'null' : JSON.stringify(s));

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
  if (outcome.error) return keepValue({ error: { code: outcome.error.errorCode, message: outcome.error.message, attempts: outcome.attempts } });
  if (outcome.responseText !== undefined) return keepText(outcome.responseText);
  return keepValue(outcome.response);
};

/**
 * The record stage: one pre-serialised entry per request (column names of request_records, see
 * records.ts), bodies only when the retention setting keeps them, handed to the sink.
 */
export const record = (sink: RecordSink, keepBodies: boolean, ctx: RequestContext, outcome: Outcome, s: Settlement): void => {
  const last = outcome.attempts?.at(-1);
  const key = ctx.key;
  const fields =
    `"request_id":${str(ctx.ids.requestId)},"client_request_id":${str(ctx.ids.clientRequestId)},` +
    `"received_at":"${new Date(ctx.receivedAt).toISOString()}","customer_id":${str(key?.customerId)},` +
    `"project_id":${str(key?.projectId)},"api_key_id":${str(key?.id)},"endpoint":${str(ctx.endpoint)},` +
    `"model":${str(ctx.model)},"provider":${str(last?.provider)},"connection":${str(last?.connection)},` +
    `"upstream_model":${str(last?.upstreamModel)},"http_status":${outcome.status},` +
    `"latency_ms":${Math.round(performance.now() - ctx.t0)},"ttfb_ms":${outcome.ttfbMs ?? 'null'},"stream":${ctx.stream},` +
    `"input_tokens":${s.inputTokens},"output_tokens":${s.outputTokens},"total_tokens":${s.totalTokens},` +
    `"cached_input_tokens":${s.cachedInputTokens},"cache_write_tokens":${s.cacheWriteTokens},` +
    `"cost_nano_usd":${s.costNanoUsd},"attempts":${outcome.attempts?.length ?? 0},"error_code":${str(outcome.error?.errorCode)}` +
    (ctx.flags ? `,"guardrail_flags":${str([...ctx.flags].join(','))}` : '');
  const entry: RecordEntry = {
    fields,
    requestBody: keepBodies && ctx.bodyText !== undefined ? keepText(ctx.bodyText) : null,
    responseBody: keepBodies ? responseBody(outcome) : null,
    sanitized: s.adjusted ? 'usage' : null,
  };
  sink.add(entry);
};
