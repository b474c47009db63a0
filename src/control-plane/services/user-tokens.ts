import { and, eq, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { decodeProtectedHeader, exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, importSPKI, jwtVerify, SignJWT } from 'jose';
import { connectError } from '../../core/errors.ts';
import { randomToken, uuid } from '../../core/ids.ts';
import { customers, projectMembers, projects, signingKeys, userTokens } from '../../store/schema/index.ts';
import type { ProjectRole, TokenVerifier } from '../auth.ts';
import type { OpDef } from '../connect.ts';
import type { CallInfo } from '../audit-record.ts';
import type { ControlDeps } from '../deps.ts';
import { lockCustomer, lockProject } from '../lookups.ts';
import { mutation, systemMutation } from '../mutation.ts';
import { DEFAULT_PROJECT, Int64, Nullable, PATTERNS, Str, StringMap, Timestamp, int64Value, ts } from '../schemas.ts';
import { xxhash64Hex } from './apikeys.ts';

/**
 * User tokens, minimally (the identity issue completes them): CreateUserToken issues an RS256 JWT
 * signed with a key the management plane keeps (private key wrapped with the KEK in
 * `signing_keys`), and `userTokenVerifier` lets such tokens call the management API with the
 * caller's project roles (from project members).
 *
 * Claims: iss/aud `ai-gateway`, sub = userId, customer, tenant (the customer's row id: a customer
 * re-created with the same slug does not accept the old one's tokens), workspace, project (when
 * projectId is set), role, org_unit, scopes, jti, iat, exp; impersonation tokens add `imp: true` and
 * `act: {sub: impersonatorKey}` and are not persisted.
 */

export const TOKEN_ISSUER = 'ai-gateway';
export const TOKEN_AUDIENCE = 'ai-gateway';
const PURPOSE = 'user_token';
const DEFAULT_DAYS = 30;

interface ActiveKey {
  kid: string;
  key: CryptoKey;
}

/** The signing key ring: one active RS256 key, created on first use; public keys by kid. */
class SigningKeys {
  #active: Promise<ActiveKey> | undefined;
  readonly #publics = new Map<string, Promise<CryptoKey | undefined>>();

  constructor(private readonly deps: ControlDeps) {}

  /** The active key; `cause` is the request that needed it (kept in the audit entry of its creation). */
  active(cause?: CallInfo): Promise<ActiveKey> {
    this.#active ??= this.#loadOrCreate(cause).catch((e: unknown) => {
      this.#active = undefined;
      throw e;
    });
    return this.#active;
  }

  publicKey(kid: string): Promise<CryptoKey | undefined> {
    let p = this.#publics.get(kid);
    if (!p) {
      p = (async () => {
        const [row] = await this.deps.db.select().from(signingKeys).where(eq(signingKeys.kid, kid)).limit(1);
        return row ? importSPKI(row.publicKeyPem, 'RS256') : undefined;
      })();
      // Unknown kids are not cached (a key created by another replica may appear).
      void p.then((k) => (k ? undefined : this.#publics.delete(kid))).catch(() => this.#publics.delete(kid));
      this.#publics.set(kid, p);
    }
    return p;
  }

  async #loadOrCreate(cause: CallInfo | undefined): Promise<ActiveKey> {
    const read = async () =>
      (await this.deps.db.select().from(signingKeys).where(and(eq(signingKeys.purpose, PURPOSE), isNull(signingKeys.retiredAt))).limit(1))[0];
    let row = await read();
    if (!row) {
      const pair = await generateKeyPair('RS256', { extractable: true });
      const kid = `uk_${randomToken(16)}`;
      const publicKeyPem = await exportSPKI(pair.publicKey);
      const privateKeyWrapped = this.deps.secrets.wrap(await exportPKCS8(pair.privateKey));
      // Data planes verify user tokens on inference with the public keys: a new key is configuration.
      // The gateway creates it on its own: a system mutation, audited with actorType system.
      await systemMutation(
        this.deps,
        { actionType: 'CREATE', resourceType: 'signing_key', resourceId: kid },
        async ({ tx, change }) => {
          const inserted = await tx
            .insert(signingKeys)
            .values({ kid, purpose: PURPOSE, alg: 'RS256', publicKeyPem, privateKeyWrapped })
            .onConflictDoNothing()
            .returning({ kid: signingKeys.kid });
          if (inserted.length === 0) return undefined;
          await change({ kind: 'SIGNING_KEY', entity: 'signing_key', entityId: kid });
          return kid;
        },
        cause,
      );
      row = await read();
    }
    if (!row) throw new Error('no signing key');
    return { kid: row.kid, key: await importPKCS8(this.deps.secrets.unwrap(row.privateKeyWrapped), 'RS256') };
  }
}

const rings = new WeakMap<ControlDeps, SigningKeys>();
const ringOf = (deps: ControlDeps): SigningKeys => {
  let r = rings.get(deps);
  if (!r) {
    r = new SigningKeys(deps);
    rings.set(deps, r);
  }
  return r;
};

const TokenSlug = (what: string) => Str(1, 100, { pattern: '^[a-z0-9_-]+$', description: `${what} (1-100, ^[a-z0-9_-]+$)` });

export const userTokenOps = (deps: ControlDeps): OpDef[] => [
  mutation(deps, {
    action: 'ISSUE',
    resource: 'user_token',
    resourceId: (i, o) => o?.jti ?? '',
    service: 'admin.v1.AdminService',
    group: 'User tokens',
    name: 'CreateUserToken',
    summary: 'Issue a user token (RS256 JWT) — minimal: Get/Revoke arrive with the identity issue',
    notes:
      "A user token authenticates to the management API with the user's project roles (project members: 'admin' manages its project, 'member' reads it) and carries the `project` claim when projectId is set. projectId unset means the default project; for another project the user must be a member (failed_precondition). expiresInDays defaults to 30. impersonate true: the token is not persisted.",
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
      const days = input.expiresInDays == null ? DEFAULT_DAYS : int64Value(input.expiresInDays);
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
        ...(input.impersonate ? { imp: true, act: { sub: input.impersonationMetadata?.impersonatorKey ?? 'unknown' } } : {}),
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
];

/**
 * Verifies user tokens for the management API: signature (a kid of ours), issuer, audience,
 * expiry; a persisted token must not be revoked; its customer must be active. The principal's
 * roles are the user's current project memberships in that customer.
 */
export const userTokenVerifier =
  (deps: ControlDeps): TokenVerifier =>
  async (token) => {
    if (token.split('.').length !== 3) return undefined;
    let kid: string | undefined;
    try {
      const h = decodeProtectedHeader(token);
      if (h.alg === 'RS256' && typeof h.kid === 'string' && h.kid.length <= 64) kid = h.kid;
    } catch {
      return undefined;
    }
    const key = kid ? await ringOf(deps).publicKey(kid) : undefined;
    if (!key) return undefined;
    let claims: Record<string, unknown>;
    try {
      claims = (await jwtVerify(token, key, { issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE, algorithms: ['RS256'] })).payload;
    } catch {
      return undefined;
    }
    const { sub, customer, jti, tenant } = claims;
    if (typeof sub !== 'string' || typeof customer !== 'string' || typeof jti !== 'string') return undefined;
    const [c] = await deps.db
      .select({ id: customers.id })
      .from(customers)
      .where(and(eq(customers.customerId, customer), isNull(customers.deletedAt)))
      .limit(1);
    // A token of a deleted customer never works for a new customer of the same slug.
    if (!c || (tenant !== undefined && tenant !== c.id)) return undefined;
    if (claims.imp !== true) {
      const [row] = await deps.db.select().from(userTokens).where(eq(userTokens.jti, jti)).limit(1);
      if (!row || row.revokedAt || row.expiresAt.getTime() <= Date.now() || row.userId !== sub || row.customerUuid !== c.id) return undefined;
    }
    const memberships = await deps.db
      .select({ projectId: projects.projectId, role: projectMembers.role })
      .from(projectMembers)
      .innerJoin(projects, and(eq(projects.id, projectMembers.projectUuid), isNull(projects.deletedAt)))
      .where(and(eq(projects.customerUuid, c.id), eq(projectMembers.userId, sub)));
    return { kind: 'user', userId: sub, customerId: customer, roles: new Map<string, ProjectRole>(memberships.map((m) => [m.projectId, m.role])) };
  };
