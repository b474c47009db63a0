import type { Static, TSchema } from '@sinclair/typebox';
import { compiled, departure } from './check.ts';
import { PROTOCOL, protocolPath, type ProtocolInput, type ProtocolName, type ProtocolOutput } from './dataplane.ts';
import { OPS, type OpInput, type OpName, type OpOutput } from './index.ts';

/**
 * The one client of the management API (Connect JSON: `POST {endpoint}/{service}/{Operation}`),
 * built on the operation specs of src/api: the Terraform provider, `audit:verify`, the data
 * plane's pull, record shipping and stored conversations (the data plane protocol of
 * dataplane.ts, `protocol`), the install command and the console use it. Connection errors
 * and 5xx answers are retried with exponential backoff and jitter; any other refusal is an
 * `ApiError` carrying the Connect code (so a read can tell `not_found` from a failure). Typed calls
 * check the answer against the operation's response schema, so what they return is what the type says.
 */

export type Json = null | string | number | boolean | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export class ApiError extends Error {
  constructor(
    /** The Connect code (`not_found`, `invalid_argument`, …), `unavailable` when the plane could not be reached. */
    readonly code: string,
    message: string,
    /** The HTTP status (0 when no answer came). */
    readonly status: number,
    /** What the refusal said: its `message` as sent and, for a refused service account, its `reason` (`revoked`, `expired`). */
    readonly detail: { message?: string; reason?: string } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const isNotFound = (e: unknown): boolean => e instanceof ApiError && e.code === 'not_found';

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: ApiError };

export interface ClientOptions {
  endpoint: string;
  /** A bearer token, or a function giving a current one for each call (e.g. a freshly signed JWT). */
  token: string | (() => Promise<string>);
  /** Attempts in all, first try included (default 5). */
  attempts?: number;
  baseDelayMs?: number;
  /** Per attempt (default 30 s). */
  timeoutMs?: number;
  /** Aborts every call (e.g. at shutdown). */
  signal?: AbortSignal;
}

/** What one call may set differently from the client's options. */
export interface CallOptions {
  /** Per attempt (e.g. longer for a held Pull). */
  timeoutMs?: number;
  attempts?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

const isOpName = (s: string): s is OpName => Object.hasOwn(OPS, s);
const serviceOf = (operation: string): string => (isOpName(operation) ? OPS[operation].service : 'admin.v1.AdminService');

export class ManagementClient {
  readonly endpoint: string;
  readonly #token: ClientOptions['token'];
  readonly #attempts: number;
  readonly #baseDelayMs: number;
  readonly #timeoutMs: number;
  readonly #signal: AbortSignal | undefined;

  constructor(o: ClientOptions) {
    this.endpoint = o.endpoint.replace(/\/+$/, '');
    this.#token = o.token;
    this.#attempts = o.attempts ?? 5;
    this.#baseDelayMs = o.baseDelayMs ?? 200;
    this.#timeoutMs = o.timeoutMs ?? 30_000;
    this.#signal = o.signal;
  }

  /** A typed call: the input as its operation's schema types it; the answer checked against its response schema. */
  async call<N extends OpName>(operation: N, input: OpInput<N>): Promise<OpOutput<N>> {
    const output: (typeof OPS)[N]['output'] = OPS[operation].output;
    const body = await this.post(`/${OPS[operation].service}/${operation}`, JSON.stringify(input), operation);
    return this.#checked(output, body, operation);
  }

  /** `call` with the refusal as a value instead of a throw. */
  async tryCall<N extends OpName>(operation: N, input: OpInput<N>): Promise<Outcome<OpOutput<N>>> {
    try {
      return { ok: true, value: await this.call(operation, input) };
    } catch (e) {
      if (e instanceof ApiError) return { ok: false, error: e };
      throw e;
    }
  }

  /**
   * An untyped call by operation name, for callers that build bodies generically (the Terraform
   * provider maps attributes to fields); the service is the operation's own unless given.
   */
  async callJson(operation: string, body: JsonObject, service = serviceOf(operation)): Promise<JsonObject> {
    return this.post(`/${service}/${operation}`, JSON.stringify(body), operation);
  }

  /** Every item of a paged list operation (`pageToken` / `nextPageToken`), page by page. */
  async *pages(operation: string, body: JsonObject, itemsKey: string): AsyncGenerator<Json> {
    for (let pageToken = ''; ; ) {
      const page = await this.callJson(operation, pageToken ? { ...body, pageToken } : body);
      const items = page[itemsKey];
      if (Array.isArray(items)) yield* items;
      const next = page.nextPageToken;
      if (typeof next !== 'string' || next === '') return;
      pageToken = next;
    }
  }

  /**
   * A call of the data plane protocol (dataplane.ts): the body as its request schema types it, the
   * answer checked against its response schema. Refusals are `ApiError`s as for `call` (a 503 of
   * PushRecords: the management plane did not store the records; a 401: the account is refused,
   * `detail.reason` says why).
   */
  async protocol<N extends ProtocolName>(name: N, input: ProtocolInput<N>, o: CallOptions = {}): Promise<ProtocolOutput<N>> {
    return this.protocolText(name, JSON.stringify(input), o);
  }

  /**
   * `protocol` with a body already serialised (record batches are kept on disk as JSON text and
   * sent as they are, not parsed again).
   */
  async protocolText<N extends ProtocolName>(name: N, body: string, o: CallOptions = {}): Promise<ProtocolOutput<N>> {
    const output: (typeof PROTOCOL)[N]['output'] = PROTOCOL[name].output;
    const answer = await this.#send(protocolPath(name), { method: 'POST', body }, name, o);
    return this.#checked(output, answer, name);
  }

  /** A GET of a JSON document of the management listener (e.g. `/.well-known/jwks.json`). */
  async getJson(path: string): Promise<JsonObject> {
    return this.#send(path, { method: 'GET' }, `GET ${path}`);
  }

  /** A POST of a JSON body to a path of the management listener; the answer must be a JSON object. */
  async post(path: string, body: string, what = path): Promise<JsonObject> {
    return this.#send(path, { method: 'POST', body }, what);
  }

  #checked<S extends TSchema>(schema: S, body: JsonObject, operation: string): Static<S> {
    const check = compiled(schema);
    if (check.Check(body)) return body;
    const at = departure(check, body);
    throw new ApiError('internal', `${operation}: the answer does not match its schema (${at.path}: ${at.message})`, 200);
  }

  async #send(path: string, init: { method: string; body?: string }, what: string, o: CallOptions = {}): Promise<JsonObject> {
    let last: ApiError | undefined;
    const attempts = o.attempts ?? this.#attempts;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await sleep(this.#baseDelayMs * 2 ** (attempt - 1) * (0.75 + Math.random() / 2));
      if (this.#signal?.aborted) break;
      const token = typeof this.#token === 'string' ? this.#token : await this.#token();
      const timeout = AbortSignal.timeout(o.timeoutMs ?? this.#timeoutMs);
      let res: Response;
      try {
        res = await fetch(`${this.endpoint}${path}`, {
          ...init,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          signal: this.#signal ? AbortSignal.any([timeout, this.#signal]) : timeout,
        });
      } catch (e) {
        last = new ApiError('unavailable', `${what}: cannot reach ${this.endpoint} (${e instanceof Error ? e.name : 'error'})`, 0);
        continue;
      }
      let text: string;
      try {
        text = await res.text();
      } catch (e) {
        // The connection ended (or the time-out fired) while the answer was read: retried like an unreachable endpoint.
        last = new ApiError(
          'unavailable',
          `${what}: the answer from ${this.endpoint} was cut off (${e instanceof Error ? e.name : 'error'})`,
          0,
        );
        continue;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      const obj = isObject(parsed) ? parsed : {};
      if (res.status === 200 && isObject(parsed)) return parsed;
      const code = typeof obj.code === 'string' ? obj.code : res.status === 200 ? 'internal' : `http_${res.status}`;
      const message =
        typeof obj.message === 'string' ? obj.message : res.status === 200 ? 'the answer is not a JSON object' : `HTTP ${res.status}`;
      last = new ApiError(code, `${what}: ${code}: ${message}`, res.status, {
        ...(typeof obj.message === 'string' ? { message: obj.message } : {}),
        ...(typeof obj.reason === 'string' ? { reason: obj.reason } : {}),
      });
      if (res.status < 500) throw last;
    }
    throw last ?? new ApiError('unavailable', `${what}: aborted`, 0);
  }
}
