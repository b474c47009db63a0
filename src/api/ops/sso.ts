import { Type as t } from '@sinclair/typebox';
import { Str, Timestamp } from '../kit.ts';
import { defineOp } from '../op.ts';

/**
 * Sign-in with the company's identity provider (contract §16): an OpenID Connect ID token of the
 * configured issuer (GATEWAY_OIDC_*) exchanged for a gateway user token. The console's "Sign in
 * with SSO" runs the authorization code flow and calls the same exchange on the server side.
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Single sign-on';

export const SsoOps = {
  ExchangeOidcToken: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ExchangeOidcToken',
    summary: 'Exchange an ID token of the configured OpenID Provider for a gateway user token (no credential needed: the ID token is one)',
    notes:
      "The ID token is verified against the issuer's JWKS (from its discovery document): signature by a key of the issuer (asymmetric algorithms only; `alg: none` and HMAC are refused), `iss` = GATEWAY_OIDC_ISSUER, `aud` containing GATEWAY_OIDC_CLIENT_ID (and `azp`, when present, equal to it), not expired (60 s of clock skew). A refused token is `unauthenticated` and logged with the reason. userId is the value of the GATEWAY_OIDC_USER_CLAIM claim. A user listed in GATEWAY_OIDC_ADMIN_GROUP (the `groups` claim) gets a platform-admin token (1 hour, not persisted); any other user a user token (8 hours, persisted: ListUserTokens/RevokeUserToken know it, SCIM deactivation revokes it) of the customer where it is a project member (customerId chooses when it is a member in several; none: permission_denied). Without GATEWAY_OIDC_ISSUER: failed_precondition.",
    permission: 'public',
    mutates: { action: 'ISSUE', resource: 'user_token' },
    input: t.Object(
      {
        idToken: Str(1, 16384, { description: 'the ID token (a signed JWT) the identity provider issued to the gateway client' }),
        customerId: t.Optional(
          Str(1, 100, { pattern: '^[a-z0-9_-]+$', description: 'the customer to sign in to, when the user is a member in several' }),
        ),
      },
      { additionalProperties: false },
    ),
    output: t.Object({
      token: t.String({ description: 'a gateway user token (RS256 JWT), sent as `Authorization: Bearer`' }),
      expiresAt: Timestamp(),
      userId: t.String({ description: "the user claim's value" }),
      admin: t.Boolean({ description: 'true: a platform-admin token (the admin group)' }),
      customerId: t.String({ description: "the customer the token is for ('' for a platform admin)" }),
    }),
  }),
};
