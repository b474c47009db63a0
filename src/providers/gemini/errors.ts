/**
 * `google.rpc.Status` errors (Gemini on AI Studio and Vertex):
 * `{"error":{"code","message","status","details":[…]}}`, sometimes wrapped in an array.
 * An invalid API key comes back as 400 `API_KEY_INVALID`: treated as the credential failure it is.
 * 429s carry their retry delay in `RetryInfo.retryDelay`, not in a header.
 */
import type { GatewayError } from '../../core/errors.ts';
import { asArray, asNumber, asRecord, asString, parseJson, type UnknownRecord } from '../json.ts';
import { mapUpstreamError, withUpstreamStatus } from '../upstream-error.ts';

const AUTH_REASONS = new Set([
  'API_KEY_INVALID',
  'API_KEY_SERVICE_BLOCKED',
  'API_KEY_HTTP_REFERRER_BLOCKED',
  'ACCESS_TOKEN_EXPIRED',
  'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
]);

export interface GoogleStatus {
  code?: number;
  message?: string;
  status?: string;
  reason?: string;
  retryDelaySeconds?: number;
}

/** `"30s"` / `"1.5s"` → whole seconds, rounded up. */
const seconds = (d: string | undefined): number | undefined => {
  const m = d === undefined ? null : /^(\d+(?:\.\d+)?)s$/.exec(d.trim());
  return m ? Math.ceil(Number(m[1])) : undefined;
};

export const readGoogleStatus = (e: UnknownRecord): GoogleStatus => {
  const out: GoogleStatus = { code: asNumber(e['code']), message: asString(e['message']), status: asString(e['status']) };
  for (const item of asArray(e['details']) ?? []) {
    const d = asRecord(item);
    if (!d) continue;
    const type = asString(d['@type']) ?? '';
    if (type.endsWith('google.rpc.ErrorInfo')) out.reason = asString(d['reason']);
    if (type.endsWith('google.rpc.RetryInfo')) out.retryDelaySeconds = seconds(asString(d['retryDelay']));
  }
  return out;
};

export const extractGoogleStatus = (body: string): GoogleStatus => {
  const parsed = parseJson(body);
  const root = parsed.ok ? (Array.isArray(parsed.value) ? (parsed.value[0] as unknown) : parsed.value) : undefined;
  const e = asRecord(asRecord(root)?.['error']);
  if (e) return readGoogleStatus(e);
  const msg = asString(asRecord(root)?.['message']);
  return msg === undefined ? {} : { message: msg };
};

const withRetryAfter = (headers: Headers | undefined, s: GoogleStatus): Headers | undefined => {
  if (s.retryDelaySeconds === undefined || headers?.has('retry-after')) return headers;
  const h = new Headers(headers);
  h.set('retry-after', String(s.retryDelaySeconds));
  return h;
};

const fromStatus = (provider: string, status: number, body: string, headers: Headers | undefined, s: GoogleStatus): GatewayError =>
  mapUpstreamError({
    provider,
    status,
    body,
    headers: withRetryAfter(headers, s),
    message: s.message,
    type: s.status,
    code: status === 404 && /model/i.test(s.message ?? '') ? 'model_not_found' : undefined,
    authFailure: (s.reason !== undefined && AUTH_REASONS.has(s.reason)) || s.status === 'UNAUTHENTICATED',
  });

export const parseGoogleError = (provider: string, status: number, body: string, headers: Headers): GatewayError =>
  fromStatus(provider, status, body, headers, extractGoogleStatus(body));

/** An `error` object inside a 200 body or stream event; its `code` stands for the HTTP status. */
export const googleInBodyError = (provider: string, error: unknown, raw: string): GatewayError => {
  const s = readGoogleStatus(asRecord(error) ?? {});
  return withUpstreamStatus(fromStatus(provider, s.code !== undefined && s.code >= 400 ? s.code : 500, raw, undefined, s), undefined);
};
