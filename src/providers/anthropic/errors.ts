/** Anthropic error bodies and `event: error` frames → GatewayError. */
import { GatewayError } from '../../core/errors.ts';
import { asRecord, asString, parseJson } from '../json.ts';
import { redact, redactExcerpt } from '../redact.ts';
import { mapUpstreamError } from '../upstream-error.ts';

/** `{type:'error', error:{type, message}, request_id}`; 529 (overloaded) lands in the 5xx → 503 row. */
export const parseAnthropicError = (provider: string, status: number, body: string, headers: Headers): GatewayError => {
  const parsed = parseJson(body);
  const o = parsed.ok ? asRecord(parsed.value) : undefined;
  const e = asRecord(o?.['error']);
  const message = asString(e?.['message']) ?? asString(o?.['message']);
  return mapUpstreamError({
    provider,
    status,
    body,
    headers,
    message,
    type: asString(e?.['type']),
    // Anthropic's 404 for an unknown model reads "model: <id>".
    code: status === 404 && message?.startsWith('model:') ? 'model_not_found' : undefined,
  });
};

/** An error that arrives inside a 200 (stream `error` event, or a 200 body of type `error`). */
export const anthropicInStreamError = (
  provider: string,
  raw: string,
  message: string | undefined,
  type: string | undefined,
): GatewayError => {
  const common = {
    message: redact(message ?? `Upstream provider '${provider}' reported an error mid-stream.`),
    upstreamBody: redactExcerpt(raw),
    retryable: true,
  };
  switch (type) {
    case 'overloaded_error':
      return new GatewayError({ kind: 'unavailable', ...common });
    case 'rate_limit_error':
      return new GatewayError({ kind: 'rate_limit', ...common });
    default:
      return new GatewayError({ kind: 'upstream_error', ...common });
  }
};
