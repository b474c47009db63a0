import { Type as t } from '@sinclair/typebox';
import { CustomerRef, Int64, OptTimestamp, PATTERNS, Page, PageSize, PageToken, ProjectRef, Timestamp, Uuid } from '../kit.ts';
import { defineOp } from '../op.ts';
import { defineResource } from '../resource.ts';

/**
 * Inference API keys (contract §3.1, the seed's ApiKeyService): created once with the key in the
 * answer (only its hash is stored), listed as metadata, revoked.
 */

const SERVICE = 'apikey.v1.ApiKeyService';
const GROUP = 'API keys';

const EnterpriseContext = t.Object(
  {
    customerId: CustomerRef(),
    projectId: t.Optional(ProjectRef()),
    workspaceId: t.Optional(t.String({ maxLength: 253 })),
    role: t.Optional(t.String({ maxLength: 100 })),
    organizationUnit: t.Optional(t.String({ maxLength: 255 })),
    scopes: t.Optional(t.Array(t.String({ maxLength: 50, pattern: PATTERNS.SCOPE }), { maxItems: 10 })),
    expiresInDays: t.Optional(Int64({ minimum: 1, maximum: 3650, description: 'days until the key expires (int64); unset = no expiry' })),
  },
  { additionalProperties: false, description: 'which customer and project the key serves, and its limits' },
);

const apiKeyFields = {
  id: t.String({ description: 'UUID' }),
  name: t.String(),
  userId: t.String(),
  keyAddress: t.String({ description: 'xxhash64 of the owner, hex' }),
  keyPrefix: t.String({ description: 'first characters of the key, for display' }),
  customerId: t.String(),
  projectId: t.String(),
  workspaceId: t.Optional(t.String()),
  role: t.Optional(t.String()),
  organizationUnit: t.Optional(t.String()),
  scopes: t.Array(t.String()),
  createdAt: Timestamp(),
  expiresAt: OptTimestamp('absent: never expires'),
  revokedAt: OptTimestamp('absent while active'),
};
export const ApiKeyOut = t.Object(apiKeyFields, { description: 'API key metadata (never the key)' });

export const ApiKeyOps = {
  CreateApiKey: defineOp({
    service: SERVICE,
    group: GROUP,
    name: 'CreateApiKey',
    summary: 'Create an inference API key (returned once; only its hash is stored)',
    permission: 'project_admin',
    mutates: { action: 'CREATE', resource: 'api_key' },
    input: t.Object(
      {
        name: t.Optional(t.String({ maxLength: 255 })),
        userId: t.Optional(t.String({ maxLength: 255 })),
        userKeyAddress: t.Optional(t.String({ maxLength: 255 })),
        enterpriseContext: EnterpriseContext,
      },
      { additionalProperties: false },
    ),
    output: t.Object({ apiKey: t.String({ description: 'sk-… plaintext, returned once' }), ...apiKeyFields }),
  }),
  ListApiKeys: defineOp({
    service: SERVICE,
    group: GROUP,
    name: 'ListApiKeys',
    summary: "List a project's API keys (metadata only)",
    permission: 'project_member',
    input: t.Object(
      {
        customerId: CustomerRef(),
        projectId: t.Optional(ProjectRef()),
        includeRevoked: t.Optional(t.Boolean()),
        pageSize: PageSize(),
        pageToken: PageToken(),
      },
      { additionalProperties: false },
    ),
    output: Page('apiKeys', ApiKeyOut),
  }),
  RevokeApiKey: defineOp({
    service: SERVICE,
    group: GROUP,
    name: 'RevokeApiKey',
    summary: 'Revoke an API key; it stops working once the change reaches the data plane',
    permission: 'project_admin',
    mutates: { action: 'REVOKE', resource: 'api_key' },
    input: t.Object(
      { id: Uuid('API key id'), customerId: t.Optional(CustomerRef()), projectId: t.Optional(ProjectRef()) },
      { additionalProperties: false },
    ),
    output: t.Object({ revokedAt: Timestamp(), success: t.Boolean() }),
  }),
};

/** Custom in Terraform: read by listing the project's keys, delete revokes (iac/provider/hooks.ts). */
export const ApiKeyResources = {
  /** An API key change names the key's id: the load reads just that key. */
  apiKey: defineResource({
    owner: 'project',
    audit: 'api_key',
    stored: [{ table: 'api_keys', removal: 'revoke' }],
    change: { kind: 'API_KEY', entity: 'api_key', keepsApiKeys: false },
    terraform: {
      type: 'gateway_api_key',
      description: 'An inference API key. The key is known once, at creation, and kept (sensitive) in state; destroy revokes it.',
      create: ApiKeyOps.CreateApiKey,
      delete: ApiKeyOps.RevokeApiKey,
      args: [
        { api: 'name' },
        { api: 'userId' },
        {
          api: 'userKeyAddress',
          keep: true,
          description:
            "the owner's address (typically an email or user id); the key address is derived from user_id, else from it; not returned by the API (an import adopts it from the configuration)",
        },
        { api: 'enterpriseContext.customerId' },
        { api: 'enterpriseContext.projectId' },
        { api: 'enterpriseContext.workspaceId' },
        { api: 'enterpriseContext.role' },
        { api: 'enterpriseContext.organizationUnit' },
        { api: 'enterpriseContext.scopes' },
        { api: 'enterpriseContext.expiresInDays', keep: true },
        { computed: 'key', api: 'apiKey', description: 'the key (sk-…); known once, at creation', sensitive: true },
        { computed: 'key_prefix', api: 'keyPrefix', description: 'first characters of the key, for display' },
        { computed: 'expires_at', api: 'expiresAt', description: 'RFC 3339; empty when the key never expires' },
      ],
      importId: ['customer_id', 'project_id', 'id'],
    },
  }),
};
