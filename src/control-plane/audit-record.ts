import { uuid } from '../core/ids.ts';
import type { NewAuditLogRow } from '../store/schema/audit.ts';
import type { Principal } from './auth.ts';
import type { AuditResource } from '../api/audit-resources.ts';

/**
 * What an audit entry says about the call that caused it, and how request and response bodies are
 * made safe to keep. Used by the mutation path (mutation.ts) for applied and refused calls alike.
 */

/** The request-level facts of one management call (one per HTTP request; see `callInfo`). */
export interface CallInfo {
  /** The gateway's id for this request: `correlationId` of its audit entry, the X-Request-ID response header. */
  requestId: string;
  /** The client's own X-Request-ID, when it sent a well-formed one (kept in the entry's metadata). */
  clientRequestId: string;
  sourceIp: string;
  userAgent: string;
  endpoint: string;
  httpMethod: string;
}

const CLIENT_ID = /^[\x21-\x7e]{1,128}$/;

export interface ServerLike {
  requestIP?: (request: Request) => { address: string } | null;
}

const calls = new WeakMap<Request, CallInfo>();

/**
 * The facts of a request, computed once per request. `sourceIp` is the TCP peer (X-Forwarded-For is
 * not trusted: a management plane behind a proxy records the proxy's address).
 */
export const callInfo = (request: Request, server?: ServerLike | null): CallInfo => {
  let info = calls.get(request);
  if (!info) {
    const client = request.headers.get('x-request-id') ?? '';
    let sourceIp = '';
    try {
      sourceIp = server?.requestIP?.(request)?.address ?? '';
    } catch {
      sourceIp = '';
    }
    info = {
      requestId: uuid(),
      clientRequestId: CLIENT_ID.test(client) ? client : '',
      sourceIp,
      userAgent: (request.headers.get('user-agent') ?? '').slice(0, 512),
      endpoint: new URL(request.url).pathname.slice(0, 512),
      httpMethod: request.method,
    };
    calls.set(request, info);
  }
  return info;
};

export type ActorType = 'user' | 'system' | 'service_account';

export interface Actor {
  actorType: ActorType;
  userId: string;
  userEmail: string;
  /** Extra facts about the credential (kept in the entry's metadata). */
  facts: Record<string, unknown>;
}

/** The user id recorded for calls with the platform-admin token. */
export const PLATFORM_ADMIN_USER = 'platform-admin';

/** The gateway itself (key rotation and other work no caller asked for directly). */
export const SYSTEM_ACTOR: Actor = { actorType: 'system', userId: 'system', userEmail: '', facts: { principal: 'system' } };

/** Who made a call: the authenticated principal, or an unknown caller when authentication failed. */
export const actorOf = (principal: Principal | undefined): Actor => {
  if (!principal) return { actorType: 'user', userId: '', userEmail: '', facts: { principal: 'unauthenticated' } };
  switch (principal.kind) {
    case 'platform_admin':
      return principal.userId
        ? { actorType: 'user', userId: principal.userId, userEmail: '', facts: { principal: 'platform_admin', via: 'sso' } }
        : { actorType: 'user', userId: PLATFORM_ADMIN_USER, userEmail: '', facts: { principal: 'platform_admin' } };
    case 'anonymous':
      return { actorType: 'user', userId: '', userEmail: '', facts: { principal: 'anonymous' } };
    case 'user':
      return principal.serviceAccountId
        ? {
            actorType: 'user',
            userId: principal.userId,
            userEmail: principal.userId,
            facts: { principal: 'service_account', customerId: principal.customerId, serviceAccountId: principal.serviceAccountId },
          }
        : {
            actorType: 'user',
            userId: principal.userId,
            userEmail: '',
            facts: { principal: 'user_token', customerId: principal.customerId },
          };
    case 'system':
      return SYSTEM_ACTOR;
  }
};

export const REDACTED = '[REDACTED]';

/** Property names whose value is a secret (compared lower-case with `_` and `-` removed). */
const SECRET_NAMES = new Set([
  'apikey',
  'secret',
  'clientsecret',
  'authvalue',
  'privatekey',
  'privatekeypem',
  'privatekeywrapped',
  'routerkey',
  'internalapikey',
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'password',
  'passphrase',
  'authorization',
  'credentials',
]);
const SECRET_SUFFIXES = ['apikey', 'secret', 'password', 'privatekey', 'token', 'authvalue'];

const isSecretName = (k: string): boolean => {
  const n = k.toLowerCase().replace(/[-_]/g, '');
  return SECRET_NAMES.has(n) || SECRET_SUFFIXES.some((s) => n.endsWith(s));
};

/** Values that are secrets whatever their property name: inference keys, JWTs, PEM keys. */
const SECRET_VALUE =
  /^(sk-[A-Za-z0-9_-]{16,}|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*)$/;

/** Bodies larger than this (as JSON text) are recorded as a size only. */
export const MAX_RECORDED_BODY = 64 * 1024;
const MAX_DEPTH = 32;

/**
 * A copy of a request or response body with every secret replaced by `[REDACTED]`: values under a
 * secret-named property (apiKey, secret, authValue, privateKey, routerKey, internalApiKey, tokens,
 * passwords, …), every value of a `headers` map (connection `options.headers` carry credentials),
 * and any string that looks like a key, a JWT or a PEM private key.
 */
/**
 * Text as PostgreSQL (jsonb and text) can hold it: well-formed UTF-16 (lone surrogates become
 * U+FFFD) and no NUL. A refused call's body may carry either, and its entry must still be written.
 */
export const storable = (s: string): string => {
  const w = s.isWellFormed() ? s : s.toWellFormed();
  return w.includes('\u0000') ? w.replaceAll('\u0000', '\uFFFD') : w;
};

export const redact = (value: unknown, depth = 0): unknown => {
  if (typeof value === 'string') return SECRET_VALUE.test(value) ? REDACTED : storable(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    let r: unknown;
    if (v === null || v === undefined || v === '') r = v;
    else if (isSecretName(k)) r = REDACTED;
    else if (k.toLowerCase() === 'headers' && typeof v === 'object' && !Array.isArray(v))
      r = Object.fromEntries(Object.keys(v as Record<string, unknown>).map((h) => [h, REDACTED]));
    else r = redact(v, depth + 1);
    Object.defineProperty(out, storable(k), { value: r, enumerable: true, writable: true, configurable: true });
  }
  return out;
};

/** A body as kept in an entry: redacted, an object (`{}` when absent), and bounded in size. */
export const recordedBody = (value: unknown): Record<string, unknown> => {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) return {};
  const safe = redact(value) as Record<string, unknown>;
  const size = JSON.stringify(safe)?.length ?? 0;
  return size > MAX_RECORDED_BODY ? { truncated: true, size } : safe;
};

/** What an operation declares about itself for its audit entries. */
export interface AuditTarget {
  actionType: string;
  /** A declared resource's audit name (src/api/audit-resources.ts). */
  resourceType: AuditResource;
  resourceId: string;
}

export interface Outcome {
  statusCode: number;
  success: boolean;
  errorMessage: string;
  responseData: Record<string, unknown>;
}

/** One audit row. `timestamp` is taken when the row is built (millisecond precision). */
export const auditRow = (
  call: CallInfo | undefined,
  actor: Actor,
  target: AuditTarget,
  requestBody: unknown,
  outcome: Outcome,
  extra: Record<string, unknown> = {},
): NewAuditLogRow => ({
  timestamp: new Date(),
  userId: storable(actor.userId),
  userEmail: storable(actor.userEmail),
  actorType: actor.actorType,
  actionType: target.actionType,
  resourceType: target.resourceType,
  resourceId: storable(target.resourceId.slice(0, 512)),
  endpoint: storable(call?.endpoint ?? ''),
  httpMethod: call?.httpMethod ?? '',
  statusCode: outcome.statusCode,
  success: outcome.success,
  errorMessage: storable(outcome.errorMessage.slice(0, 2048)),
  correlationId: call?.requestId ?? uuid(),
  sourceIp: call?.sourceIp ?? '',
  userAgent: storable(call?.userAgent ?? ''),
  metadata: recordedBody({ ...actor.facts, ...(call?.clientRequestId ? { clientRequestId: call.clientRequestId } : {}), ...extra }),
  requestBody: recordedBody(requestBody),
  requestParams: {},
  responseData: outcome.responseData,
});
