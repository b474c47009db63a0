import { type Inward, inwardAddress } from '../core/addresses.ts';
import type { AuditLogEntry } from './entry.ts';

/**
 * Audit entries as OTLP logs over HTTP/JSON (OTLP 1.x `ExportLogsServiceRequest`). One log record
 * per entry: the body is the entry's wire JSON (exactly what GetAuditLog returns, so a receiver
 * can recompute its leaf hash), attributes carry the fields to search by, and `log.record.uid`
 * (OpenTelemetry semantic conventions) is the entry id — the key a receiver de-duplicates on.
 */

export type AuthType = 'none' | 'bearer' | 'basic' | 'api_key';

export interface SinkAuth {
  authType: string;
  authValue: string | null;
  apiKeyHeader: string | null;
}

export const DEFAULT_API_KEY_HEADER = 'x-api-key';
export const SEND_TIMEOUT_MS = 10_000;

/** The OTLP signals a sink takes: each has its HTTP path and its gRPC service. */
export type Signal = 'logs' | 'traces' | 'metrics';

/** The sink URL with `/v1/{signal}` appended when its path does not already end so (OTLP/HTTP). */
export const signalUrl = (sinkUrl: string, signal: Signal): string => {
  const u = new URL(sinkUrl);
  const path = u.pathname.replace(/\/+$/, '');
  if (!path.endsWith(`/v1/${signal}`)) u.pathname = `${path}/v1/${signal}`;
  return u.toString();
};

/** The sink URL with `/v1/logs` appended when its path does not already end so. */
export const logsUrl = (sinkUrl: string): string => signalUrl(sinkUrl, 'logs');

/**
 * Contract §3.1's upstream address rule applied to a sink: whether `url`'s host is, or resolves to,
 * a loopback, private, link-local, shared or metadata address (undefined when public, or when the
 * name does not resolve — the send then fails as unreachable). An inward sink is used only when the
 * operator allows inward upstreams (GATEWAY_UPSTREAM_ALLOW_PRIVATE=1): otherwise a sink's answer
 * would tell whoever configures it which ports of the gateway's own network are open.
 */
export const inwardSink = (url: string): Promise<Inward | undefined> => inwardAddress(url).catch(() => undefined);

/** Request headers for the auth type: bearer token, basic (`user:password`), or the API key header. */
export const authHeaders = (a: SinkAuth): Record<string, string> => {
  const v = a.authValue ?? '';
  if (a.authType === 'bearer' && v) return { authorization: `Bearer ${v}` };
  if (a.authType === 'basic' && v) return { authorization: `Basic ${Buffer.from(v, 'utf8').toString('base64')}` };
  if (a.authType === 'api_key' && v) return { [a.apiKeyHeader || DEFAULT_API_KEY_HEADER]: v };
  return {};
};

type AnyValue = { stringValue: string } | { intValue: string } | { boolValue: boolean };
const attr = (key: string, value: string | number | boolean): { key: string; value: AnyValue } => ({
  key,
  value:
    typeof value === 'string' ? { stringValue: value } : typeof value === 'number' ? { intValue: String(value) } : { boolValue: value },
});

const nanos = (iso: string): string => `${BigInt(Date.parse(iso)) * 1_000_000n}`;

const record = (e: AuditLogEntry) => ({
  timeUnixNano: nanos(e.timestamp),
  observedTimeUnixNano: `${BigInt(Date.now()) * 1_000_000n}`,
  severityNumber: e.success ? 9 : 13,
  severityText: e.success ? 'INFO' : 'WARN',
  body: { stringValue: JSON.stringify(e) },
  attributes: [
    attr('log.record.uid', e.id),
    attr('event.name', 'audit'),
    attr('audit.action_type', e.actionType),
    attr('audit.actor_type', e.actorType),
    attr('audit.resource_type', e.resourceType),
    attr('audit.resource_id', e.resourceId),
    attr('audit.success', e.success),
    attr('http.response.status_code', e.statusCode),
    attr('url.path', e.endpoint),
    attr('user.id', e.userId),
    attr('audit.correlation_id', e.correlationId),
  ],
});

/** The ExportLogsServiceRequest for a batch of entries. */
export const otlpLogs = (entries: readonly AuditLogEntry[], version: string) => ({
  resourceLogs: [
    {
      resource: { attributes: [attr('service.name', 'ai-gateway'), attr('service.version', version)] },
      scopeLogs: [{ scope: { name: 'ai-gateway.audit', version }, logRecords: entries.map(record) }],
    },
  ],
});

export interface SendResult {
  ok: boolean;
  /** Why it failed (status code or the kind of network error); never a response body. */
  message: string;
}

/** Network failures in words (the driver's error text is not passed on). */
export const NETWORK_WHY: Record<string, string> = {
  ECONNREFUSED: 'refused',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'host name lookup failed',
  ECONNRESET: 'reset by the peer',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
};

/** POSTs an OTLP/JSON body; ok only on a 2xx answer (redirects are not followed). */
export const sendOtlp = (url: string, auth: SinkAuth, body: unknown, timeoutMs = SEND_TIMEOUT_MS): Promise<SendResult> =>
  postOtlp(url, auth, JSON.stringify(body), 'application/json', timeoutMs);

/** POSTs an encoded OTLP body (`application/json` or `application/x-protobuf`); ok only on a 2xx answer (redirects are not followed). */
export const postOtlp = async (
  url: string,
  auth: SinkAuth,
  body: string | Uint8Array,
  contentType: string,
  timeoutMs = SEND_TIMEOUT_MS,
): Promise<SendResult> => {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': contentType, ...authHeaders(auth) },
      body: typeof body === 'string' ? body : new Uint8Array(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The answer is not read: only its status counts (a sink cannot make the gateway hold a body).
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true, message: '' };
    return { ok: false, message: `the sink answered HTTP ${res.status}` };
  } catch (e) {
    const name = e instanceof Error ? e.name : '';
    if (name === 'TimeoutError' || name === 'AbortError') return { ok: false, message: `the sink did not answer within ${timeoutMs} ms` };
    const code = e && typeof e === 'object' && 'code' in e ? String((e as { code: unknown }).code) : '';
    return { ok: false, message: `cannot reach the sink${NETWORK_WHY[code] ? `: ${NETWORK_WHY[code]}` : ''}` };
  }
};
