import { and, eq } from 'drizzle-orm';
import { ts } from '../../api/kit.ts';
import { ScimTokenOps } from '../../api/ops/scim-tokens.ts';
import { connectError } from '../../core/errors.ts';
import { randomToken, sha256Hex } from '../../core/ids.ts';
import { type ScimTokenRow, scimTokens } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { findCustomer, lockCustomer } from '../lookups.ts';
import { mutation, rid } from '../mutation.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';

/** SCIM tokens (contract §16): `scim_<random>`, stored as SHA-256; the SCIM endpoint is src/control-plane/scim/. */

const { CreateScimToken, ListScimTokens, RevokeScimToken } = ScimTokenOps;
export const SCIM_TOKEN_PREFIX = 'scim_';

const view = (r: ScimTokenRow) => ({
  id: r.id,
  customerId: r.customerId,
  ...(r.name ? { name: r.name } : {}),
  prefix: r.prefix,
  createdAt: ts(r.createdAt),
  ...(r.lastUsedAt ? { lastUsedAt: ts(r.lastUsedAt) } : {}),
  ...(r.revokedAt ? { revokedAt: ts(r.revokedAt) } : {}),
});

export const scimTokenOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, CreateScimToken, {
    resourceId: (_i, o) => o?.scimToken.id ?? '',
    handler: async (input, { tx }) => {
      const customer = await lockCustomer(tx, input.customerId);
      const token = `${SCIM_TOKEN_PREFIX}${randomToken(40)}`;
      const [row] = await tx
        .insert(scimTokens)
        .values({
          customerUuid: customer.id,
          customerId: customer.customerId,
          tokenHash: sha256Hex(token),
          prefix: token.slice(0, 12),
          name: input.name ?? null,
        })
        .returning();
      if (!row) throw connectError('internal', 'the SCIM token was not stored');
      return { token, scimToken: view(row) };
    },
  }),
  op(ListScimTokens, {
    handler: async (input) => {
      // The page token is checked before anything is looked up.
      const k = keyset(scimTokens.createdAt, scimTokens.id, input.pageToken);
      const size = pageSizeOf(input.pageSize);
      const customer = await findCustomer(deps.db, input.customerId);
      const rows = await deps.db
        .select()
        .from(scimTokens)
        .where(and(eq(scimTokens.customerUuid, customer.id), k.where))
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(rows, size);
      return { scimTokens: p.items.map(view), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, RevokeScimToken, {
    resourceId: (i) => rid(i.id),
    handler: async (input, { tx }) => {
      const [row] = await tx.select().from(scimTokens).where(eq(scimTokens.id, input.id)).limit(1).for('update');
      if (!row) throw connectError('not_found', `SCIM token '${input.id}' not found`, 'id');
      if (row.revokedAt) return { revokedAt: ts(row.revokedAt), success: true };
      const at = new Date();
      await tx.update(scimTokens).set({ revokedAt: at }).where(eq(scimTokens.id, row.id));
      return { revokedAt: ts(at), success: true };
    },
  }),
];
