import { GatewayError, invalidRequest } from '../core/errors.ts';
import { Sweep } from '../core/sweep.ts';
import { checkNesting } from '../core/json-depth.ts';
import { readBounded } from '../core/bounded-read.ts';

/** Request-body limits of the listener (GATEWAY_MAX_BODY, GATEWAY_BODY_TIMEOUT). */
export interface BodyLimits {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
}
export const DEFAULT_BODY_LIMITS: BodyLimits = { maxBodyBytes: 32 * 1024 * 1024, bodyTimeoutMs: 30_000 };

export const bodyTooLarge = (max: number): GatewayError =>
  new GatewayError({
    kind: 'invalid_request',
    status: 413,
    errorCode: 'request_too_large',
    message: `The request body is larger than the limit of ${max} bytes.`,
  });

const bodyTimedOut = (ms: number): GatewayError =>
  new GatewayError({
    kind: 'invalid_request',
    status: 408,
    errorCode: 'request_timeout',
    message: `The request body did not arrive within ${ms} ms.`,
  });

/** A body without Content-Length (chunked): counted as it arrives, refused past the limit. */
const readCounted = (body: ReadableStream<Uint8Array>, max: number): Promise<string> => readBounded(body, max, () => bodyTooLarge(max));

/**
 * Body deadlines: one shared sweep over the reads in progress instead of a timer and a race per
 * request. A read still going at its deadline is answered 408 within SWEEP_MS of it.
 */
const SWEEP_MS = 100;
interface Pending {
  deadline: number;
  ms: number;
  fail(e: GatewayError): void;
}
const pending = new Sweep<Pending>(SWEEP_MS, (p, now) => {
  if (now < p.deadline) return false;
  p.fail(bodyTimedOut(p.ms));
  return true;
});

/** `reading`, or the 408 once `ms` passed first. */
const within = (reading: Promise<string>, ms: number): Promise<string> =>
  new Promise<string>((resolve, reject) => {
    const p: Pending = { deadline: performance.now() + ms, ms, fail: reject };
    pending.add(p);
    reading.then(
      (text) => {
        pending.delete(p);
        resolve(text);
      },
      (e: unknown) => {
        pending.delete(p);
        reject(e instanceof GatewayError ? e : invalidRequest('The request body could not be read.', null, 'invalid_body'));
      },
    );
  });

/** Reads the body within the size and time limits. */
const readBody = (req: Request, limits: BodyLimits): Promise<string> => {
  const declared = req.headers.get('content-length');
  if (declared !== null && Number(declared) > limits.maxBodyBytes) return Promise.reject(bodyTooLarge(limits.maxBodyBytes));
  let reading: Promise<string>;
  try {
    reading = declared !== null || !req.body ? req.text() : readCounted(req.body, limits.maxBodyBytes);
  } catch {
    return Promise.reject(invalidRequest('The request body could not be read.', null, 'invalid_body'));
  }
  return within(reading, limits.bodyTimeoutMs);
};

/**
 * Reads a JSON request body; too large → 413, too slow → 408, empty or malformed → 400
 * invalid_json, nested deeper than MAX_JSON_DEPTH → 400 naming the parameter. Returns the text as
 * received (kept for the record) and the parsed value.
 */
export const readJsonBody = (req: Request, limits: BodyLimits = DEFAULT_BODY_LIMITS): Promise<{ text: string; value: unknown }> =>
  readBody(req, limits).then(parseBody);

const parseBody = (text: string): { text: string; value: unknown } => {
  if (text.trim() === '') throw invalidRequest('The request body is empty; send a JSON object.', null, 'invalid_json');
  checkNesting(text);
  try {
    return { text, value: JSON.parse(text) };
  } catch {
    throw invalidRequest('The request body is not valid JSON.', null, 'invalid_json');
  }
};
