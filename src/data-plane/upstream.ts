import { GatewayError } from '../core/errors.ts';
import type { CanonicalRequest } from '../canonical/types.ts';
import type { HttpProviderAdapter, UpstreamHttpRequest, UpstreamTarget } from '../providers/types.ts';

/**
 * The only module that performs upstream HTTP. Network failures and time-outs become retryable
 * GatewayErrors; the URL and headers (which may carry credentials) never appear in messages.
 */
export const sendUpstream = async (req: UpstreamHttpRequest, signal: AbortSignal): Promise<Response> => {
  try {
    return await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, signal, redirect: 'manual' });
  } catch (e) {
    throw upstreamFailure(e, signal);
  }
};

/** Maps an abort or network error to the right GatewayError. */
export const upstreamFailure = (e: unknown, signal: AbortSignal): GatewayError => {
  if (e instanceof GatewayError) return e;
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof GatewayError) return reason;
    return new GatewayError({ kind: 'timeout', message: 'The upstream request was cancelled.' });
  }
  return new GatewayError({ kind: 'unavailable', message: 'Could not reach the upstream provider.', retryable: true });
};

export const timeoutError = (ms: number): GatewayError =>
  new GatewayError({ kind: 'timeout', message: `The upstream provider did not respond within ${ms} ms.`, retryable: true });

export const clientClosed = (): GatewayError =>
  new GatewayError({ kind: 'invalid_request', status: 499, message: 'The client closed the request.', errorCode: 'client_closed', retryable: false });

/** Token exchanges for adapters (`authorize`), through the same single HTTP module. */
export const tokenHttp =
  (signal: AbortSignal) =>
  async (req: UpstreamHttpRequest): Promise<{ status: number; body: string }> => {
    const res = await sendUpstream(req, signal);
    return { status: res.status, body: await res.text() };
  };

/** Builds the upstream request, running the adapter's async credential step when it has one. */
export const prepareRequest = async (
  adapter: HttpProviderAdapter,
  request: CanonicalRequest,
  target: UpstreamTarget,
  signal: AbortSignal,
): Promise<UpstreamHttpRequest> => {
  const built = adapter.buildRequest(request, target);
  return adapter.authorize ? adapter.authorize(built, target, tokenHttp(signal)) : built;
};

/** Largest upstream answer read into memory (GATEWAY_MAX_UPSTREAM_RESPONSE); set at start-up. */
let maxUpstreamResponseBytes = 16 * 1024 * 1024;
export const setMaxUpstreamResponse = (bytes: number): void => {
  maxUpstreamResponseBytes = bytes;
};

const tooLargeUpstream = (max: number): GatewayError =>
  new GatewayError({ kind: 'bad_gateway', message: `The upstream provider's answer is larger than the limit of ${max} bytes.`, retryable: false });

/**
 * Reads an upstream answer as text, refusing (502) one larger than the limit: by Content-Length
 * before reading, else by counting while reading (the upstream request is then cancelled).
 */
export const readUpstreamText = async (res: Response, signal: AbortSignal): Promise<string> => {
  const max = maxUpstreamResponseBytes;
  const declared = res.headers.get('content-length');
  if (declared !== null && Number(declared) > max) {
    res.body?.cancel().catch(() => undefined);
    throw tooLargeUpstream(max);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        reader.cancel().catch(() => undefined);
        throw tooLargeUpstream(max);
      }
      chunks.push(value);
    }
  } catch (e) {
    throw upstreamFailure(e, signal);
  }
  return Buffer.concat(chunks, total).toString('utf8');
};
