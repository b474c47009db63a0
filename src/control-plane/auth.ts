import { timingSafeEqual } from 'node:crypto';
import { connectError } from '../core/errors.ts';
import { sha256Hex } from '../core/ids.ts';
import type { OpDef } from './connect.ts';

/** Who is calling the management API. */
export type Principal =
  | { kind: 'platform_admin' }
  | {
      kind: 'user';
      userId: string;
      customerId: string;
      /** Project roles of the user within its customer: projectId → role. */
      roles: ReadonlyMap<string, 'admin' | 'member'>;
    };

const equalHex = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export const bearer = (request: Request): string | undefined => {
  const h = request.headers.get('authorization');
  const m = h ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
};

/** Extra credential kinds (user tokens, service accounts) plug in here. */
export type TokenVerifier = (token: string) => Promise<Principal | undefined>;

export class ManagementAuth {
  readonly #adminHashes: string[];
  readonly #verifiers: TokenVerifier[] = [];

  constructor(adminTokenHashes: readonly string[]) {
    this.#adminHashes = [...adminTokenHashes];
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

  authorize = (principal: Principal, def: OpDef, input: unknown): void => {
    if (principal.kind === 'platform_admin' || def.permission === 'authenticated') return;
    if (def.permission === 'platform_admin') throw connectError('permission_denied', `${def.name} requires a platform admin`);
    const scope = def.scope?.(input as never);
    if (!scope || scope.customerId !== principal.customerId) throw connectError('permission_denied', `no access to this resource`);
    const role = principal.roles.get(scope.projectId === '' ? 'default' : scope.projectId);
    if (!role) throw connectError('permission_denied', `not a member of project '${scope.projectId}'`);
    if (def.permission === 'project_admin' && role !== 'admin') throw connectError('permission_denied', `${def.name} requires the project admin role`);
  };
}
