/**
 * Access tokens obtained by an adapter's `authorize` step (Vertex service accounts, watsonx IAM).
 * Cached per connection and key (a rotated key never reuses the old token) until shortly before
 * expiry; concurrent requests share one exchange. Failures are not cached.
 */
import { createHash } from 'node:crypto';
import { GatewayError } from '../core/errors.ts';
import { redactExcerpt } from './redact.ts';
import { providerMisconfigured } from './upstream-error.ts';
import type { ConnectionConfig } from './types.ts';

export interface AccessToken {
  token: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** Tokens are refreshed this long before they expire. */
export const TOKEN_REFRESH_MARGIN_MS = 60_000;

export class TokenCache {
  private readonly tokens = new Map<string, AccessToken>();
  private readonly pending = new Map<string, Promise<AccessToken>>();

  constructor(private readonly now: () => number = Date.now) {}

  static keyFor(connection: ConnectionConfig): string {
    const digest = createHash('sha256')
      .update(connection.apiKey ?? '')
      .digest('hex')
      .slice(0, 16);
    return `${connection.id}:${digest}`;
  }

  async get(key: string, exchange: () => Promise<AccessToken>): Promise<string> {
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt - TOKEN_REFRESH_MARGIN_MS > this.now()) return cached.token;
    let p = this.pending.get(key);
    if (!p) {
      p = exchange().finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    const fresh = await p;
    this.prune();
    this.tokens.set(key, fresh);
    return fresh.token;
  }

  clear(): void {
    this.tokens.clear();
  }

  private prune(): void {
    const now = this.now();
    for (const [k, t] of this.tokens) if (t.expiresAt <= now) this.tokens.delete(k);
  }
}

/** A failed token exchange: 502 `upstream_auth_failed`; the message never carries a secret. */
export const tokenExchangeFailed = (
  provider: string,
  detail: string,
  status?: number,
  body?: string,
  secrets: readonly string[] = [],
): GatewayError =>
  new GatewayError({
    kind: 'upstream_error',
    status: 502,
    type: 'api_error',
    errorCode: 'upstream_auth_failed',
    message: `Provider '${provider}': ${detail}`,
    retryable: true,
    upstreamBody: body === undefined ? undefined : redactExcerpt(body, secrets),
    upstreamStatus: status,
  });

/** A network failure on the way to the token endpoint; time-outs and cancellations pass through. */
export const unreachable = (provider: string, host: string, e: unknown): GatewayError => {
  if (e instanceof GatewayError && e.kind !== 'unavailable') return e;
  return tokenExchangeFailed(provider, `could not reach the token endpoint at ${host}.`);
};

/** The host of a token endpoint URL, for messages; a malformed URL is a configuration error. */
export const tokenHost = (provider: string, url: string): string => {
  try {
    return new URL(url).host;
  } catch {
    throw providerMisconfigured(provider, 'the token endpoint URL is not a valid URL.');
  }
};

/** `application/x-www-form-urlencoded` body. */
export const formBody = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
