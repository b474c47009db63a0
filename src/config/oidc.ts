import { isIP } from 'node:net';
import { ConfigError, type Settings } from './settings.ts';

/** Sign-in with an identity provider (contract §16): the GATEWAY_OIDC_* settings, checked together. */
export interface OidcConfig {
  /** The issuer URL as configured (the `iss` every ID token must carry). */
  issuer: string;
  clientId: string;
  /** Unset: a public client (PKCE only). */
  clientSecret?: string;
  /** The claim whose value is the member's userId. */
  userClaim: string;
  /** Members of this `groups` value sign in as platform admins. */
  adminGroup?: string;
}

/** Whether a host name is a loopback address (or `localhost`), the only place an `http://` issuer is accepted. */
export const isLoopbackHost = (hostname: string): boolean => {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1';
};

export const oidcConfig = (s: Settings): OidcConfig | undefined => {
  const issuer = s.GATEWAY_OIDC_ISSUER;
  if (!issuer) {
    if (s.GATEWAY_OIDC_CLIENT_ID) throw new ConfigError('GATEWAY_OIDC_CLIENT_ID', 'needs GATEWAY_OIDC_ISSUER to be set');
    return undefined;
  }
  const url = new URL(issuer);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    throw new ConfigError('GATEWAY_OIDC_ISSUER', 'an http:// issuer is accepted only on a loopback address; use https://');
  if (url.search || url.hash) throw new ConfigError('GATEWAY_OIDC_ISSUER', 'must not carry a query or a fragment');
  if (!s.GATEWAY_OIDC_CLIENT_ID) throw new ConfigError('GATEWAY_OIDC_CLIENT_ID', 'required with GATEWAY_OIDC_ISSUER');
  if (!s.GATEWAY_OIDC_USER_CLAIM.trim()) throw new ConfigError('GATEWAY_OIDC_USER_CLAIM', 'must name a claim');
  return {
    issuer,
    clientId: s.GATEWAY_OIDC_CLIENT_ID,
    ...(s.GATEWAY_OIDC_CLIENT_SECRET ? { clientSecret: s.GATEWAY_OIDC_CLIENT_SECRET } : {}),
    userClaim: s.GATEWAY_OIDC_USER_CLAIM.trim(),
    ...(s.GATEWAY_OIDC_ADMIN_GROUP ? { adminGroup: s.GATEWAY_OIDC_ADMIN_GROUP } : {}),
  };
};

/**
 * GATEWAY_PUBLIC_URL as an origin (`https://host[:port]`): what the console's redirect URI and
 * SCIM's locations are built on behind a proxy that rewrites the host or terminates TLS.
 */
export const publicOrigin = (s: Settings): string | undefined => {
  const raw = s.GATEWAY_PUBLIC_URL;
  if (!raw) return undefined;
  const url = new URL(raw);
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password)
    throw new ConfigError('GATEWAY_PUBLIC_URL', 'must be an origin only, e.g. https://gateway.example.com (no path, query or credentials)');
  return url.origin;
};
