/**
 * The one status table that turns an upstream failure into a GatewayError. Family-specific
 * `errors.ts` files only extract message/type/code/param from their body shape and call this.
 *
 * Policy: upstream 4xx that the client caused keep their status and message (400, 404, 413, 422);
 * an upstream 401/402/403 is the gateway's own credential or billing problem, so it becomes a 502
 * that never echoes the key; 429 stays 429 with Retry-After; 408/504 are timeouts; any other 5xx
 * (529 included) is a retryable 503.
 */
import { GatewayError, type ErrorKind } from '../core/errors.ts';
import { maskSecrets, redact, redactExcerpt } from './redact.ts';

export interface UpstreamErrorInfo {
  provider: string;
  status: number;
  /** The raw upstream body; only a redacted excerpt is kept. */
  body: string;
  headers?: Headers;
  /** What the family parser found in the body. */
  message?: string;
  type?: string;
  code?: string;
  param?: string | null;
  /** The family parser recognised a credential failure whatever the status (Gemini 400 API_KEY_INVALID, Cohere 498). */
  authFailure?: boolean;
}

const MAX_MESSAGE = 1000;

export const cleanMessage = (m: string | undefined): string | undefined => {
  if (m === undefined) return undefined;
  const t = redact(m.trim());
  if (t === '') return undefined;
  return t.length > MAX_MESSAGE ? `${t.slice(0, MAX_MESSAGE - 1)}…` : t;
};

/** Seconds from `Retry-After` (delta-seconds or HTTP date) or `retry-after-ms`. */
export const retryAfterSeconds = (headers: Headers | undefined, now: number = Date.now()): number | undefined => {
  if (!headers) return undefined;
  const ra = headers.get('retry-after')?.trim();
  if (ra) {
    if (/^\d+(\.\d+)?$/.test(ra)) return Math.max(0, Math.ceil(Number(ra)));
    const at = Date.parse(ra);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - now) / 1000));
  }
  const ms = headers.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.max(0, Math.ceil(Number(ms) / 1000));
  return undefined;
};

export const mapUpstreamError = (info: UpstreamErrorInfo): GatewayError => {
  const { provider, status } = info;
  const upstream = { upstreamBody: redactExcerpt(info.body), upstreamStatus: status };
  const message = cleanMessage(info.message) ?? `Upstream provider '${provider}' returned HTTP ${status}.`;
  const code = info.code !== undefined && info.code !== '' ? info.code : undefined;

  if (status === 401 || status === 403 || status === 407 || info.authFailure === true) {
    return new GatewayError({
      kind: 'upstream_error',
      status: 502,
      type: 'api_error',
      errorCode: 'upstream_auth_failed',
      message: `The upstream provider '${provider}' rejected the gateway's credentials (HTTP ${status}).`,
      retryable: true,
      ...upstream,
    });
  }
  if (status === 402) {
    return new GatewayError({
      kind: 'upstream_error',
      status: 502,
      type: 'api_error',
      errorCode: 'upstream_payment_required',
      message: `The upstream provider '${provider}' refused the request for billing reasons (HTTP 402): ${message}`,
      retryable: true,
      ...upstream,
    });
  }
  if (status === 429) {
    return new GatewayError({
      kind: 'rate_limit',
      message,
      retryable: true,
      retryAfterSeconds: retryAfterSeconds(info.headers),
      ...upstream,
    });
  }
  if (status === 408 || status === 504) {
    return new GatewayError({ kind: 'timeout', message, retryable: true, ...upstream });
  }
  if (status === 404) {
    return new GatewayError({
      kind: 'upstream_error',
      status: 404,
      type: 'not_found_error',
      errorCode: code ?? 'not_found',
      param: info.param ?? null,
      message,
      retryable: false,
      ...upstream,
    });
  }
  if (status === 400 || status === 422 || status === 413 || (status >= 400 && status < 500)) {
    return new GatewayError({
      kind: 'invalid_request',
      status: status === 422 ? 400 : status,
      errorCode: status === 413 ? 'request_too_large' : (code ?? 'invalid_request'),
      param: info.param ?? null,
      message,
      retryable: false,
      ...upstream,
    });
  }
  if (status >= 500) {
    return new GatewayError({
      kind: 'unavailable',
      message,
      retryable: true,
      retryAfterSeconds: retryAfterSeconds(info.headers),
      ...upstream,
    });
  }
  return new GatewayError({ kind: 'upstream_error', message, ...upstream });
};

/** An error event inside a 200 stream (or body), classified by its upstream `type`/`code`. */
export const mapInStreamError = (provider: string, raw: string, message: string | undefined, type: string | undefined): GatewayError => {
  const t = (type ?? '').toLowerCase();
  const kind: ErrorKind = t.includes('overloaded')
    ? 'unavailable'
    : t.includes('rate_limit') || t === 'too_many_requests'
      ? 'rate_limit'
      : 'upstream_error';
  return new GatewayError({
    kind,
    message: cleanMessage(message) ?? `Upstream provider '${provider}' reported an error mid-stream.`,
    retryable: true,
    upstreamBody: redactExcerpt(raw),
  });
};

export const badGateway = (provider: string, what: string, raw?: string): GatewayError =>
  new GatewayError({
    kind: 'bad_gateway',
    message: `Upstream provider '${provider}' ${what}`,
    upstreamBody: raw === undefined ? undefined : redactExcerpt(raw),
  });

export const streamEndedEarly = (provider: string): GatewayError =>
  new GatewayError({
    kind: 'bad_gateway',
    message: `Upstream provider '${provider}': upstream stream ended before completion.`,
  });

export const providerMisconfigured = (provider: string, message: string): GatewayError =>
  new GatewayError({ kind: 'upstream_error', errorCode: 'provider_misconfigured', message: `Provider '${provider}': ${message}` });

/** The same error with another `upstreamStatus` (none for an error that arrived inside a 200). */
export const withUpstreamStatus = (e: GatewayError, upstreamStatus: number | undefined): GatewayError =>
  new GatewayError({
    kind: e.kind,
    status: e.status,
    type: e.type,
    errorCode: e.errorCode,
    param: e.param,
    connectCode: e.connectCode,
    message: e.message,
    retryable: e.retryable,
    retryAfterSeconds: e.retryAfterSeconds,
    upstreamBody: e.upstreamBody,
    upstreamStatus,
  });

/**
 * The same error with every given secret form (see `secretForms`) masked in the text that came
 * from upstream: message, code, param and the kept body excerpt. Returns `e` itself when none occurs.
 */
export const scrubError = (e: GatewayError, forms: readonly string[]): GatewayError => {
  if (forms.length === 0) return e;
  const fields = [e.message, e.errorCode, e.param ?? '', e.upstreamBody ?? ''];
  if (!fields.some((f) => f !== '' && forms.some((s) => f.includes(s) || f.endsWith('…')))) return e;
  const mask = (t: string): string => maskSecrets(t, forms);
  return new GatewayError({
    kind: e.kind,
    status: e.status,
    type: e.type,
    errorCode: mask(e.errorCode),
    param: e.param === null ? null : mask(e.param),
    connectCode: e.connectCode,
    message: mask(e.message),
    retryable: e.retryable,
    retryAfterSeconds: e.retryAfterSeconds,
    upstreamBody: e.upstreamBody === undefined ? undefined : mask(e.upstreamBody),
    upstreamStatus: e.upstreamStatus,
  });
};

/**
 * An upstream body past one of the gateway's bounds (GATEWAY_MAX_UPSTREAM_RESPONSE,
 * GATEWAY_MAX_STREAM_EVENT, GATEWAY_MCP_MAX_MESSAGE_BYTES): the read is cancelled where this is thrown.
 * Retryable: another target of the route may answer within the bound.
 */
export const upstreamTooLarge = (what: string, max: number, setting: string): GatewayError =>
  new GatewayError({
    kind: 'bad_gateway',
    errorCode: 'upstream_response_too_large',
    message: `${what} is larger than the limit of ${max} bytes (${setting}).`,
    retryable: true,
  });

export { DEFAULT_MAX_EVENT } from '../core/upstream-bounds.ts';

/** One event of an upstream stream past GATEWAY_MAX_STREAM_EVENT. */
export const eventTooLarge = (max: number): GatewayError =>
  upstreamTooLarge("An event of the upstream provider's stream", max, 'GATEWAY_MAX_STREAM_EVENT');
