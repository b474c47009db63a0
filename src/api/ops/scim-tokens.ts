import { Type as t } from '@sinclair/typebox';
import { CustomerRef, Nullable, OptTimestamp, Page, PageSize, PageToken, Str, Timestamp, Uuid } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/**
 * SCIM tokens (contract §16): the bearer an identity provider calls `/scim/v2/` with, one customer
 * each. The token is shown once, by CreateScimToken; only its SHA-256 is kept.
 */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'SCIM provisioning';

export const ScimTokenInfo = t.Object(
  {
    id: t.String(),
    customerId: t.String(),
    name: t.Optional(t.String()),
    prefix: t.String({ description: 'the first characters of the token, to tell tokens apart' }),
    createdAt: Timestamp(),
    lastUsedAt: OptTimestamp('absent if never used'),
    revokedAt: OptTimestamp('absent while not revoked'),
  },
  { description: 'ScimTokenInfo (never the token)' },
);

export const ScimTokenOps = {
  CreateScimToken: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'CreateScimToken',
    summary: "Create a SCIM token for a customer: the identity provider's bearer on /scim/v2/ (shown once)",
    notes:
      "The identity provider provisions the customer's Users and Groups with it (docs/sso.md): a user's userName is its gateway userId, a group named `{projectId}:{role}` makes its members project members with that role. Only the token's SHA-256 is stored.",
    permission: 'platform_admin',
    mutates: { action: 'CREATE', resource: 'scim_token' },
    input: t.Object(
      { customerId: CustomerRef(), name: Nullable(Str(0, 255, { description: 'what it is for (0-255)' })) },
      { additionalProperties: false },
    ),
    output: t.Object({
      token: t.String({ description: 'the bearer token, shown once' }),
      scimToken: ScimTokenInfo,
    }),
  }),
  ListScimTokens: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'ListScimTokens',
    summary: "List a customer's SCIM tokens (oldest first; never a token)",
    notes: 'Revoked tokens are listed too, with revokedAt.',
    permission: 'platform_admin',
    input: t.Object({ customerId: CustomerRef(), pageSize: PageSize(), pageToken: PageToken() }, { additionalProperties: false }),
    output: Page('scimTokens', ScimTokenInfo),
  }),
  RevokeScimToken: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'RevokeScimToken',
    summary: 'Revoke a SCIM token: refused on /scim/v2/ at once',
    notes: 'Revoking a revoked token changes nothing (its first revokedAt is kept).',
    permission: 'platform_admin',
    mutates: { action: 'REVOKE', resource: 'scim_token' },
    input: t.Object({ id: Uuid('the SCIM token id') }, { additionalProperties: false }),
    output: t.Object({ revokedAt: Timestamp(), success: t.Boolean() }),
  }),
};

export const ScimTokenResources = {
  scimToken: defineResource({
    owner: 'customer',
    audit: 'scim_token',
    stored: [{ table: 'scim_tokens', removal: 'revoke' }],
  }),
  scimUser: defineResource({
    owner: 'customer',
    audit: 'scim_user',
    stored: [{ table: 'scim_users', removal: 'delete' }],
  }),
  scimGroup: defineResource({
    owner: 'customer',
    audit: 'scim_group',
    stored: [{ table: 'scim_groups', removal: 'delete' }],
  }),
};
