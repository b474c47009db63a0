import { and, eq, isNull } from 'drizzle-orm';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describeError, log } from '../core/log.ts';
import { customers, projectMembers, projects, userTokens } from '../store/schema/index.ts';
import type { ProjectRole, TokenVerifier } from './auth.ts';
import type { ControlDeps } from './deps.ts';
import { DEFAULT_PROJECT } from './schemas.ts';
import { ringOf } from './signing-keys.ts';

export const TOKEN_ISSUER = 'ai-gateway';
export const TOKEN_AUDIENCE = 'ai-gateway';

/**
 * `lastUsedAt` without a database write per request: the management API marks a token used in
 * memory and one batched write per flush interval stores the newest use of every token marked
 * since (at most one row update per token per interval). Inference use is not written here: the
 * data plane's request records (batched, flushed periodically) name the token (`apiKeyId`
 * `user-token:<jti>`), and GetUserToken takes the newer of the two.
 */
export class TokenUsage {
  #pending = new Map<string, Date>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly deps: ControlDeps,
    private readonly intervalMs = 5_000,
  ) {}

  mark(jti: string, at = new Date()): void {
    this.#pending.set(jti, at);
    if (!this.#timer) {
      this.#timer = setInterval(() => void this.flush(), this.intervalMs);
      this.#timer.unref?.();
    }
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const batch = this.#pending;
    this.#pending = new Map();
    try {
      await this.deps.db.transaction(async (tx) => {
        for (const [jti, at] of batch) await tx.update(userTokens).set({ lastUsedAt: at }).where(eq(userTokens.jti, jti));
      });
    } catch (e) {
      // Kept for the next flush (newer marks win).
      for (const [jti, at] of batch) if (!this.#pending.has(jti)) this.#pending.set(jti, at);
      log.every('token-usage-flush', 'warn', 'storing user-token lastUsedAt failed; will retry', { error: describeError(e) }, 30_000);
    }
  }
}

const usages = new WeakMap<ControlDeps, TokenUsage>();
export const usageOf = (deps: ControlDeps): TokenUsage => {
  let u = usages.get(deps);
  if (!u) {
    u = new TokenUsage(deps);
    usages.set(deps, u);
  }
  return u;
};

/**
 * Verifies user tokens for the management API: signature (a kid of ours, RS256 only: `alg: none`
 * and HMAC are refused), issuer, audience, expiry; a persisted token must not be revoked (checked
 * on every call: revocation is refused at once); its customer row (the `tenant` claim) must be live. The principal's roles
 * are the user's current project memberships in that customer; its session project is the
 * token's `project` claim (else the default project).
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
    const { sub, customer, jti, tenant, project } = claims;
    // A platform admin's single sign-on session (ExchangeOidcToken, admin group): short-lived, not persisted.
    if (claims.adm === true && claims.sso === true && typeof sub === 'string' && sub !== '') return { kind: 'platform_admin', userId: sub };
    if (typeof sub !== 'string' || typeof customer !== 'string' || typeof jti !== 'string') return undefined;
    const [c] = await deps.db
      .select({ id: customers.id })
      .from(customers)
      .where(and(eq(customers.customerId, customer), isNull(customers.deletedAt)))
      .limit(1);
    // Bound to the customer's row id (the `tenant` claim, on every token issued): a token of a deleted
    // customer never works for a new customer of the same slug.
    if (!c || tenant !== c.id) return undefined;
    const persisted = claims.imp !== true;
    if (persisted) {
      const [row] = await deps.db.select().from(userTokens).where(eq(userTokens.jti, jti)).limit(1);
      if (!row || row.revokedAt || row.expiresAt.getTime() <= Date.now() || row.userId !== sub || row.customerUuid !== c.id)
        return undefined;
      usageOf(deps).mark(jti);
    }
    const memberships = await deps.db
      .select({ projectId: projects.projectId, role: projectMembers.role })
      .from(projectMembers)
      .innerJoin(projects, and(eq(projects.id, projectMembers.projectUuid), isNull(projects.deletedAt)))
      .where(and(eq(projects.customerUuid, c.id), eq(projectMembers.userId, sub)));
    return {
      kind: 'user',
      userId: sub,
      customerId: customer,
      customerUuid: c.id,
      projectId: typeof project === 'string' && project !== '' ? project : DEFAULT_PROJECT,
      ...(persisted ? { jti } : {}),
      roles: new Map<string, ProjectRole>(memberships.map((m) => [m.projectId, m.role])),
    };
  };
