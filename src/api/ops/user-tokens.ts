import { Type as t } from '@sinclair/typebox';
import { Int64, Nullable, OptTimestamp, PATTERNS, Page, PageSize, PageToken, Str, StringMap, Timestamp } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/**
 * User tokens: RS256 JWTs issued by CreateUserToken that call the management API with the user's
 * project roles, and the operations on them (GetUserToken, RevokeUserToken) and on their signing
 * key (RotateUserTokenSigningKey). The claims are described in control-plane/services/user-tokens.ts.
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'User tokens';

export const USER_TOKEN_STATUS = ['USER_TOKEN_STATUS_ACTIVE', 'USER_TOKEN_STATUS_REVOKED', 'USER_TOKEN_STATUS_EXPIRED'] as const;
export type UserTokenStatus = (typeof USER_TOKEN_STATUS)[number];

const TokenSlug = (what: string) => Str(1, 100, { pattern: '^[a-z0-9_-]+$', description: `${what} (1-100, ^[a-z0-9_-]+$)` });
const Jti = () => Str(1, 64, { description: 'the token id (1-64)' });

export const UserTokenInfo = t.Object(
  {
    jti: t.String(),
    userId: t.String(),
    organizationUnit: t.String(),
    role: t.String(),
    status: t.String({ description: USER_TOKEN_STATUS.join(' | ') }),
    createdAt: Timestamp(),
    expiresAt: Timestamp(),
    lastUsedAt: OptTimestamp(
      'absent if never used; management calls are stored in batches (within seconds), inference use from the request records',
    ),
    revokedAt: OptTimestamp('absent while not revoked'),
    revokedReason: t.Optional(t.String()),
  },
  { description: 'UserTokenInfo (claims only, never the token)' },
);

export const UserTokenOps = {
  CreateUserToken: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateUserToken',
    summary: 'Issue a user token (RS256 JWT signed with the active signing key; kid in /.well-known/jwks.json)',
    notes:
      "A user token authenticates to the management API with the user's project roles (project members: 'admin' manages its project, 'member' reads it) and carries the `project` claim when projectId is set. projectId unset means the default project; for another project the user must be a member (failed_precondition). expiresInDays defaults to 30 (1..365). impersonate true: the token is not persisted (so GetUserToken/RevokeUserToken do not know it) and carries `imp: true` and `act: {sub: impersonatorKey, reason?, ctx?}`; impersonationMetadata is required with it. keyAddress = xxhash64(userId) hex, keyHash = jti, keyPrefix = first 12 hex digits of xxhash64(jti).",
    permission: 'platform_admin',
    mutates: { action: 'ISSUE', resource: 'user_token' },
    input: t.Object(
      {
        customerId: TokenSlug('customer slug'),
        workspaceId: TokenSlug('workspace slug'),
        userId: Str(1, 255, { description: 'opaque user id from the identity provider (1-255)' }),
        organizationUnit: Str(1, 255),
        role: Str(1, 100),
        scopes: t.Optional(
          t.Array(Str(0, 50, { pattern: PATTERNS.SCOPE }), { maxItems: 10, description: 'at most 10, each SCOPE, max 50' }),
        ),
        name: Nullable(Str(0, 255)),
        expiresInDays: t.Optional(t.Union([Int64({ minimum: 1, maximum: 365, description: 'int64 1..365; default 30' }), t.Null()])),
        projectId: Nullable(
          Str(0, 253, { pattern: `^$|${PATTERNS.PROJ}`, description: 'PROJ, max 253; unset or empty = the default project' }),
        ),
        impersonate: Nullable(t.Boolean({ description: 'true: the token is not persisted' })),
        impersonationMetadata: Nullable(
          t.Object(
            {
              impersonatorKey: Str(1, 255, { description: 'id or key hash of the impersonator' }),
              reason: Nullable(Str(0, 500)),
              context: t.Optional(StringMap('context: at most 50 entries; keys 1-255 characters, values at most 255')),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    output: t.Object({
      accessToken: t.String({ description: 'signed JWT (RS256)' }),
      tokenType: t.String({ description: 'Bearer' }),
      expiresAt: Timestamp(),
      expiresIn: t.String({ description: 'int64 seconds' }),
      jti: t.String(),
      keyAddress: t.String({ description: 'xxhash64 of userId, hex' }),
      keyHash: t.String({ description: 'the jti, for revocation lookups' }),
      keyPrefix: t.String({ description: 'first 12 characters of xxhash64 of the jti' }),
    }),
  }),
  GetUserToken: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetUserToken',
    summary: "A user token's claims and status (never the token)",
    notes:
      'The platform admin: any token; a user: its own tokens (others are not_found). Impersonation tokens are not persisted: not_found.',
    permission: 'customer_member',
    input: t.Object({ jti: Jti() }, { additionalProperties: false }),
    output: t.Object({ token: UserTokenInfo }),
  }),
  ListUserTokens: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListUserTokens',
    summary: "List a customer's user tokens (claims and status, oldest first; never a token)",
    notes:
      'The platform admin: every persisted token of the customer (userId narrows to one user); a user: its own tokens only (userId, when given, must be its own, else the page is empty). Revoked tokens are left out unless includeRevoked; expired tokens are listed. Impersonation tokens are not persisted and never listed.',
    permission: 'customer_member',
    input: t.Object(
      {
        customerId: TokenSlug('customer slug'),
        userId: t.Optional(Str(1, 255, { description: 'only this user (1-255)' })),
        includeRevoked: t.Optional(t.Boolean({ description: 'default false' })),
        pageSize: PageSize(),
        pageToken: PageToken(),
      },
      { additionalProperties: false },
    ),
    output: Page('tokens', UserTokenInfo),
  }),
  RevokeUserToken: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'RevokeUserToken',
    summary: 'Revoke a user token: refused by the management API at once, by inference within the propagation time',
    notes:
      'The platform admin: any token; a user: its own tokens. Revoking a revoked token changes nothing (its first revokedAt and reason are kept).',
    permission: 'customer_member',
    mutates: { action: 'REVOKE', resource: 'user_token' },
    input: t.Object(
      { jti: Jti(), reason: Nullable(Str(0, 500, { description: 'kept as revokedReason (0-500)' })) },
      { additionalProperties: false },
    ),
    output: t.Object({ revokedAt: Timestamp(), success: t.Boolean() }),
  }),
  RotateUserTokenSigningKey: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'RotateUserTokenSigningKey',
    summary: 'Rotate the user-token signing key; live tokens stay valid',
    notes:
      "Retires the active RS256 key and creates a new one: new tokens carry the new kid; every retired key stays published (GET /.well-known/jwks.json and the data planes' configuration) while a token it signed can be live (365 days), so no token is invalidated. Keys retired longer ago are deleted (deletedKids). Other replicas switch to the new key within a minute.",
    permission: 'platform_admin',
    mutates: { action: 'UPDATE', resource: 'signing_key' },
    input: t.Object({}, { additionalProperties: false }),
    output: t.Object({
      kid: t.String({ description: 'the new active kid' }),
      retiredKid: t.String({ description: "the kid retired now ('' when there was none)" }),
      deletedKids: t.Array(t.String(), { description: 'retired keys past the longest token lifetime, removed' }),
    }),
  }),
};

export const UserTokenResources = {
  userToken: defineResource({
    owner: 'customer',
    audit: 'user_token',
    // A token scoped to a project is revoked with it too.
    stored: [{ table: 'user_tokens', removal: 'revoke', removedWith: ['customer', 'project'] }],
    change: { kind: 'USER_TOKEN', entity: 'user_token', keepsApiKeys: true },
  }),
  signingKey: defineResource({
    owner: 'global',
    audit: 'signing_key',
    change: { kind: 'SIGNING_KEY', entity: 'signing_key', keepsApiKeys: true },
  }),
};
