import { ApiError, ManagementClient } from '../../api/client.ts';
import { type Change, ChangeLog, revisionsOf } from './changes.ts';

/**
 * The signed-in token and what it says about its holder. The token stays in this tab's
 * sessionStorage (gone when the tab closes or on sign-out) and is sent only to the management API
 * of the origin that served the console. A user token's claims are read (not verified: the API
 * verifies every call) to preselect its customer and project.
 */

const KEY = 'gateway-console-token';

export interface Session {
  token: string;
  client: ManagementClient;
  /** The platform-admin token (not a JWT). */
  admin: boolean;
  /** From a user token's claims. */
  customerId?: string;
  projectId?: string;
  userId?: string;
  /** A single sign-on session (sso.tsx): sign-out revokes its token. */
  sso?: boolean;
  /** The user token's id (`jti` claim). */
  jti?: string;
  /** The changes saved in this sign-in, with their stages. */
  changes: ChangeLog;
}

const claimsOf = (token: string): Record<string, unknown> | undefined => {
  const part = token.split('.')[1];
  if (token.split('.').length !== 3 || !part) return undefined;
  try {
    const parsed: unknown = JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/')));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.fromEntries(Object.entries(parsed)) : undefined;
  } catch {
    return undefined;
  }
};

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export const sessionOf = (token: string): Session => {
  const client = new ManagementClient({ endpoint: location.origin, token, attempts: 2, timeoutMs: 15_000 });
  const claims = claimsOf(token);
  if (!claims) return { token, client, admin: true, changes: new ChangeLog() };
  // A platform admin's single sign-on session: a JWT with the `adm` claim.
  if (claims.adm === true)
    return { token, client, admin: true, sso: true, changes: new ChangeLog(), ...(str(claims.sub) ? { userId: str(claims.sub) } : {}) };
  const customerId = str(claims.customer);
  const jti = str(claims.jti);
  const projectId = str(claims.project) ?? 'default';
  const userId = str(claims.sub);
  return {
    token,
    client,
    admin: false,
    changes: new ChangeLog(),
    ...(customerId ? { customerId } : {}),
    projectId,
    ...(userId ? { userId } : {}),
    ...(jti ? { jti } : {}),
    ...(claims.sso === true ? { sso: true } : {}),
  };
};

export const savedToken = (): string | undefined => sessionStorage.getItem(KEY) ?? undefined;
export const saveToken = (token: string): void => sessionStorage.setItem(KEY, token);
export const forgetToken = (): void => sessionStorage.removeItem(KEY);

const revisions = (s: Session): Promise<Record<string, string> | undefined> =>
  s.client.call('GetConfigStatus', {}).then(
    (a) => revisionsOf(a.dataplanes),
    (e: unknown) => {
      if (e instanceof ApiError) return undefined;
      throw e;
    },
  );

/**
 * Runs a write and logs it as a change (changes.ts): each plane's revision is read before it and
 * again once it returned, which names the revision the write made on every plane it affects.
 */
export const saveChange = async <T>(s: Session, what: string, write: () => Promise<T>): Promise<{ answer: T; change: Change }> => {
  const before = await revisions(s);
  const answer = await write();
  const change = s.changes.add(what, before);
  void s.client.call('GetConfigStatus', {}).then(
    (a) => s.changes.observe(change.id, a.dataplanes),
    (e: unknown) => {
      if (!(e instanceof ApiError)) throw e;
    },
  );
  return { answer, change };
};
