import { importSPKI, jwtVerify } from 'jose';
import { GatewayError, invalidApiKey } from '../core/errors.ts';
import { projectKey, sha256Hex } from '../core/ids.ts';
import type { ConfigSnapshot, KeySnapshot } from '../propagation/snapshot.ts';
import { servedAt } from './hosts.ts';

/**
 * Finds the caller in the snapshot, never in the database. Credentials: `Authorization: Bearer
 * sk-…` everywhere, `x-api-key: sk-…` (what Messages SDKs before 1.0 send), or `Authorization:
 * Bearer <user-token JWT>` issued by CreateUserToken (verified against the snapshot's public keys).
 */

const USER_TOKEN_ISSUER = 'ai-gateway';
const USER_TOKEN_AUDIENCE = 'ai-gateway';
const DEFAULT_PROJECT = 'default';

const tokenOf = (headers: Headers): string => {
  const authz = headers.get('authorization');
  if (authz) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    if (!m?.[1]) throw invalidApiKey('The Authorization header must be "Bearer <API key>".');
    return m[1];
  }
  const key = headers.get('x-api-key');
  if (!key) throw invalidApiKey('Missing API key: send "Authorization: Bearer <API key>".');
  return key;
};

/**
 * SHA-256 of presented API keys, so that a client's key is hashed once, not on every request.
 * Bounded: emptied when full (a flood of random keys costs one hash each, as before).
 */
const MAX_CACHED_HASHES = 4096;
const hashes = new Map<string, string>();
const keyHash = (token: string): string => {
  let h = hashes.get(token);
  if (h === undefined) {
    h = sha256Hex(token);
    if (hashes.size >= MAX_CACHED_HASHES) hashes.clear();
    hashes.set(token, h);
  }
  return h;
};

const byApiKey = (token: string, snapshot: ConfigSnapshot, now: number): KeySnapshot => {
  const key = snapshot.keys.get(keyHash(token));
  if (!key) throw invalidApiKey('Invalid API key.');
  if (key.expiresAt !== null && key.expiresAt <= now) throw invalidApiKey('This API key has expired.');
  return key;
};

/** Imported public keys by PEM (the PEM is immutable per kid, so this never goes stale). */
const publicKeys = new Map<string, Promise<CryptoKey>>();
const importKey = (pem: string): Promise<CryptoKey> => {
  let k = publicKeys.get(pem);
  if (!k) {
    k = importSPKI(pem, 'RS256');
    publicKeys.set(pem, k);
  }
  return k;
};

const kidOf = (jwt: string): string | undefined => {
  try {
    const header = JSON.parse(Buffer.from(jwt.slice(0, jwt.indexOf('.')), 'base64url').toString('utf8')) as {
      kid?: unknown;
      alg?: unknown;
    };
    return header.alg === 'RS256' && typeof header.kid === 'string' ? header.kid : undefined;
  } catch {
    return undefined;
  }
};

/**
 * User tokens whose signature, issuer and audience checked out, with the key that verified them:
 * an RS256 check costs ~0.15 ms of CPU, more than the rest of a request, and a client sends the
 * same token on every request. Time claims are checked on every use (`inTime`); revocation,
 * project and membership below come from the snapshot each time. Bounded: emptied when full.
 */
const MAX_CACHED_TOKENS = 4096;
const verified = new Map<string, { kid: string; pem: string; claims: Record<string, unknown> }>();

/** jose's own test of `exp` and `nbf` (whole seconds, no tolerance), for a token verified earlier. */
const inTime = (claims: Record<string, unknown>, now: number): boolean => {
  const t = Math.floor(now / 1000);
  const { exp, nbf } = claims;
  return (typeof exp !== 'number' || exp > t) && (typeof nbf !== 'number' || nbf <= t);
};

/** The token's claims, verified against the snapshot's key for its `kid` now or earlier with that same key. */
const verifiedClaims = async (jwt: string, snapshot: ConfigSnapshot, now: number): Promise<Record<string, unknown>> => {
  const hit = verified.get(jwt);
  if (hit && snapshot.userTokenKeys.get(hit.kid) === hit.pem) {
    if (inTime(hit.claims, now)) return hit.claims;
    throw invalidApiKey('Invalid or expired user token.');
  }
  const kid = kidOf(jwt);
  const pem = kid ? snapshot.userTokenKeys.get(kid) : undefined;
  if (!kid || !pem) throw invalidApiKey('Invalid API key or user token.');
  let claims: Record<string, unknown>;
  try {
    claims = (
      await jwtVerify(jwt, await importKey(pem), {
        issuer: USER_TOKEN_ISSUER,
        audience: USER_TOKEN_AUDIENCE,
        algorithms: ['RS256'],
        currentDate: new Date(now),
      })
    ).payload;
  } catch {
    throw invalidApiKey('Invalid or expired user token.');
  }
  if (verified.size >= MAX_CACHED_TOKENS) verified.clear();
  verified.set(jwt, { kid, pem, claims });
  return claims;
};

const byUserToken = async (jwt: string, snapshot: ConfigSnapshot, now: number): Promise<KeySnapshot> => {
  const claims = await verifiedClaims(jwt, snapshot, now);
  const { customer, tenant, project, jti, sub, exp } = claims;
  if (typeof customer !== 'string' || typeof jti !== 'string' || typeof sub !== 'string') throw invalidApiKey('Invalid user token.');
  if (snapshot.revokedTokenIds.has(jti)) throw invalidApiKey('This user token has been revoked.');
  const projectId = typeof project === 'string' && project !== '' ? project : DEFAULT_PROJECT;
  const p = snapshot.projects.get(projectKey(customer, projectId));
  if (!p) throw invalidApiKey("The user token's project does not exist.");
  // Bound to the customer's row id: a token without it, or issued to a deleted customer of the same
  // slug, is not this tenant's token.
  if (tenant !== p.customerUuid) throw invalidApiKey('Invalid user token.');
  // A project other than the default one serves only its current members (membership arrives with
  // the snapshot, so a removed member is refused within the propagation time). The default project
  // is the customer-wide one: CreateUserToken issues tokens for it without a membership, so the
  // token's own validity (expiry, revocation, its customer) governs it.
  if (projectId !== DEFAULT_PROJECT && !p.members.has(sub)) throw invalidApiKey("The user is not a member of the user token's project.");
  return {
    id: `user-token:${jti}`,
    customerId: customer,
    projectId,
    expiresAt: typeof exp === 'number' ? exp * 1000 : null,
    project: p,
    userId: sub,
  };
};

const looksLikeJwt = (token: string): boolean => !token.startsWith('sk-') && token.split('.').length === 3;

/** API keys are checked synchronously (the hot path); user tokens need a signature check. */
export const authenticate = (headers: Headers, snapshot: ConfigSnapshot, now: number): KeySnapshot | Promise<KeySnapshot> => {
  const token = tokenOf(headers);
  // The caller's project must be served at the request's host (project gateways, contract §5).
  return looksLikeJwt(token)
    ? byUserToken(token, snapshot, now).then((k) => servedAt(headers, snapshot, k))
    : servedAt(headers, snapshot, byApiKey(token, snapshot, now));
};

export const forbiddenModel = (model: string): GatewayError =>
  new GatewayError({
    kind: 'permission',
    message: `This API key's project has no access to the model '${model}'.`,
    param: 'model',
    errorCode: 'model_not_allowed',
  });
