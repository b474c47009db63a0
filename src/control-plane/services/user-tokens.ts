import { and, eq } from 'drizzle-orm';
import { t } from 'elysia';
import { SignJWT } from 'jose';
import { connectError } from '../../core/errors.ts';
import { uuid } from '../../core/ids.ts';
import { projectMembers } from '../../store/schema/index.ts';
import type { OpDef } from '../connect.ts';
import type { ControlDeps } from '../deps.ts';
import { lockCustomer, lockProject } from '../lookups.ts';
import { mutation } from '../mutation.ts';
import { DEFAULT_PROJECT, Int64, Nullable, PATTERNS, Str, StringMap, Timestamp, int64Value, ts } from '../schemas.ts';
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
  if (!m) throw connectError('invalid_argument', "invalid field 'impersonationMetadata': required when impersonate is true", 'impersonationMetadata');
  return { sub: m.impersonatorKey, ...(m.reason ? { reason: m.reason } : {}), ...(m.context && Object.keys(m.context).length > 0 ? { ctx: m.context } : {}) };
};

/** expiresInDays when unset. */
export const DEFAULT_TOKEN_DAYS = 30;

const TokenSlug = (what: string) => Str(1, 100, { pattern: '^[a-z0-9_-]+$', description: `${what} (1-100, ^[a-z0-9_-]+$)` });

export const userTokenOps = (deps: ControlDeps, flushRecords: () => Promise<void>): OpDef[] => [
  mutation(deps, {
    action: 'ISSUE',
    resource: 'user_token',
    resourceId: (i, o) => o?.jti ?? '',
    service: 'admin.v1.AdminService',
    group: 'User tokens',
    name: 'CreateUserToken',
    summary: 'Issue a user token (RS256 JWT signed with the active signing key; kid in /.well-known/jwks.json)',
    notes:
      "A user token authenticates to the management API with the user's project roles (project members: 'admin' manages its project, 'member' reads it) and carries the `project` claim when projectId is set. projectId unset means the default project; for another project the user must be a member (failed_precondition). expiresInDays defaults to 30 (1..365). impersonate true: the token is not persisted (so GetUserToken/RevokeUserToken do not know it) and carries `imp: true` and `act: {sub: impersonatorKey, reason?, ctx?}`; impersonationMetadata is required with it. keyAddress = xxhash64(userId) hex, keyHash = jti, keyPrefix = first 12 hex digits of xxhash64(jti).",
    permission: 'platform_admin',
    input: t.Object(
      {
        customerId: TokenSlug('customer slug'),
        workspaceId: TokenSlug('workspace slug'),
        userId: Str(1, 255, { description: 'opaque user id from the identity provider (1-255)' }),
        organizationUnit: Str(1, 255),
        role: Str(1, 100),
        scopes: t.Optional(t.Array(Str(0, 50, { pattern: PATTERNS.SCOPE }), { maxItems: 10, description: 'at most 10, each SCOPE, max 50' })),
        name: Nullable(Str(0, 255)),
        expiresInDays: t.Optional(t.Union([Int64({ minimum: 1, maximum: 365, description: 'int64 1..365; default 30' }), t.Null()])),
        projectId: Nullable(Str(0, 253, { pattern: `^$|${PATTERNS.PROJ}`, description: 'PROJ, max 253; unset or empty = the default project' })),
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
    // The signing key is created (on first use) in its own transaction, before this one.
    before: async (_input, ctx) => {
      await ringOf(deps).active(ctx.call);
    },
    handler: async (input, { tx }) => {
      const projectId = input.projectId ? input.projectId : undefined;
      // Checked and persisted under the parent rows' lock: a concurrent delete cascades over the token (revokes it) or refuses it.
      const customer = await lockCustomer(tx, input.customerId);
      const project = projectId ? await lockProject(tx, input.customerId, projectId) : undefined;
      if (project && project.customerUuid !== customer.id) throw connectError('not_found', `customer '${input.customerId}' not found`, 'customerId');
      if (project) {
        if (project.projectId !== DEFAULT_PROJECT) {
          const [m] = await tx
            .select({ id: projectMembers.id })
            .from(projectMembers)
            .where(and(eq(projectMembers.projectUuid, project.id), eq(projectMembers.userId, input.userId)))
            .limit(1);
          if (!m) throw connectError('failed_precondition', `user '${input.userId}' is not a member of project '${project.projectId}'`, 'projectId');
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
  ...userTokenAdminOps(deps, flushRecords),
];
