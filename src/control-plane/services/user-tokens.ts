import { and, eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { DEFAULT_PROJECT, int64Value, ts } from '../../api/kit.ts';
import { UserTokenOps } from '../../api/ops/user-tokens.ts';
import { connectError } from '../../core/errors.ts';
import { uuid } from '../../core/ids.ts';
import { projectMembers } from '../../store/schema/index.ts';
import type { OpDef } from '../connect.ts';
import type { ControlDeps, ManagementHooks } from '../deps.ts';
import { findCustomer, lockCustomer, lockProject } from '../lookups.ts';
import { mutation } from '../mutation.ts';
import { ringOf } from '../signing-keys.ts';
import { TOKEN_AUDIENCE, TOKEN_ISSUER } from '../user-token-auth.ts';
import { xxhash64Hex } from './apikeys.ts';
import { userTokens } from '../../store/schema/index.ts';
import { userTokenAdminOps } from './user-token-admin.ts';

/**
 * User tokens: CreateUserToken issues an RS256 JWT signed with the active key of the signing key
 * ring (signing-keys.ts; private key wrapped with the KEK in `signing_keys`, rotatable without
 * invalidating live tokens); `userTokenVerifier` (user-token-auth.ts) lets such tokens call the
 * management API with the caller's project roles (from project members), and data planes accept
 * them on inference (verified against the public keys in their configuration). GetUserToken,
 * RevokeUserToken and RotateUserTokenSigningKey are in user-token-admin.ts.
 *
 * Claims: iss/aud `ai-gateway`, sub = userId, customer, tenant (the customer's row id: a customer
 * re-created with the same slug does not accept the old one's tokens), workspace, project (when
 * projectId is set), role, org_unit, scopes, jti, iat, exp; impersonation tokens add `imp: true` and
 * `act: {sub: impersonatorKey, reason?, ctx?}` (the ImpersonationMetadata) and are not persisted.
 */

interface ImpersonationIn {
  impersonatorKey: string;
  reason?: string | null;
  context?: Record<string, string>;
}

/** The impersonation metadata as the JWT `act` claim (RFC 8693 actor: `sub` is the impersonator). */
const impersonationClaim = (m: ImpersonationIn | null | undefined): Record<string, unknown> => {
  if (!m)
    throw connectError(
      'invalid_argument',
      "invalid field 'impersonationMetadata': required when impersonate is true",
      'impersonationMetadata',
    );
  return {
    sub: m.impersonatorKey,
    ...(m.reason ? { reason: m.reason } : {}),
    ...(m.context && Object.keys(m.context).length > 0 ? { ctx: m.context } : {}),
  };
};

/** expiresInDays when unset. */
export const DEFAULT_TOKEN_DAYS = 30;

const { CreateUserToken } = UserTokenOps;

export const userTokenOps = (deps: ControlDeps, hooks: ManagementHooks): OpDef[] => [
  mutation(deps, CreateUserToken, {
    resourceId: (_i, o) => o?.jti ?? '',
    // The signing key is created (on first use) in its own transaction, before this one — only for
    // a customer that exists, so a refused call leaves nothing behind (the handler checks again under lock).
    before: async (input, ctx) => {
      await findCustomer(deps.db, input.customerId);
      await ringOf(deps).active(ctx.call);
    },
    handler: async (input, { tx }) => {
      const projectId = input.projectId ? input.projectId : undefined;
      // Checked and persisted under the parent rows' lock: a concurrent delete cascades over the token (revokes it) or refuses it.
      const customer = await lockCustomer(tx, input.customerId);
      const project = projectId ? await lockProject(tx, input.customerId, projectId) : undefined;
      if (project && project.customerUuid !== customer.id)
        throw connectError('not_found', `customer '${input.customerId}' not found`, 'customerId');
      if (project) {
        if (project.projectId !== DEFAULT_PROJECT) {
          const [m] = await tx
            .select({ id: projectMembers.id })
            .from(projectMembers)
            .where(and(eq(projectMembers.projectUuid, project.id), eq(projectMembers.userId, input.userId)))
            .limit(1);
          if (!m)
            throw connectError(
              'failed_precondition',
              `user '${input.userId}' is not a member of project '${project.projectId}'`,
              'projectId',
            );
        }
      }
      const days = input.expiresInDays == null ? DEFAULT_TOKEN_DAYS : int64Value(input.expiresInDays);
      const now = new Date();
      const expiresAt = new Date(now.getTime() + days * 86_400_000);
      const jti = uuid();
      const signer = await ringOf(deps).active();
      const claims: Record<string, unknown> = {
        customer: input.customerId,
        tenant: customer.id,
        workspace: input.workspaceId,
        role: input.role,
        org_unit: input.organizationUnit,
        scopes: input.scopes ?? [],
        ...(projectId ? { project: projectId } : {}),
        ...(input.impersonate ? { imp: true, act: impersonationClaim(input.impersonationMetadata) } : {}),
      };
      const accessToken = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: signer.kid, typ: 'JWT' })
        .setIssuer(TOKEN_ISSUER)
        .setAudience(TOKEN_AUDIENCE)
        .setSubject(input.userId)
        .setJti(jti)
        .setIssuedAt(Math.floor(now.getTime() / 1000))
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(signer.key);
      // Not configuration (data planes do not read user tokens): no change rows. Impersonation tokens are not persisted.
      if (!input.impersonate) {
        await tx.insert(userTokens).values({
          jti,
          userId: input.userId,
          customerUuid: customer.id,
          customerId: input.customerId,
          workspaceId: input.workspaceId,
          projectId: projectId ?? null,
          projectUuid: project?.id ?? null,
          organizationUnit: input.organizationUnit,
          role: input.role,
          scopes: input.scopes ?? [],
          name: input.name ?? null,
          createdAt: now,
          expiresAt,
        });
      }
      return {
        accessToken,
        tokenType: 'Bearer',
        expiresAt: ts(expiresAt),
        expiresIn: String(days * 86_400),
        jti,
        keyAddress: xxhash64Hex(input.userId),
        keyHash: jti,
        keyPrefix: xxhash64Hex(jti).slice(0, 12),
      };
    },
  }),
  ...userTokenAdminOps(deps, hooks.flushRecords),
];
