import { ManagementClient } from '../../api/client.ts';

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
  if (!claims) return { token, client, admin: true };
  const customerId = str(claims.customer);
  const projectId = str(claims.project) ?? 'default';
  const userId = str(claims.sub);
  return { token, client, admin: false, ...(customerId ? { customerId } : {}), projectId, ...(userId ? { userId } : {}) };
};

export const savedToken = (): string | undefined => sessionStorage.getItem(KEY) ?? undefined;
export const saveToken = (token: string): void => sessionStorage.setItem(KEY, token);
export const forgetToken = (): void => sessionStorage.removeItem(KEY);
