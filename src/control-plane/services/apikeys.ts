import { and, eq, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { newApiKey, sha256Hex } from '../../core/ids.ts';
import { type ApiKeyRow, apiKeys } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { mutation } from '../mutation.ts';
import { inLiveProject, lockProject } from '../lookups.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import { CustomerRef, Int64, PATTERNS, Page, PageSize, PageToken, ProjectRef, Timestamp, OptTimestamp, Uuid, int64Value, optTs, projectOrDefault, ts } from '../schemas.ts';

const SERVICE = 'apikey.v1.ApiKeyService' as const;
const GROUP = 'API keys';

/** xxHash64 of a string as 16 hex digits (the key address of a user). */
export const xxhash64Hex = (s: string): string => Bun.hash.xxHash64(s).toString(16).padStart(16, '0');

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

export const apiKeyView = (k: ApiKeyRow) => ({
  id: k.id,
  name: k.name,
  userId: k.userId,
  keyAddress: k.keyAddress,
  keyPrefix: k.keyPrefix,
  customerId: k.customerId,
  projectId: k.projectId,
  ...(k.workspaceId ? { workspaceId: k.workspaceId } : {}),
  ...(k.role ? { role: k.role } : {}),
  ...(k.organizationUnit ? { organizationUnit: k.organizationUnit } : {}),
  scopes: k.scopes,
  createdAt: ts(k.createdAt),
  expiresAt: optTs(k.expiresAt),
  revokedAt: optTs(k.revokedAt),
});

export const apiKeyOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'CREATE',
    resource: 'api_key',
    resourceId: (i, o) => o?.id ?? '',
    service: SERVICE,
    group: GROUP,
    name: 'CreateApiKey',
    summary: 'Create an inference API key (returned once; only its hash is stored)',
    permission: 'project_admin',
    scope: (i) => ({ customerId: i.enterpriseContext.customerId, projectId: projectOrDefault(i.enterpriseContext.projectId) }),
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
    handler: async (input, { tx, change }) => {
      const ec = input.enterpriseContext;
      const project = await lockProject(tx, ec.customerId, ec.projectId);
      const days = ec.expiresInDays === undefined ? undefined : int64Value(ec.expiresInDays);
      if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > 3650))
        throw connectError('invalid_argument', "invalid field 'enterpriseContext.expiresInDays': must be 1..3650", 'enterpriseContext.expiresInDays');
      const key = newApiKey();
      const userId = input.userId ?? '';
      const [k] = await tx
          .insert(apiKeys)
          .values({
            projectUuid: project.id,
            name: input.name ?? '',
            userId,
            keyHash: sha256Hex(key),
            keyPrefix: key.slice(0, 10),
            keyAddress: xxhash64Hex(userId || input.userKeyAddress || ''),
            customerId: project.customerId,
            projectId: project.projectId,
            workspaceId: ec.workspaceId ?? null,
            role: ec.role ?? null,
            organizationUnit: ec.organizationUnit ?? null,
            scopes: ec.scopes ?? [],
            expiresAt: days === undefined ? null : new Date(Date.now() + days * 86_400_000),
          })
          .returning();
      const row = k as ApiKeyRow;
      await change({ resource: 'apiKey' as const, entityId: row.id, customerId: project.customerId, projectId: project.projectId });
      return { apiKey: key, ...apiKeyView(row) };
    },
  }),
  op({
    service: SERVICE,
    group: GROUP,
    name: 'ListApiKeys',
    summary: "List a project's API keys (metadata only)",
    permission: 'project_member',
    scope: (i) => ({ customerId: i.customerId, projectId: projectOrDefault(i.projectId) }),
    input: t.Object(
      { customerId: CustomerRef(), projectId: t.Optional(ProjectRef()), includeRevoked: t.Optional(t.Boolean()), pageSize: PageSize(), pageToken: PageToken() },
      { additionalProperties: false },
    ),
    output: Page('apiKeys', ApiKeyOut),
    handler: async (input) => {
      const size = pageSizeOf(input.pageSize);
      const k = keyset(apiKeys.createdAt, apiKeys.id, input.pageToken);
      const rows = await deps.db
        .select()
        .from(apiKeys)
        .where(
          and(
            inLiveProject(deps.db, apiKeys.projectUuid, input.customerId, input.projectId),
            input.includeRevoked ? undefined : isNull(apiKeys.revokedAt),
            k.where,
          ),
        )
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { apiKeys: p.items.map(apiKeyView), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, {
    action: 'REVOKE',
    resource: 'api_key',
    resourceId: (i) => i.id,
    service: SERVICE,
    group: GROUP,
    name: 'RevokeApiKey',
    summary: 'Revoke an API key; it stops working once the change reaches the data plane',
    permission: 'project_admin',
    scope: (i) => (i.customerId ? { customerId: i.customerId, projectId: projectOrDefault(i.projectId) } : undefined),
    input: t.Object({ id: Uuid('API key id'), customerId: t.Optional(CustomerRef()), projectId: t.Optional(ProjectRef()) }, { additionalProperties: false }),
    output: t.Object({ revokedAt: Timestamp(), success: t.Boolean() }),
    handler: async (input, { tx, change }) => {
      const [row] = await tx.select().from(apiKeys).where(eq(apiKeys.id, input.id)).limit(1).for('update');
      if (!row || (input.customerId && (row.customerId !== input.customerId || row.projectId !== projectOrDefault(input.projectId))))
        throw connectError('not_found', `API key '${input.id}' not found`, 'id');
      const revokedAt = row.revokedAt ?? new Date();
      // Revoking a revoked key changes nothing (idempotent): audited, no change rows.
      if (!row.revokedAt) {
        await tx.update(apiKeys).set({ revokedAt }).where(eq(apiKeys.id, row.id));
        await change({ resource: 'apiKey' as const, entityId: row.id, customerId: row.customerId, projectId: row.projectId });
      }
      return { revokedAt: ts(revokedAt), success: true };
    },
  }),
];
