import { and, eq, inArray, isNull } from 'drizzle-orm';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { describeError, log } from '../core/log.ts';
import { customers, projects, serviceAccounts, type ServiceAccountRow } from '../store/schema/index.ts';
import type { ProjectRole, TokenVerifier } from './auth.ts';
import type { ControlDeps } from './deps.ts';

/**
 * Service-account JWTs: RS256, signed with the account's private key, `kid` = privateKeyId,
 * `sub` = clientEmail, `iss` = the account's issuer, `aud` = the account's audience, and short-lived
 * (`exp` required, at most MAX_TOKEN_LIFETIME_S after now). The account must be ACTIVE (neither
 * revoked nor past its expiry) and its customer ROW live: deleting the customer revokes its accounts
 * (cascade.ts), and an account of a deleted customer is refused as revoked even if it was not — it
 * never acts for a new customer of the same slug.
 *
 * Scopes → what the token may do (docs/security.md, "Service accounts"):
 * - `admin`: the management API with the `admin` role in every project of the account's customer;
 * - `read`: the management API with the `member` role in every project of its customer;
 * - `dataplane`: the data plane protocol (Pull, PushRecords) for its workspace — and nothing else.
 * Platform-admin operations are never open to a service account.
 */
export const MAX_TOKEN_LIFETIME_S = 3600;
const CLOCK_SKEW_S = 30;

export type SaVerdict = { ok: true; account: ServiceAccountRow } | { ok: false; reason: 'revoked' | 'expired' } | undefined;

export const accountStatus = (a: Pick<ServiceAccountRow, 'revokedAt' | 'expiresAt'>, now = Date.now()): 'ACTIVE' | 'REVOKED' | 'EXPIRED' =>
  a.revokedAt ? 'REVOKED' : a.expiresAt.getTime() <= now ? 'EXPIRED' : 'ACTIVE';

/** `lastUsedAt` is kept in memory and written in batches (not one write per call). */
class LastUsed {
  readonly #pending = new Map<string, Date>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  constructor(
    private readonly deps: Pick<ControlDeps, 'db'>,
    private readonly everyMs: number,
  ) {}

  mark(id: string): void {
    this.#pending.set(id, new Date());
    this.#timer ??= setTimeout(() => void this.flush(), this.everyMs);
    this.#timer.unref?.();
  }

  async flush(): Promise<void> {
    this.#timer = undefined;
    const batch = [...this.#pending];
    this.#pending.clear();
    for (const [id, at] of batch) {
      try {
        await this.deps.db.update(serviceAccounts).set({ lastUsedAt: at }).where(eq(serviceAccounts.id, id));
      } catch (e) {
        log.every('sa-last-used', 'warn', 'could not record service-account use', { error: describeError(e) });
      }
    }
  }
}

interface SaState {
  keys: Map<string, Promise<CryptoKey>>;
  lastUsed: LastUsed;
}
/** Per database (one management process may serve several in tests). */
const states = new WeakMap<object, SaState>();
const stateOf = (deps: Pick<ControlDeps, 'db'>): SaState => {
  let s = states.get(deps.db);
  if (!s) {
    s = { keys: new Map(), lastUsed: new LastUsed(deps, 5_000) };
    states.set(deps.db, s);
  }
  return s;
};

/** Writes pending `lastUsedAt` values now (tests, shutdown). */
export const flushLastUsed = (deps: Pick<ControlDeps, 'db'>): Promise<void> => stateOf(deps).lastUsed.flush();

/** Verifies a service-account JWT; undefined when it is not a valid one of ours. */
export const verifyServiceAccountJwt = async (deps: ControlDeps, token: string): Promise<SaVerdict> => {
  if (token.split('.').length !== 3) return undefined;
  let kid: string;
  try {
    const h = decodeProtectedHeader(token);
    if (h.alg !== 'RS256' || typeof h.kid !== 'string' || !h.kid.startsWith('sa_') || h.kid.length > 64) return undefined;
    kid = h.kid;
  } catch {
    return undefined;
  }
  const [found] = await deps.db
    .select({ account: serviceAccounts, customerDeletedAt: customers.deletedAt })
    .from(serviceAccounts)
    .innerJoin(customers, eq(customers.id, serviceAccounts.customerUuid))
    .where(eq(serviceAccounts.kid, kid))
    .limit(1);
  if (!found) return undefined;
  const row = found.account;
  const st = stateOf(deps);
  let key = st.keys.get(kid);
  if (!key) {
    key = importSPKI(row.publicKeyPem, 'RS256');
    st.keys.set(kid, key);
  }
  try {
    const { payload } = await jwtVerify(token, await key, {
      algorithms: ['RS256'],
      audience: row.audience,
      issuer: row.issuer,
      subject: row.clientEmail,
      requiredClaims: ['exp'],
      clockTolerance: CLOCK_SKEW_S,
    });
    if ((payload.exp ?? 0) > Math.floor(Date.now() / 1000) + MAX_TOKEN_LIFETIME_S + CLOCK_SKEW_S) return undefined;
  } catch {
    return undefined;
  }
  const status = found.customerDeletedAt ? 'REVOKED' : accountStatus(row);
  if (status === 'REVOKED') return { ok: false, reason: 'revoked' };
  if (status === 'EXPIRED') return { ok: false, reason: 'expired' };
  st.lastUsed.mark(row.id);
  return { ok: true, account: row };
};

const roleOf = (scopes: readonly string[]): ProjectRole | undefined =>
  scopes.includes('admin') ? 'admin' : scopes.includes('read') ? 'member' : undefined;

/**
 * The management API's verifier: a service account with scope `admin` or `read` acts as a user of
 * its customer — the customer ROW it was created for (live: checked above), with a role in that
 * row's live projects.
 */
export const serviceAccountVerifier =
  (deps: ControlDeps): TokenVerifier =>
  async (token) => {
    const v = await verifyServiceAccountJwt(deps, token);
    if (!v?.ok) return undefined;
    const role = roleOf(v.account.scopes);
    if (!role) return undefined;
    const rows = await deps.db
      .select({ projectId: projects.projectId })
      .from(projects)
      .where(and(eq(projects.customerUuid, v.account.customerUuid), isNull(projects.deletedAt)));
    return {
      kind: 'user',
      userId: v.account.clientEmail,
      customerId: v.account.customerId,
      customerUuid: v.account.customerUuid,
      roles: new Map<string, ProjectRole>(rows.map((r) => [r.projectId, role])),
      serviceAccountId: v.account.id,
    };
  };

/** Rows by id (GetConfigStatus lists the data planes of these accounts). */
export const accountsByIds = (deps: ControlDeps, ids: string[]) =>
  deps.db.select().from(serviceAccounts).where(inArray(serviceAccounts.id, ids));
