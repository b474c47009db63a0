import { Elysia } from 'elysia';
import * as client from 'openid-client';
import { GatewayError, toConnectBody } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import { log } from '../core/log.ts';
import { callInfo } from './audit-record.ts';
import type { OpDef } from './connect.ts';
import type { OidcIssuer } from './oidc.ts';

/**
 * The console's "Sign in with SSO" (contract §16): the authorization code flow with PKCE (S256),
 * `state` and `nonce`, run by openid-client on the management listener so the client secret (if
 * any) never reaches the browser and the console's CSP stays same-origin.
 *
 * - `GET /console/sso` → `{enabled}`: whether the sign-in page offers the button.
 * - `GET /console/sso/login` → 302 to the issuer's authorization endpoint; the state, nonce and
 *   code verifier ride in an HttpOnly, SameSite=Lax cookie scoped to `/console/sso/` (10 minutes).
 * - `GET /console/sso/callback` (the redirect URI) → the code is redeemed (state, PKCE and nonce
 *   checked by openid-client), the ID token exchanged by ExchangeOidcToken (audited like any call),
 *   and the browser sent back to `/console/#sso=<token>` — the console stores the token in the
 *   tab's sessionStorage and drops the fragment at once. A failure goes to `/console/#sso-error=<message>`.
 *
 * The redirect URI (sent with the authorization request and again with the code) is built on
 * GATEWAY_PUBLIC_URL when set — behind a proxy that rewrites the host or terminates TLS, the
 * request's own URL is not the one registered at the provider — else on the request's URL.
 * `X-Forwarded-*` headers are never read: a client could send them to steer the redirect.
 */

const COOKIE = 'gateway_sso';
const COOKIE_PATH = '/console/sso/';
const FLOW_SECONDS = 600;

interface Flow {
  state: string;
  nonce: string;
  verifier: string;
}

const cookieOf = (request: Request): Flow | undefined => {
  const raw = (request.headers.get('cookie') ?? '')
    .split(';')
    .map((c) => c.trim())
    .find((c) => c.startsWith(`${COOKIE}=`))
    ?.slice(COOKIE.length + 1);
  if (!raw) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (!isRecord(v)) return undefined;
    const { state, nonce, verifier } = v;
    return typeof state === 'string' && typeof nonce === 'string' && typeof verifier === 'string' ? { state, nonce, verifier } : undefined;
  } catch {
    return undefined;
  }
};

/** The console's origin as browsers see it: GATEWAY_PUBLIC_URL, else the request's own. */
type Origin = (request: Request) => string;

const setCookie = (origin: Origin, request: Request, value: string, maxAge: number): string =>
  `${COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${new URL(origin(request)).protocol === 'https:' ? '; Secure' : ''}`;

const redirectUri = (origin: Origin, request: Request): URL => new URL('/console/sso/callback', origin(request));

const back = (origin: Origin, request: Request, fragment: string, clear = true): Response =>
  new Response(null, {
    status: 303,
    headers: {
      location: `/console/#${fragment}`,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      ...(clear ? { 'set-cookie': setCookie(origin, request, '', 0) } : {}),
    },
  });

export const ssoRoutes = (oidc: OidcIssuer | undefined, ops: readonly OpDef[], publicUrl?: string) => {
  const exchange = ops.find((o) => o.name === 'ExchangeOidcToken');
  const origin: Origin = (request) => publicUrl ?? new URL(request.url).origin;
  const failed = (request: Request, message: string): Response => back(origin, request, `sso-error=${encodeURIComponent(message)}`);
  return new Elysia({ name: 'console-sso' })
    .get('/console/sso', () => ({ enabled: oidc !== undefined }), { detail: { hide: true } })
    .get(
      '/console/sso/login',
      async ({ request }) => {
        if (!oidc) return failed(request, 'single sign-on is not configured');
        let config: client.Configuration;
        try {
          config = await oidc.configuration();
        } catch {
          return failed(request, 'the identity provider cannot be reached');
        }
        const flow: Flow = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier() };
        const url = client.buildAuthorizationUrl(config, {
          redirect_uri: redirectUri(origin, request).href,
          scope: 'openid email profile',
          response_type: 'code',
          code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
          code_challenge_method: 'S256',
          state: flow.state,
          nonce: flow.nonce,
        });
        const value = Buffer.from(JSON.stringify(flow)).toString('base64url');
        return new Response(null, {
          status: 302,
          headers: { location: url.href, 'set-cookie': setCookie(origin, request, value, FLOW_SECONDS), 'cache-control': 'no-store' },
        });
      },
      { detail: { hide: true } },
    )
    .get(
      '/console/sso/callback',
      async ({ request, server }) => {
        if (!oidc || !exchange) return failed(request, 'single sign-on is not configured');
        const flow = cookieOf(request);
        if (!flow) return failed(request, 'the sign-in expired or was started in another browser: try again');
        const current = new URL(request.url);
        const idpError = current.searchParams.get('error');
        if (idpError) return failed(request, `the identity provider refused: ${idpError.slice(0, 100)}`);
        let idToken: string | undefined;
        try {
          const config = await oidc.configuration();
          // The redirect URI as registered, whatever else the browser's URL carries.
          const callback = redirectUri(origin, request);
          callback.search = current.search;
          const tokens = await client.authorizationCodeGrant(config, callback, {
            pkceCodeVerifier: flow.verifier,
            expectedState: flow.state,
            expectedNonce: flow.nonce,
            idTokenExpected: true,
          });
          idToken = tokens.id_token;
        } catch (e) {
          log.warn('single sign-on: the authorization code was refused', {
            reason: e instanceof Error ? e.message.slice(0, 200) : 'unknown',
          });
          return failed(request, 'the sign-in could not be completed: try again');
        }
        if (!idToken) return failed(request, 'the identity provider sent no ID token');
        const call = callInfo(request, server);
        try {
          const answer = await exchange.handler({ idToken }, { principal: { kind: 'anonymous' }, request, call });
          const token = isRecord(answer) ? answer.token : undefined;
          if (typeof token !== 'string') return failed(request, 'the sign-in could not be completed');
          return back(origin, request, `sso=${encodeURIComponent(token)}`);
        } catch (e) {
          if (e instanceof GatewayError) {
            if (exchange.audit) await exchange.audit.refused(call, { kind: 'anonymous' }, { idToken }, e);
            return failed(request, toConnectBody(e).message);
          }
          throw e;
        }
      },
      { detail: { hide: true } },
    );
};
