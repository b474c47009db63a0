import { isRecord } from '../core/json.ts';
import { timingSafeEqual } from 'node:crypto';
import { connectError, databaseUnavailable, GatewayError, isDatabaseUnavailable } from '../core/errors.ts';
import { sha256Hex } from '../core/ids.ts';
import type { OpDef, Scope } from './connect.ts';
import { projectOrDefault } from '../api/kit.ts';

export type ProjectRole = 'admin' | 'member';

/** Who is calling the management API. */
export type Principal =
  /** The platform-admin token, or a platform-admin session of single sign-on (`userId`: who signed in). */
  | { kind: 'platform_admin'; userId?: string }
  /** A caller of a `public` operation (ExchangeOidcToken): no credential was asked for. */
  | { kind: 'anonymous' }
  /** The gateway itself (first-start demo seeding); never the result of authenticating a request. */
  | { kind: 'system' }
  | {
      kind: 'user';
      userId: string;
      /** The customer's slug (for messages and audit entries; never compared for access). */
      customerId: string;
      /** The customer's row id, live when the credential was checked: what access is decided on. */
      customerUuid: string;
      /** The session's project (the token's `project` claim; the default project when it has none). */
      projectId?: string;
      /** The user token's id (for lastUsedAt), when the credential is a persisted user token. */
      jti?: string;
      /** Project roles of the user within its customer: projectId → role. */
      roles: ReadonlyMap<string, ProjectRole>;
      /** Set when the caller is a service account (its JWT; scopes map to roles, see service-account-auth.ts). */
      serviceAccountId?: string;
    };

const equalHex = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export const bearer = (request: Request): string | undefined => {
  const h = request.headers.get('authorization');
  const m = h ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
};

/** Extra credential kinds (user tokens, service accounts) plug in here. */
export type TokenVerifier = (token: string) => Promise<Principal | undefined>;

/** The row id of the live customer with this slug (undefined when none is live). */
export type LiveCustomer = (customerId: string) => Promise<string | undefined>;

/**
 * Management authentication and authorization. The platform-admin token may call everything; a
 * user token (see user-tokens.ts) may call what its project roles allow: `admin` manages its
 * project, `member` reads it. Each operation names its permission (see `Permission`).
 */
export class ManagementAuth {
  readonly #adminHashes: string[];
  readonly #verifiers: TokenVerifier[] = [];
  readonly #liveCustomer: LiveCustomer;

  constructor(adminTokenHashes: readonly string[], liveCustomer: LiveCustomer) {
    this.#adminHashes = [...adminTokenHashes];
    this.#liveCustomer = liveCustomer;
  }

  addVerifier(v: TokenVerifier): void {
    this.#verifiers.push(v);
  }

  authenticate = async (request: Request): Promise<Principal> => {
    const token = bearer(request);
    if (!token) throw connectError('unauthenticated', 'missing credentials: send "Authorization: Bearer <token>"');
    const hash = sha256Hex(token);
    if (this.#adminHashes.some((h) => equalHex(h, hash))) return { kind: 'platform_admin' };
    for (const v of this.#verifiers) {
      const p = await v(token);
      if (p) return p;
    }
    throw connectError('unauthenticated', 'invalid credentials');
  };

  /**
   * Runs before the body is validated: `input` is the body as sent (property names normalised
   * only), so a scope function may meet any JSON value. A scope that cannot be determined — the
   * function fails on the body, or yields something that is not a customer (and project) slug —
   * is no access: `permission_denied`. A missing resource (`not_found`) and an unreachable
   * database (`unavailable`) are reported as such. Access is decided on the customer's ROW id, never
   * its slug: the scope's row id when the scope function read it from the target, else the row id
   * of the live customer with the scope's slug — so a credential of a deleted customer never reaches
   * a new customer of the same slug, nor a new customer's credential the old customer's rows.
   */
  authorize = async (principal: Principal, def: OpDef, input: unknown): Promise<void> => {
    if (def.permission === 'public') return;
    if (principal.kind === 'anonymous') throw connectError('unauthenticated', 'missing credentials');
    if (principal.kind === 'platform_admin' || principal.kind === 'system' || def.permission === 'authenticated') return;
    if (def.permission === 'platform_admin') throw connectError('permission_denied', `${def.name} requires a platform admin`);
    const denied = () => connectError('permission_denied', 'no access to this resource');
    let scope: Scope | undefined;
    try {
      scope = def.scope && isRecord(input) ? await def.scope(input) : undefined;
    } catch (e) {
      if (
        e instanceof GatewayError &&
        (e.connectCode === 'permission_denied' || e.connectCode === 'not_found' || e.connectCode === 'unavailable')
      )
        throw e;
      if (isDatabaseUnavailable(e)) throw databaseUnavailable();
      throw denied();
    }
    if (!scope || typeof scope.customerId !== 'string' || scope.customerId !== principal.customerId) throw denied();
    if (scope.projectId !== undefined && typeof scope.projectId !== 'string') throw denied();
    let owner: string | undefined;
    try {
      owner = typeof scope.customerUuid === 'string' ? scope.customerUuid : await this.#liveCustomer(scope.customerId);
    } catch (e) {
      throw isDatabaseUnavailable(e) ? databaseUnavailable() : e;
    }
    if (owner === undefined || owner !== principal.customerUuid) throw denied();
    if (def.permission === 'customer_member') return;
    const project = projectOrDefault(scope.projectId);
    const role = principal.roles.get(project);
    if (!role) throw connectError('permission_denied', `not a member of project '${project}'`);
    if (def.permission === 'project_admin' && role !== 'admin')
      throw connectError('permission_denied', `${def.name} requires the admin role in project '${project}'`);
  };
}
