import { eq, max } from 'drizzle-orm';
import { t } from 'elysia';
import { connectError } from '../../core/errors.ts';
import { requestRecords, type UserTokenRow, userTokens } from '../../store/schema/index.ts';
import type { Principal } from '../auth.ts';
import { op, type OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { mutation } from '../mutation.ts';
import { Nullable, OptTimestamp, Str, Timestamp, ts } from '../schemas.ts';
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

const SERVICE = 'admin.v1.AdminService' as const;
const GROUP = 'User tokens';
const USER_TOKEN_STATUS = ['USER_TOKEN_STATUS_ACTIVE', 'USER_TOKEN_STATUS_REVOKED', 'USER_TOKEN_STATUS_EXPIRED'] as const;

const UserTokenInfo = t.Object(
  {
    jti: t.String(),
    userId: t.String(),
    organizationUnit: t.String(),
    role: t.String(),
    status: t.String({ description: USER_TOKEN_STATUS.join(' | ') }),
    createdAt: Timestamp(),
    expiresAt: Timestamp(),
    lastUsedAt: OptTimestamp('absent if never used; management calls are stored in batches (within seconds), inference use from the request records'),
    revokedAt: OptTimestamp('absent while not revoked'),
    revokedReason: t.Optional(t.String()),
  },
  { description: 'UserTokenInfo (claims only, never the token)' },
);

export const tokenStatus = (row: Pick<UserTokenRow, 'revokedAt' | 'expiresAt'>, now = Date.now()): (typeof USER_TOKEN_STATUS)[number] =>
  row.revokedAt ? 'USER_TOKEN_STATUS_REVOKED' : row.expiresAt.getTime() <= now ? 'USER_TOKEN_STATUS_EXPIRED' : 'USER_TOKEN_STATUS_ACTIVE';

const Jti = () => Str(1, 64, { description: 'the token id (1-64)' });

/** Scope of a token operation: the token's customer (looked up; an unknown jti is no access for a user). */
const tokenScope = (deps: ControlDeps) => async (i: { jti: string }) => {
  if (typeof i.jti !== 'string') return undefined;
  const [row] = await deps.db.select({ customerId: userTokens.customerId, customerUuid: userTokens.customerUuid }).from(userTokens).where(eq(userTokens.jti, i.jti)).limit(1);
  return row ? { customerId: row.customerId, customerUuid: row.customerUuid } : undefined;
};

const ownToken = (p: Principal, row: UserTokenRow | undefined): row is UserTokenRow =>
  row !== undefined && (p.kind !== 'user' || (p.userId === row.userId && p.customerUuid === row.customerUuid));

export const userTokenAdminOps = (deps: ControlDeps, flushRecords: () => Promise<void>): OpDef[] => [
  op({
    service: SERVICE,
    group: GROUP,
    name: 'GetUserToken',
    summary: "A user token's claims and status (never the token)",
    notes: "The platform admin: any token; a user: its own tokens (others are not_found). Impersonation tokens are not persisted: not_found.",
    permission: 'customer_member',
    scope: tokenScope(deps),
    input: t.Object({ jti: Jti() }, { additionalProperties: false }),
    output: t.Object({ token: UserTokenInfo }),
    handler: async (input, { principal }) => {
      // lastUsedAt: the batched marks of management use and the request records of inference use, both flushed first.
      await Promise.all([usageOf(deps).flush(), flushRecords()]);
      const [row] = await deps.db.select().from(userTokens).where(eq(userTokens.jti, input.jti)).limit(1);
      if (!ownToken(principal, row)) throw connectError('not_found', `user token '${input.jti}' not found`, 'jti');
      const [inference] = await deps.db
        .select({ at: max(requestRecords.receivedAt) })
        .from(requestRecords)
        .where(eq(requestRecords.apiKeyId, `user-token:${row.jti}`));
      const uses = [row.lastUsedAt, inference?.at ?? null].filter((d): d is Date => d instanceof Date);
      const lastUsedAt = uses.length > 0 ? new Date(Math.max(...uses.map((d) => d.getTime()))) : undefined;
      return {
        token: {
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
        },
      };
    },
  }),
  mutation(deps, {
    action: 'REVOKE',
    resource: 'user_token',
    resourceId: (i) => i.jti,
    service: SERVICE,
    group: GROUP,
    name: 'RevokeUserToken',
    summary: 'Revoke a user token: refused by the management API at once, by inference within the propagation time',
    notes: 'The platform admin: any token; a user: its own tokens. Revoking a revoked token changes nothing (its first revokedAt and reason are kept).',
    permission: 'customer_member',
    scope: tokenScope(deps),
    input: t.Object({ jti: Jti(), reason: Nullable(Str(0, 500, { description: 'kept as revokedReason (0-500)' })) }, { additionalProperties: false }),
    output: t.Object({ revokedAt: Timestamp(), success: t.Boolean() }),
    handler: async (input, { tx, change, principal }) => {
      const [row] = await tx.select().from(userTokens).where(eq(userTokens.jti, input.jti)).limit(1).for('update');
      if (!ownToken(principal, row)) throw connectError('not_found', `user token '${input.jti}' not found`, 'jti');
      if (row.revokedAt) return { revokedAt: ts(row.revokedAt), success: true };
      const at = new Date();
      await tx.update(userTokens).set({ revokedAt: at, revokedReason: input.reason ?? null }).where(eq(userTokens.jti, row.jti));
      // Data planes hold the revoked, unexpired jtis: the customer's configuration changed.
      await change({ resource: 'userToken' as const, entityId: row.jti, customerId: row.customerId });
      return { revokedAt: ts(at), success: true };
    },
  }),
  mutation(deps, {
    action: 'UPDATE',
    resource: 'signing_key',
    resourceId: (_i, o) => o?.kid ?? '',
    service: SERVICE,
    group: GROUP,
    name: 'RotateUserTokenSigningKey',
    summary: 'Rotate the user-token signing key; live tokens stay valid',
    notes:
      'Retires the active RS256 key and creates a new one: new tokens carry the new kid; every retired key stays published (GET /.well-known/jwks.json and the data planes\' configuration) while a token it signed can be live (365 days), so no token is invalidated. Keys retired longer ago are deleted (deletedKids). Other replicas switch to the new key within a minute.',
    permission: 'platform_admin',
    input: t.Object({}, { additionalProperties: false }),
    output: t.Object({
      kid: t.String({ description: 'the new active kid' }),
      retiredKid: t.String({ description: "the kid retired now ('' when there was none)" }),
      deletedKids: t.Array(t.String(), { description: 'retired keys past the longest token lifetime, removed' }),
    }),
    handler: async (_input, { tx, change }) => {
      const r = await rotateSigningKey(deps, tx, new Date());
      await change({ resource: 'signingKey' as const, entityId: r.kid });
      ringOf(deps).reset();
      return r;
    },
  }),
];
