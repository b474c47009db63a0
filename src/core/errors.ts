/**
 * The gateway's one error type. Every failure — a bad request, an unknown key, an upstream 503, a
 * malformed upstream stream, a management validation error — is a `GatewayError`. It is mapped to a
 * wire body in exactly two places: `toInferenceBody` (data plane) and `toConnectBody` (management).
 */

export type ErrorKind =
  | 'invalid_request' // 400 invalid_request_error
  | 'unsupported_endpoint' // 400 invalid_request_error / unsupported_endpoint
  | 'authentication' // 401 authentication_error
  | 'permission' // 403 permission_error
  | 'not_found' // 404 not_found_error
  | 'model_not_found' // 404 (not in catalogue) or 400 (data plane lacks it) — see status
  | 'model_not_routed' // 404
  | 'model_not_ready' // 503 + Retry-After 30
  | 'conflict' // 409
  | 'rate_limit' // 429
  | 'upstream_error' // 5xx / 4xx from upstream, normalised
  | 'bad_gateway' // 502 unparseable upstream response
  | 'unavailable' // 503
  | 'timeout' // 504
  | 'internal'; // 500

/** Connect protocol codes used by the management API. */
export type ConnectCode =
  | 'invalid_argument'
  | 'failed_precondition'
  | 'out_of_range'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'already_exists'
  | 'aborted'
  | 'resource_exhausted'
  | 'unimplemented'
  | 'internal'
  | 'unavailable';

export const CONNECT_STATUS: Record<ConnectCode, number> = {
  invalid_argument: 400,
  failed_precondition: 400,
  out_of_range: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  aborted: 409,
  resource_exhausted: 429,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
};

export interface GatewayErrorInit {
  kind: ErrorKind;
  message: string;
  status?: number;
  /** OpenAI-style `type` (machine-readable category). */
  type?: string;
  /** OpenAI-style `code` (subtype). */
  errorCode?: string;
  param?: string | null;
  /** Connect code for the management API; derived from kind when absent. */
  connectCode?: ConnectCode;
  retryAfterSeconds?: number;
  /** Whether dispatch may move on to the next target (5xx, 429, timeouts, network failures). */
  retryable?: boolean;
  /** A redacted excerpt of what the upstream sent, kept for records — never secrets. */
  upstreamBody?: string;
  upstreamStatus?: number;
  /** Machine-readable detail some clients act on (Anthropic `error.details.error_code`). */
  details?: { [key: string]: string | number | boolean | null };
}

const DEFAULTS: Record<ErrorKind, { status: number; type: string; code: string; connect: ConnectCode }> = {
  invalid_request: { status: 400, type: 'invalid_request_error', code: 'invalid_request', connect: 'invalid_argument' },
  unsupported_endpoint: { status: 400, type: 'invalid_request_error', code: 'unsupported_endpoint', connect: 'unimplemented' },
  authentication: { status: 401, type: 'authentication_error', code: 'invalid_api_key', connect: 'unauthenticated' },
  permission: { status: 403, type: 'permission_error', code: 'permission_denied', connect: 'permission_denied' },
  not_found: { status: 404, type: 'not_found_error', code: 'not_found', connect: 'not_found' },
  model_not_found: { status: 404, type: 'not_found_error', code: 'model_not_found', connect: 'not_found' },
  model_not_routed: { status: 404, type: 'not_found_error', code: 'model_not_routed', connect: 'not_found' },
  model_not_ready: { status: 503, type: 'service_unavailable_error', code: 'model_not_ready', connect: 'unavailable' },
  conflict: { status: 409, type: 'conflict_error', code: 'conflict', connect: 'already_exists' },
  rate_limit: { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', connect: 'resource_exhausted' },
  upstream_error: { status: 502, type: 'api_error', code: 'upstream_error', connect: 'unavailable' },
  bad_gateway: { status: 502, type: 'api_error', code: 'bad_gateway', connect: 'unavailable' },
  unavailable: { status: 503, type: 'service_unavailable_error', code: 'service_unavailable', connect: 'unavailable' },
  timeout: { status: 504, type: 'timeout_error', code: 'timeout', connect: 'unavailable' },
  internal: { status: 500, type: 'api_error', code: 'internal_error', connect: 'internal' },
};

export class GatewayError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly type: string;
  readonly errorCode: string;
  readonly param: string | null;
  readonly connectCode: ConnectCode;
  readonly retryAfterSeconds: number | undefined;
  readonly retryable: boolean;
  readonly upstreamBody: string | undefined;
  readonly upstreamStatus: number | undefined;
  readonly details: { [key: string]: string | number | boolean | null } | undefined;

  constructor(init: GatewayErrorInit) {
    super(init.message);
    const d = DEFAULTS[init.kind];
    this.name = 'GatewayError';
    this.kind = init.kind;
    this.status = init.status ?? d.status;
    this.type = init.type ?? d.type;
    this.errorCode = init.errorCode ?? d.code;
    this.param = init.param ?? null;
    this.connectCode = init.connectCode ?? d.connect;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.retryable = init.retryable ?? (this.status === 429 || this.status >= 500);
    this.upstreamBody = init.upstreamBody;
    this.upstreamStatus = init.upstreamStatus;
    this.details = init.details;
  }
}

// ---- constructors for the named errors of the seed -------------------------------------------

export const invalidRequest = (message: string, param: string | null = null, errorCode = 'invalid_request'): GatewayError =>
  new GatewayError({ kind: 'invalid_request', message, param, errorCode });

export const invalidApiKey = (message = 'Invalid or missing API key.'): GatewayError =>
  new GatewayError({ kind: 'authentication', message });

export const modelNotInCatalog = (model: string): GatewayError =>
  new GatewayError({ kind: 'model_not_found', message: `The model '${model}' does not exist in the catalogue.`, param: 'model' });

export const modelNotOnDataPlane = (model: string): GatewayError =>
  new GatewayError({
    kind: 'model_not_found',
    status: 400,
    type: 'invalid_request_error',
    message: `The model '${model}' is not yet in this data plane's catalog; retry shortly.`,
    param: 'model',
  });

export const modelNotRouted = (model: string): GatewayError =>
  new GatewayError({
    kind: 'model_not_routed',
    message: `No route is deployed for the model '${model}' on this data plane.`,
    param: 'model',
  });

export const modelNotReady = (model: string): GatewayError =>
  new GatewayError({
    kind: 'model_not_ready',
    message: `The route for '${model}' exists but is not active yet.`,
    param: 'model',
    retryAfterSeconds: 30,
  });

/** Every target of the route is benched by its circuit breaker (contract §14): 503 with Retry-After, no upstream request sent. */
export const circuitOpen = (model: string, waitMs: number): GatewayError => {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new GatewayError({
    kind: 'unavailable',
    errorCode: 'circuit_open',
    message: `Every upstream target of the model '${model}' is paused by its circuit breaker after failing; retry after ${seconds} s.`,
    retryAfterSeconds: seconds,
    retryable: false,
  });
};

/** Every target of the route is cooling down after the upstream's 429 with Retry-After: that 429, with the time left. */
export const coolingDown = (waitMs: number): GatewayError => {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new GatewayError({
    kind: 'rate_limit',
    message: `The upstream provider asked the gateway to slow down (429 with Retry-After); retry after ${seconds} s.`,
    retryAfterSeconds: seconds,
    retryable: false,
  });
};

export const connectError = (connectCode: ConnectCode, message: string, param: string | null = null): GatewayError => {
  const kind: ErrorKind =
    connectCode === 'invalid_argument' || connectCode === 'failed_precondition' || connectCode === 'out_of_range'
      ? 'invalid_request'
      : connectCode === 'unauthenticated'
        ? 'authentication'
        : connectCode === 'permission_denied'
          ? 'permission'
          : connectCode === 'not_found'
            ? 'not_found'
            : connectCode === 'already_exists' || connectCode === 'aborted'
              ? 'conflict'
              : connectCode === 'resource_exhausted'
                ? 'rate_limit'
                : connectCode === 'unavailable'
                  ? 'unavailable'
                  : 'internal';
  return new GatewayError({ kind, message, param, connectCode, status: CONNECT_STATUS[connectCode] });
};

// ---- the two wire mappings ---------------------------------------------------------------------

export interface InferenceErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

export const toInferenceBody = (e: GatewayError): InferenceErrorBody => ({
  error: { message: e.message, type: e.type, param: e.param, code: e.errorCode },
});

export interface ConnectErrorBody {
  code: ConnectCode;
  message: string;
}

export const toConnectBody = (e: GatewayError): ConnectErrorBody => ({ code: e.connectCode, message: e.message });

/** Node-style socket codes and postgres.js connection codes: the database cannot be reached. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);
/** SQLSTATEs that mean "the server is not there for you right now", not "your query is wrong". */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * Whether an error (or one of its causes: drizzle wraps driver errors) says the database cannot be
 * reached: a refused, reset or timed-out connection (postgres.js codes), SQLSTATE class 08
 * (connection exception), an administrator or crash shutdown, "cannot connect now", too many
 * connections, or an embedded PGlite that has been closed.
 */
export const isDatabaseUnavailable = (e: unknown): boolean => {
  let cur: unknown = e;
  for (let depth = 0; depth < 6 && cur !== null && typeof cur === 'object'; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && (CONNECTION_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)))
      return true;
    const message = (cur as { message?: unknown }).message;
    if (typeof message === 'string' && /^PGlite is closed/.test(message)) return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
};

/** The database cannot be reached: 503 `unavailable`, with a generic message (never the driver's text). */
export const databaseUnavailable = (): GatewayError =>
  new GatewayError({ kind: 'unavailable', message: 'The database is unavailable; try again shortly.', connectCode: 'unavailable' });

/**
 * Anything thrown becomes a GatewayError; unknown failures never leak their message. A database
 * that cannot be reached is `unavailable` (503), not `internal`.
 */
export const asGatewayError = (e: unknown): GatewayError => {
  if (e instanceof GatewayError) return e;
  if (isDatabaseUnavailable(e)) return databaseUnavailable();
  return new GatewayError({ kind: 'internal', message: 'Internal gateway error.' });
};
