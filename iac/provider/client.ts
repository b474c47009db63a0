/**
 * The management API over Connect JSON (`POST {endpoint}/{service}/{Operation}`), with retries and
 * exponential backoff on connection errors and 5xx answers. Errors carry the Connect code, so a
 * read can tell "gone" (`not_found`) from a failure.
 */

export const ADMIN = 'admin.v1.AdminService';
export const APIKEY = 'apikey.v1.ApiKeyService';

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export type Json = null | string | number | boolean | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export interface ClientOptions {
  endpoint: string;
  token: string;
  /** Attempts in all (first try included). */
  attempts?: number;
  baseDelayMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class GatewayClient {
  readonly endpoint: string;
  private readonly token: string;
  private readonly attempts: number;
  private readonly baseDelayMs: number;

  constructor(o: ClientOptions) {
    this.endpoint = o.endpoint.replace(/\/+$/, '');
    this.token = o.token;
    this.attempts = o.attempts ?? 5;
    this.baseDelayMs = o.baseDelayMs ?? 200;
  }

  async call(operation: string, body: JsonObject, service = ADMIN): Promise<JsonObject> {
    let last: unknown;
    for (let attempt = 0; attempt < this.attempts; attempt++) {
      if (attempt > 0) await sleep(this.baseDelayMs * 2 ** (attempt - 1) * (0.75 + Math.random() / 2));
      let res: Response;
      try {
        res = await fetch(`${this.endpoint}/${service}/${operation}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
          body: JSON.stringify(body),
        });
      } catch (e) {
        last = new ApiError('unavailable', `${operation}: cannot reach ${this.endpoint} (${e instanceof Error ? e.name : 'error'})`, 0);
        continue;
      }
      const text = await res.text();
      let parsed: JsonObject = {};
      try {
        parsed = JSON.parse(text) as JsonObject;
      } catch {
        parsed = {};
      }
      if (res.status === 200) return parsed;
      const code = typeof parsed.code === 'string' ? parsed.code : `http_${res.status}`;
      const message = typeof parsed.message === 'string' ? parsed.message : `HTTP ${res.status}`;
      const err = new ApiError(code, `${operation}: ${code}: ${message}`, res.status);
      if (res.status >= 500) {
        last = err;
        continue;
      }
      throw err;
    }
    throw last instanceof Error ? last : new ApiError('unavailable', `${operation}: failed`, 0);
  }
}

export const isNotFound = (e: unknown): boolean => e instanceof ApiError && e.code === 'not_found';
