import type { RequestIds } from '../pipeline/context.ts';
import { idHeaders } from '../pipeline/answer.ts';

/**
 * RFC 9728 protected-resource metadata for each MCP profile (contract §7.1): at
 * `/.well-known/oauth-protected-resource/mcp/{profileId}`, public (a client reads it before it has
 * any credential, and it says nothing about whether the profile exists); every 401 of `/mcp/…`
 * points at it in `WWW-Authenticate`. The base URL is the data plane's public URL when its
 * workspace adopted one, else the origin the request reached. Bearer tokens in the header are the
 * only method. `authorization_servers` names the OIDC issuer of single sign-on (GATEWAY_OIDC_ISSUER,
 * contract §16) when this process has one configured; otherwise none is named (API keys and user
 * tokens come from the management API, not an OAuth flow), so a spec-following client sends the
 * bearer it was given instead of starting one.
 */

const base = (req: Request, publicUrl: string | undefined): string => (publicUrl ?? new URL(req.url).origin).replace(/\/+$/, '');

export const metadataUrl = (req: Request, profileId: string, publicUrl: string | undefined): string =>
  `${base(req, publicUrl)}/.well-known/oauth-protected-resource/mcp/${encodeURIComponent(profileId)}`;

export const resourceMetadata = (
  req: Request,
  ids: RequestIds,
  profileId: string,
  publicUrl: string | undefined,
  oidcIssuer: string | undefined,
): Response =>
  new Response(
    JSON.stringify({
      resource: `${base(req, publicUrl)}/mcp/${encodeURIComponent(profileId)}`,
      bearer_methods_supported: ['header'],
      ...(oidcIssuer ? { authorization_servers: [oidcIssuer] } : {}),
    }),
    { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'max-age=300', ...idHeaders(ids) } },
  );

/** The `WWW-Authenticate` of a 401 from `/mcp/{profileId}`. */
export const challenge = (req: Request, profileId: string, publicUrl: string | undefined): string =>
  `Bearer resource_metadata="${metadataUrl(req, profileId, publicUrl)}"`;
