import { and, asc, eq, isNull } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { DEFAULT_PROJECT, ts } from '../../api/kit.ts';
import { SsoOps } from '../../api/ops/sso.ts';
import { connectError } from '../../core/errors.ts';
import { uuid } from '../../core/ids.ts';
import { customers, projectMembers, projects, userTokens } from '../../store/schema/index.ts';
import type { OpDef } from '../connect.ts';
import type { ControlDeps, Reader } from '../deps.ts';
import type { VerifiedIdentity } from '../oidc.ts';
import { mutation } from '../mutation.ts';
import { ringOf } from '../signing-keys.ts';
import { TOKEN_AUDIENCE, TOKEN_ISSUER } from '../user-token-auth.ts';

/**
 * ExchangeOidcToken (contract §16): an ID token of the configured OpenID Provider, verified
 * (oidc.ts), becomes a gateway user token. A member gets a persisted user token of its customer
 * (revocable, listed, revoked by SCIM deactivation); a member of the admin group a platform-admin
 * session token (`adm: true`, short, not persisted: user-token-auth.ts accepts it while it lasts).
 */

/** A member's session (hours). */
export const SSO_MEMBER_HOURS = 8;
/** A platform admin's session (hours): not persisted, so not revocable; kept short. */
export const SSO_ADMIN_HOURS = 1;
/** The `org_unit` and `role` claims of sign-in tokens (access comes from project memberships). */
const SSO_ORG_UNIT = 'sso';

const { ExchangeOidcToken } = SsoOps;

/** The customers where a user is a project member, each with the projects (sorted), live rows only. */
const membershipsOf = async (db: Reader, userId: string) => {
  const rows = await db
    .select({ customerUuid: customers.id, customerId: customers.customerId, projectId: projects.projectId, projectUuid: projects.id })
    .from(projectMembers)
    .innerJoin(projects, and(eq(projects.id, projectMembers.projectUuid), isNull(projects.deletedAt)))
    .innerJoin(customers, and(eq(customers.id, projects.customerUuid), isNull(customers.deletedAt)))
    .where(eq(projectMembers.userId, userId))
    .orderBy(asc(customers.customerId), asc(projects.projectId));
  const by = new Map<string, { customerUuid: string; customerId: string; projects: { projectId: string; projectUuid: string }[] }>();
  for (const r of rows) {
    const c = by.get(r.customerId) ?? { customerUuid: r.customerUuid, customerId: r.customerId, projects: [] };
    c.projects.push({ projectId: r.projectId, projectUuid: r.projectUuid });
    by.set(r.customerId, c);
  }
  return [...by.values()];
};

export const ssoOps = (deps: ControlDeps): OpDef[] => {
  /** The identity each call's ID token names, verified before the transaction (the keys may be fetched). */
  const verified = new WeakMap<Request, VerifiedIdentity>();
  return [
    mutation(deps, ExchangeOidcToken, {
      resourceId: (_i, o) => o?.userId ?? '',
      before: async (input, ctx) => {
        if (!deps.oidc) throw connectError('failed_precondition', 'single sign-on is not configured (GATEWAY_OIDC_ISSUER)');
        verified.set(ctx.request, await deps.oidc.verify(input.idToken));
        await ringOf(deps).active(ctx.call);
      },
      handler: async (input, { tx, request }) => {
        const who = verified.get(request);
        if (!who) throw connectError('unauthenticated', 'invalid ID token', 'idToken');
        const signer = await ringOf(deps).active();
        const now = new Date();
        const sign = (claims: Record<string, unknown>, jti: string, expiresAt: Date) =>
          new SignJWT(claims)
            .setProtectedHeader({ alg: 'RS256', kid: signer.kid, typ: 'JWT' })
            .setIssuer(TOKEN_ISSUER)
            .setAudience(TOKEN_AUDIENCE)
            .setSubject(who.userId)
            .setJti(jti)
            .setIssuedAt(Math.floor(now.getTime() / 1000))
            .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
            .sign(signer.key);
        if (who.admin) {
          const expiresAt = new Date(now.getTime() + SSO_ADMIN_HOURS * 3_600_000);
          const token = await sign({ adm: true, sso: true }, uuid(), expiresAt);
          return { token, expiresAt: ts(expiresAt), userId: who.userId, admin: true, customerId: '' };
        }
        const all = await membershipsOf(tx, who.userId);
        const candidates = input.customerId ? all.filter((c) => c.customerId === input.customerId) : all;
        const [customer] = candidates;
        if (!customer) throw connectError('permission_denied', `user '${who.userId}' is not a member of any project`);
        if (candidates.length > 1)
          throw connectError(
            'failed_precondition',
            `user '${who.userId}' is a member in several customers (${candidates.map((c) => c.customerId).join(', ')}): name one in customerId`,
            'customerId',
          );
        const session = customer.projects.find((p) => p.projectId === DEFAULT_PROJECT) ?? customer.projects[0];
        const expiresAt = new Date(now.getTime() + SSO_MEMBER_HOURS * 3_600_000);
        const jti = uuid();
        const claims: Record<string, unknown> = {
          customer: customer.customerId,
          tenant: customer.customerUuid,
          workspace: 'default',
          role: 'member',
          org_unit: SSO_ORG_UNIT,
          scopes: [],
          sso: true,
          ...(session && session.projectId !== DEFAULT_PROJECT ? { project: session.projectId } : {}),
        };
        const token = await sign(claims, jti, expiresAt);
        await tx.insert(userTokens).values({
          jti,
          userId: who.userId,
          customerUuid: customer.customerUuid,
          customerId: customer.customerId,
          workspaceId: 'default',
          projectId: session && session.projectId !== DEFAULT_PROJECT ? session.projectId : null,
          projectUuid: session && session.projectId !== DEFAULT_PROJECT ? session.projectUuid : null,
          organizationUnit: SSO_ORG_UNIT,
          role: 'member',
          scopes: [],
          name: 'single sign-on',
          createdAt: now,
          expiresAt,
        });
        return { token, expiresAt: ts(expiresAt), userId: who.userId, admin: false, customerId: customer.customerId };
      },
    }),
  ];
};
