import { createRemoteJWKSet, decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import { errors as joseErrors } from 'jose';
import * as client from 'openid-client';
import type { OidcConfig } from '../config/oidc.ts';
import { connectError } from '../core/errors.ts';
import { log } from '../core/log.ts';

/**
 * The configured OpenID Provider (contract §16): its discovery document, read with openid-client
 * (an `http://` issuer is allowed only on loopback, see config/oidc.ts) and kept; ID tokens verified
 * with jose against the JWKS the document names. Every refusal is logged with its reason (never
 * the token) and answered `unauthenticated`.
 */

/** Clock skew accepted on `exp`, `iat` and `nbf`. */
export const CLOCK_SKEW_SECONDS = 60;

/** Asymmetric signatures only: `alg: none` and HMAC (a shared secret anyone with the client secret knows) are refused. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export interface VerifiedIdentity {
  userId: string;
  admin: boolean;
  /** The token's expiry (seconds since the epoch). */
  exp: number;
}

const reasonOf = (e: unknown): string => {
  if (e instanceof joseErrors.JWTExpired) return 'expired';
  if (e instanceof joseErrors.JWTClaimValidationFailed)
    return `claim '${e.claim}' ${e.reason === 'check_failed' ? 'does not match' : e.reason}`;
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (e instanceof joseErrors.JWKSNoMatchingKey) return 'not signed by a key of the issuer';
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature does not verify';
  if (e instanceof joseErrors.JWKSTimeout) return "the issuer's keys could not be fetched";
  if (e instanceof joseErrors.JOSEError) return `malformed (${e.code})`;
  return 'could not be verified';
};

export class OidcIssuer {
  #config: Promise<client.Configuration> | undefined;
  #jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  constructor(readonly settings: OidcConfig) {}

  /** The discovery document, read once (a failed read is retried on the next call). */
  configuration(): Promise<client.Configuration> {
    if (!this.#config) {
      const { issuer, clientId, clientSecret } = this.settings;
      const insecure = new URL(issuer).protocol === 'http:';
      this.#config = client
        .discovery(
          new URL(issuer),
          clientId,
          clientSecret,
          clientSecret ? client.ClientSecretBasic(clientSecret) : client.None(),
          insecure ? { execute: [client.allowInsecureRequests], timeout: 10 } : { timeout: 10 },
        )
        .catch((e: unknown) => {
          this.#config = undefined;
          log.every('oidc-discovery', 'warn', 'OpenID Provider discovery failed', { issuer, error: String(e) }, 10_000);
          throw connectError('unavailable', 'the identity provider cannot be reached');
        });
    }
    return this.#config;
  }

  async #keys(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.#jwks) return this.#jwks;
    const uri = (await this.configuration()).serverMetadata().jwks_uri;
    if (!uri) throw connectError('unavailable', 'the identity provider publishes no jwks_uri');
    this.#jwks = createRemoteJWKSet(new URL(uri), { timeoutDuration: 10_000, cooldownDuration: 30_000 });
    return this.#jwks;
  }

  #refuse(reason: string, claims?: JWTPayload): never {
    log.warn('ID token refused', {
      reason,
      issuer: this.settings.issuer,
      ...(claims?.iss ? { tokenIssuer: String(claims.iss) } : {}),
      ...(claims?.aud ? { tokenAudience: claims.aud } : {}),
    });
    throw connectError('unauthenticated', `invalid ID token: ${reason}`, 'idToken');
  }

  /** Verifies an ID token (and its nonce, when the console's flow sent one) and reads who it names. */
  async verify(idToken: string, nonce?: string): Promise<VerifiedIdentity> {
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(idToken).alg;
    } catch {
      this.#refuse('not a signed JWT');
    }
    if (!alg || !ALGORITHMS.includes(alg)) this.#refuse(`algorithm '${alg ?? ''}' not allowed`);
    const meta = (await this.configuration()).serverMetadata();
    const keys = await this.#keys();
    let payload: JWTPayload;
    try {
      payload = (
        await jwtVerify(idToken, keys, {
          issuer: meta.issuer,
          audience: this.settings.clientId,
          algorithms: ALGORITHMS,
          clockTolerance: CLOCK_SKEW_SECONDS,
          requiredClaims: ['exp', 'iat', 'sub'],
        })
      ).payload;
    } catch (e) {
      this.#refuse(reasonOf(e));
    }
    const { clientId, userClaim, adminGroup } = this.settings;
    // OpenID Connect Core 3.1.3.7: with several audiences, `azp` names the client the token was issued to.
    if (payload.azp !== undefined && payload.azp !== clientId) this.#refuse("claim 'azp' does not match", payload);
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp === undefined) this.#refuse("claim 'azp' missing", payload);
    if (nonce !== undefined && payload.nonce !== nonce) this.#refuse("claim 'nonce' does not match", payload);
    const userId = payload[userClaim];
    if (typeof userId !== 'string' || userId === '' || userId.length > 255) this.#refuse(`claim '${userClaim}' missing`, payload);
    const groups = payload.groups;
    const admin = adminGroup !== undefined && Array.isArray(groups) && groups.includes(adminGroup);
    return { userId, admin, exp: payload.exp ?? 0 };
  }
}
