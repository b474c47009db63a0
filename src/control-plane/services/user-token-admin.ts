import { and, eq, inArray, isNull, max } from 'drizzle-orm';
import { ts } from '../../api/kit.ts';
import { type UserTokenStatus, UserTokenOps } from '../../api/ops/user-tokens.ts';
import { connectError } from '../../core/errors.ts';
import { customers, requestRecords, type UserTokenRow, userTokens } from '../../store/schema/index.ts';
import type { Principal } from '../auth.ts';
import { op, type OpDef, type Scope, type Unchecked } from '../connect.ts';
import { keyset, page, pageSizeOf } from '../paging.ts';
import type { ControlDeps } from '../deps.ts';
import { mutation, rid } from '../mutation.ts';
import { ringOf, rotateSigningKey } from '../signing-keys.ts';
import { usageOf } from '../user-token-auth.ts';

/**
 * GetUserToken, RevokeUserToken and the signing key rotation.
 *
 * Who: the platform admin for every token; a user token of the same customer for the caller's own
 * tokens (another user's token is not_found). Status: REVOKED once revoked, else EXPIRED once
 * `expiresAt` passed, else ACTIVE. Revocation is refused by the management API at once (the
 * verifier reads the row on every call) and reaches data planes with the configuration (revoked,
 * unexpired jtis are in the configuration document), so inference refuses it within the
 * propagation time.
 */

const { GetUserToken, ListUserTokens, RevokeUserToken, RotateUserTokenSigningKey } = UserTokenOps;

export const tokenStatus = (row: Pick<UserTokenRow, 'revokedAt' | 'expiresAt'>, now = Date.now()): UserTokenStatus =>
  row.revokedAt ? 'USER_TOKEN_STATUS_REVOKED' : row.expiresAt.getTime() <= now ? 'USER_TOKEN_STATUS_EXPIRED' : 'USER_TOKEN_STATUS_ACTIVE';

/** Scope of a token operation: the token's customer (looked up; an unknown jti is no access for a user). */
const tokenScope =
  (deps: ControlDeps) =>
  async (i: Unchecked<{ jti: string }>): Promise<Scope | undefined> => {
    if (typeof i.jti !== 'string') return undefined;
    const [row] = await deps.db
      .select({ customerId: userTokens.customerId, customerUuid: userTokens.customerUuid })
      .from(userTokens)
      .where(eq(userTokens.jti, i.jti))
      .limit(1);
    return row ? { customerId: row.customerId, customerUuid: row.customerUuid } : undefined;
  };

/** A token's claims and status; lastUsedAt is the later of management use (the row) and inference use (the records). */
const tokenInfo = (row: UserTokenRow, inferenceAt: Date | null) => {
  const uses = [row.lastUsedAt, inferenceAt].filter((d): d is Date => d instanceof Date);
  const lastUsedAt = uses.length > 0 ? new Date(Math.max(...uses.map((d) => d.getTime()))) : undefined;
  return {
    jti: row.jti,
    userId: row.userId,
    organizationUnit: row.organizationUnit,
    role: row.role,
    status: tokenStatus(row),
    createdAt: ts(row.createdAt),
    expiresAt: ts(row.expiresAt),
    ...(lastUsedAt ? { lastUsedAt: ts(lastUsedAt) } : {}),
    ...(row.revokedAt ? { revokedAt: ts(row.revokedAt) } : {}),
    ...(row.revokedReason ? { revokedReason: row.revokedReason } : {}),
  };
};

const ownToken = (p: Principal, row: UserTokenRow | undefined): row is UserTokenRow =>
  row !== undefined && (p.kind !== 'user' || (p.userId === row.userId && p.customerUuid === row.customerUuid));

export const userTokenAdminOps = (deps: ControlDeps, flushRecords: () => Promise<void>): OpDef[] => [
  op(GetUserToken, {
    scope: tokenScope(deps),
    handler: async (input, { principal }) => {
      // lastUsedAt: the batched marks of management use and the request records of inference use, both flushed first.
      await Promise.all([usageOf(deps).flush(), flushRecords()]);
      const [row] = await deps.db.select().from(userTokens).where(eq(userTokens.jti, input.jti)).limit(1);
      if (!ownToken(principal, row)) throw connectError('not_found', `user token '${input.jti}' not found`, 'jti');
      const [inference] = await deps.db
        .select({ at: max(requestRecords.receivedAt) })
        .from(requestRecords)
        .where(eq(requestRecords.apiKeyId, `user-token:${row.jti}`));
      return { token: tokenInfo(row, inference?.at ?? null) };
    },
  }),
  op(ListUserTokens, {
    scope: (i) => (typeof i.customerId === 'string' ? { customerId: i.customerId } : undefined),
    handler: async (input, { principal }) => {
      await Promise.all([usageOf(deps).flush(), flushRecords()]);
      const size = pageSizeOf(input.pageSize);
      const k = keyset(userTokens.createdAt, userTokens.jti, input.pageToken);
      // A user sees its own tokens (of the customer row it authenticated in); authorization checked the slug.
      const user = principal.kind === 'user' ? principal : undefined;
      if (user && input.userId !== undefined && input.userId !== user.userId) return { tokens: [], nextPageToken: '' };
      const rows = await deps.db
        .select()
        .from(userTokens)
        .innerJoin(customers, and(eq(customers.id, userTokens.customerUuid), isNull(customers.deletedAt)))
        .where(
          and(
            eq(userTokens.customerId, input.customerId),
            user ? and(eq(userTokens.customerUuid, user.customerUuid), eq(userTokens.userId, user.userId)) : undefined,
            input.userId !== undefined ? eq(userTokens.userId, input.userId) : undefined,
            input.includeRevoked ? undefined : isNull(userTokens.revokedAt),
            k.where,
          ),
        )
        .orderBy(...k.order)
        .limit(size + 1);
      const p = page(
        rows.map((r) => ({ ...r.user_tokens, id: r.user_tokens.jti })),
        size,
      );
      const ids = p.items.map((r) => `user-token:${r.jti}`);
      const used =
        ids.length === 0
          ? []
          : await deps.db
              .select({ key: requestRecords.apiKeyId, at: max(requestRecords.receivedAt) })
              .from(requestRecords)
              .where(inArray(requestRecords.apiKeyId, ids))
              .groupBy(requestRecords.apiKeyId);
      const inference = new Map(used.map((u) => [u.key, u.at]));
      return { tokens: p.items.map((r) => tokenInfo(r, inference.get(`user-token:${r.jti}`) ?? null)), nextPageToken: p.nextPageToken };
    },
  }),
  mutation(deps, RevokeUserToken, {
    resourceId: (i) => rid(i.jti),
    scope: tokenScope(deps),
    handler: async (input, { tx, change, principal }) => {
      const [row] = await tx.select().from(userTokens).where(eq(userTokens.jti, input.jti)).limit(1).for('update');
      if (!ownToken(principal, row)) throw connectError('not_found', `user token '${input.jti}' not found`, 'jti');
      if (row.revokedAt) return { revokedAt: ts(row.revokedAt), success: true };
      const at = new Date();
      await tx
        .update(userTokens)
        .set({ revokedAt: at, revokedReason: input.reason ?? null })
        .where(eq(userTokens.jti, row.jti));
      // Data planes hold the revoked, unexpired jtis: the customer's configuration changed.
      await change({ resource: 'userToken' as const, entityId: row.jti, customerId: row.customerId });
      return { revokedAt: ts(at), success: true };
    },
  }),
  mutation(deps, RotateUserTokenSigningKey, {
    resourceId: (_i, o) => o?.kid ?? '',
    handler: async (_input, { tx, change }) => {
      const r = await rotateSigningKey(deps, tx, new Date());
      await change({ resource: 'signingKey' as const, entityId: r.kid });
      ringOf(deps).reset();
      return r;
    },
  }),
];
