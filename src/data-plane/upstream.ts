import { inwardAddress, knownInward } from '../core/addresses.ts';
import { GatewayError } from '../core/errors.ts';
import { log } from '../core/log.ts';
import type { CanonicalRequest } from '../canonical/types.ts';
import { attemptSecrets, maskSecrets, secretForms } from '../providers/redact.ts';
import { scrubError, upstreamTooLarge } from '../providers/upstream-error.ts';
import { upstreamBounds } from '../core/upstream-bounds.ts';
import type { ConnectionConfig, HttpProviderAdapter, TokenHttp, UpstreamHttpRequest, UpstreamTarget } from '../providers/types.ts';
import { readBounded } from '../core/bounded-read.ts';

/**
 * The only module that performs upstream HTTP. Network failures and time-outs become retryable
 * GatewayErrors; the URL and headers (which may carry credentials) never appear in messages.
 *
 * Every request first passes the address check of contract §3.1: unless the connection allows
 * private addresses, a host that is or resolves to a loopback, private, link-local, shared or
 * metadata address is refused (resolutions are cached briefly, see core/addresses.ts). Redirects
 * are never followed (`redirect: 'manual'`), so a 3xx cannot lead inward either.
 */
const forbiddenAddress = (connection: ConnectionConfig, what: string): GatewayError =>
  new GatewayError({
    kind: 'upstream_error',
    status: 502,
    errorCode: 'upstream_address_forbidden',
    message: `The upstream address of connection '${connection.name}' is ${what}; only the platform admin may allow such addresses.`,
    retryable: true,
  });

const unreachable = (): GatewayError =>
  new GatewayError({ kind: 'unavailable', message: 'Could not reach the upstream provider.', retryable: true });

/**
 * Refuses an inward address unless the connection (or the operator, via the snapshot) allows it.
 * Undefined when the request may go at once (allowed, or a fresh verdict says public); otherwise
 * the check in flight, rejected with the refusal.
 */
export const checkAddress = (url: string, connection: ConnectionConfig): Promise<void> | undefined => {
  if (connection.allowPrivate === true) return undefined;
  const known = knownInward(url);
  if (known) return known.inward ? Promise.reject(forbiddenAddress(connection, `a ${known.inward.class} address`)) : undefined;
  return inwardAddress(url).then(
    (inward) => {
      if (inward) throw forbiddenAddress(connection, `a ${inward.class} address`);
    },
    () => {
      throw unreachable();
    },
  );
};

const post = (req: UpstreamHttpRequest, signal: AbortSignal): Promise<Response> => {
  let sent: Promise<Response>;
  try {
    sent = fetch(req.url, { method: req.method, headers: req.headers, body: req.body, signal, redirect: 'manual' });
  } catch (e) {
    return Promise.reject(upstreamFailure(e, signal));
  }
  return sent.catch((e: unknown) => {
    throw upstreamFailure(e, signal);
  });
};

/** What fetch refuses in a header value: NUL, CR, LF, or a character beyond Latin-1 (such as `…`). */
const UNSENDABLE = /[\u0000\n\r]|[^\u0000-\u00ff]/;

/**
 * A header the request cannot carry: a credential stored before such values were refused at save
 * (contract §17). Said as what it is, naming the connection and the header (never the value), and
 * logged — not "could not reach the upstream".
 */
const unsendable = (connection: ConnectionConfig, header: string): GatewayError => {
  log.every(
    `upstream-unsendable-${connection.name}`,
    'error',
    'a stored credential of a connection cannot be sent as an HTTP header value; save it again',
    { connection: connection.name, header },
  );
  return new GatewayError({
    kind: 'upstream_error',
    status: 502,
    errorCode: 'upstream_credential_unsendable',
    message: `The credential of connection '${connection.name}' cannot be sent as an HTTP header value (header '${header}': a control or non-ASCII character); an admin must save it again.`,
    retryable: true,
  });
};

export const sendUpstream = (req: UpstreamHttpRequest, signal: AbortSignal, connection: ConnectionConfig): Promise<Response> => {
  for (const name in req.headers) if (UNSENDABLE.test(req.headers[name] ?? '')) return Promise.reject(unsendable(connection, name));
  const checking = checkAddress(req.url, connection);
  return checking ? checking.then(() => post(req, signal)) : post(req, signal);
};

/** Maps an abort or network error to the right GatewayError. */
export const upstreamFailure = (e: unknown, signal: AbortSignal): GatewayError => {
  if (e instanceof GatewayError) return e;
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof GatewayError) return reason;
    return new GatewayError({ kind: 'timeout', message: 'The upstream request was cancelled.' });
  }
  return unreachable();
};

export const timeoutError = (ms: number): GatewayError =>
  new GatewayError({ kind: 'timeout', message: `The upstream provider did not respond within ${ms} ms.`, retryable: true });

export const clientClosed = (): GatewayError =>
  new GatewayError({
    kind: 'invalid_request',
    status: 499,
    message: 'The client closed the request.',
    errorCode: 'client_closed',
    retryable: false,
  });

/**
 * One attempt against one connection: sends its requests (token exchanges included) and knows
 * every credential it sent, so that whatever the upstream says back can be scrubbed by value
 * before it reaches a client, a record, a span or a log. The secret set is built only on the
 * error path, and again only when another request was sent since.
 */
export class UpstreamCall {
  readonly #sent: UpstreamHttpRequest[] = [];
  #forms: string[] | undefined;
  #formsFor = -1;
  /** Called once, before the first request goes out (the attempt is reported to the observers then). */
  beforeFirstSend: (() => void) | undefined;
  /** Headers every request of this attempt carries besides its own (W3C trace context), set by observers. */
  headers: Record<string, string> | undefined;

  constructor(
    readonly connection: ConnectionConfig,
    readonly signal: AbortSignal,
  ) {}

  send(req: UpstreamHttpRequest): Promise<Response> {
    const before = this.beforeFirstSend;
    if (before) {
      this.beforeFirstSend = undefined;
      before();
    }
    const sent = this.headers ? { ...req, headers: { ...req.headers, ...this.headers } } : req;
    this.#sent.push(sent);
    return sendUpstream(sent, this.signal, this.connection);
  }

  /** The URL of the last request sent (the attempt's own call after any token exchange). */
  get url(): string | undefined {
    return this.#sent.at(-1)?.url;
  }

  /** Token exchanges for adapters (`authorize`); a failed exchange's body is scrubbed before the adapter sees it. */
  async exchange(req: UpstreamHttpRequest): Promise<{ status: number; body: string }> {
    const res = await this.send(req);
    const body = await readUpstreamText(res, this.signal);
    return { status: res.status, body: res.ok ? body : this.scrub(body) };
  }

  /** `exchange` as the adapter's TokenHttp, made only for adapters with a credential step. */
  get tokenHttp(): TokenHttp {
    return (req) => this.exchange(req);
  }

  /**
   * Builds the upstream request, running the adapter's async credential step when it has one;
   * without one the request is used as built (no promise).
   */
  prepare(
    built: UpstreamHttpRequest,
    adapter: HttpProviderAdapter,
    target: UpstreamTarget,
  ): UpstreamHttpRequest | Promise<UpstreamHttpRequest> {
    return adapter.authorize ? adapter.authorize(built, target, this.tokenHttp) : built;
  }

  #secretForms(): string[] {
    if (this.#forms === undefined || this.#formsFor !== this.#sent.length) {
      this.#forms = secretForms(attemptSecrets(this.connection, this.#sent));
      this.#formsFor = this.#sent.length;
    }
    return this.#forms;
  }

  /** Upstream text with every credential of this attempt masked. */
  scrub(text: string): string {
    return text === '' ? text : maskSecrets(text, this.#secretForms());
  }

  /** Any failure of this attempt as a GatewayError whose upstream text carries none of its credentials. */
  fail(e: unknown): GatewayError {
    return scrubError(upstreamFailure(e, this.signal), this.#secretForms());
  }
}

/** Builds the upstream request of a chat call, credentials included. */
export const prepareRequest = (
  adapter: HttpProviderAdapter,
  request: CanonicalRequest,
  target: UpstreamTarget,
  call: UpstreamCall,
): UpstreamHttpRequest | Promise<UpstreamHttpRequest> => call.prepare(adapter.buildRequest(request, target), adapter, target);

const tooLargeUpstream = (max: number): GatewayError =>
  upstreamTooLarge("The upstream provider's answer", max, 'GATEWAY_MAX_UPSTREAM_RESPONSE');

/**
 * Reads an upstream answer (or error body) as text, refusing (502, retryable) one larger than the
 * limit: by Content-Length before reading, else by counting while reading (the upstream request
 * is then cancelled).
 * An answer whose declared length is within the limit and that is not compressed (fetch
 * decompresses, and Content-Length then counts the compressed bytes) is read natively
 * (`res.text()`): the HTTP client delivers no more than the declared length.
 */
export const readUpstreamText = (res: Response, signal: AbortSignal): Promise<string> => {
  const max = upstreamBounds.maxUpstreamResponseBytes;
  const failed = (e: unknown): never => {
    throw upstreamFailure(e, signal);
  };
  try {
    const declared = res.headers.get('content-length');
    if (declared !== null) {
      const length = Number(declared);
      if (length > max) {
        res.body?.cancel().catch(() => undefined);
        return Promise.reject(tooLargeUpstream(max));
      }
      if (length >= 0 && !res.headers.has('content-encoding')) return res.text().catch(failed);
    }
    if (!res.body) return Promise.resolve('');
    return readBounded(res.body, max, () => tooLargeUpstream(max)).catch(failed);
  } catch (e) {
    return Promise.reject(upstreamFailure(e, signal));
  }
};
