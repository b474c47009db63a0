/**
 * Google service-account credentials for Vertex AI. The connection key is the whole JSON key
 * file; the gateway makes the OAuth2 JWT-bearer exchange itself (RS256 assertion, POSTed to the
 * key's own `token_uri`, which google-auth-library would ignore) and caches the access token per
 * connection until a minute before it expires.
 */
import { importPKCS8, SignJWT } from 'jose';
import { asNumber, asRecord, asString, parseJson } from '../json.ts';
import { formBody, tokenHost, TokenCache, tokenExchangeFailed, unreachable, type AccessToken } from '../token-cache.ts';
import type { ConnectionConfig, TokenHttp } from '../types.ts';
import { providerMisconfigured } from '../upstream-error.ts';

export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface ServiceAccount {
  clientEmail: string;
  privateKey: string;
  privateKeyId?: string;
  tokenUri: string;
  projectId?: string;
}

/** Reads the key file; a missing or malformed key is a configuration error that names no secret. */
export const parseServiceAccount = (provider: string, connection: ConnectionConfig): ServiceAccount => {
  const bad = (what: string) =>
    providerMisconfigured(provider, `connection '${connection.name}' needs the Google service-account JSON key as its apiKey (${what}).`);
  const key = connection.apiKey;
  if (key === undefined || key.trim() === '') throw bad('none is set');
  const parsed = parseJson(key);
  const o = parsed.ok ? asRecord(parsed.value) : undefined;
  if (!o) throw bad('the key is not JSON');
  const clientEmail = asString(o['client_email']);
  const privateKey = asString(o['private_key']);
  if (clientEmail === undefined || privateKey === undefined) throw bad('client_email or private_key is missing');
  return {
    clientEmail,
    privateKey,
    privateKeyId: asString(o['private_key_id']),
    tokenUri: asString(o['token_uri']) ?? GOOGLE_TOKEN_URI,
    projectId: asString(o['project_id']),
  };
};

/** The signed JWT-bearer assertion (valid one hour). */
export const signAssertion = async (provider: string, sa: ServiceAccount, nowMs: number): Promise<string> => {
  let key: CryptoKey;
  try {
    key = await importPKCS8(sa.privateKey, 'RS256');
  } catch {
    throw providerMisconfigured(provider, 'the service-account private_key is not a valid PKCS#8 RSA key.');
  }
  const iat = Math.floor(nowMs / 1000);
  const header = sa.privateKeyId !== undefined ? { alg: 'RS256', typ: 'JWT', kid: sa.privateKeyId } : { alg: 'RS256', typ: 'JWT' };
  return new SignJWT({ scope: CLOUD_PLATFORM_SCOPE })
    .setProtectedHeader(header)
    .setIssuer(sa.clientEmail)
    .setSubject(sa.clientEmail)
    .setAudience(sa.tokenUri)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 3600)
    .sign(key);
};

export const exchangeServiceAccountToken = async (
  provider: string,
  sa: ServiceAccount,
  http: TokenHttp,
  nowMs: number,
): Promise<AccessToken> => {
  const assertion = await signAssertion(provider, sa, nowMs);
  const host = tokenHost(provider, sa.tokenUri);
  const res = await http({
    url: sa.tokenUri,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: formBody({ grant_type: JWT_BEARER, assertion }),
  }).catch((e: unknown) => {
    throw unreachable(provider, host, e);
  });
  const secrets = [assertion, sa.privateKey];
  if (res.status < 200 || res.status >= 300) {
    throw tokenExchangeFailed(
      provider,
      `the service-account token exchange at ${host} failed (HTTP ${res.status}).`,
      res.status,
      res.body,
      secrets,
    );
  }
  const parsed = parseJson(res.body);
  const o = parsed.ok ? asRecord(parsed.value) : undefined;
  const token = asString(o?.['access_token']);
  if (token === undefined || token === '') {
    throw tokenExchangeFailed(provider, `the token endpoint at ${host} returned no access_token.`, res.status, res.body, secrets);
  }
  const expiresIn = asNumber(o?.['expires_in']) ?? 3600;
  return { token, expiresAt: nowMs + expiresIn * 1000 };
};

/** Returns a cached or fresh access token for the connection. */
export const createVertexAuth = (provider: string, now: () => number = Date.now) => {
  const cache = new TokenCache(now);
  return {
    cache,
    token: (connection: ConnectionConfig, http: TokenHttp): Promise<string> => {
      const sa = parseServiceAccount(provider, connection);
      return cache.get(TokenCache.keyFor(connection), () => exchangeServiceAccountToken(provider, sa, http, now()));
    },
  };
};
