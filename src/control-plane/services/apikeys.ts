import { and, eq, isNull } from 'drizzle-orm';
import { ApiKeyOps } from '../../api/ops/apikeys.ts';
import { int64Value, optTs, projectOrDefault, ts } from '../../api/kit.ts';
import { connectError } from '../../core/errors.ts';
import { newApiKey, sha256Hex } from '../../core/ids.ts';
import { type ApiKeyRow, apiKeys } from '../../store/schema/index.ts';
import { bodyScope, namedScope, op, type OpDef, projectScope } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { mutation, rid } from '../mutation.ts';
import { inLiveProject, lockProject } from '../lookups.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';

const { CreateApiKey, ListApiKeys, RevokeApiKey } = ApiKeyOps;

/** xxHash64 of a string as 16 hex digits (the key address of a user). */
export const xxhash64Hex = (s: string): string => Bun.hash.xxHash64(s).toString(16).padStart(16, '0');

/** A property of a value as sent (undefined unless the value is an object). */
const prop = (v: unknown, key: string): unknown =>
  typeof v === 'object' && v !== null ? Object.getOwnPropertyDescriptor(v, key)?.value : undefined;

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
  mutation(deps, CreateApiKey, {
    resourceId: (_i, o) => o?.id ?? '',
    scope: (i) => projectScope(prop(i.enterpriseContext, 'customerId'), prop(i.enterpriseContext, 'projectId')),
    handler: async (input, { tx, change }) => {
      const ec = input.enterpriseContext;
      const project = await lockProject(tx, ec.customerId, ec.projectId);
      const days = ec.expiresInDays === undefined ? undefined : int64Value(ec.expiresInDays);
      if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > 3650))
        throw connectError(
          'invalid_argument',
          "invalid field 'enterpriseContext.expiresInDays': must be 1..3650",
          'enterpriseContext.expiresInDays',
        );
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
  op(ListApiKeys, {
    scope: bodyScope,
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
  mutation(deps, RevokeApiKey, {
    resourceId: (i) => rid(i.id),
    scope: namedScope,
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
