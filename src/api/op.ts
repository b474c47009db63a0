import type { Static, TObject } from '@sinclair/typebox';
import type { AuditResource } from './audit-resources.ts';

/**
 * An operation of the management API as data: where it is served, who may call it, what it takes
 * and what it answers. No handler, no store: the server binds a handler to it
 * (control-plane/connect.ts `op` / mutation.ts `mutation`), the typed client (client.ts) and the
 * Terraform provider read it as it is.
 */

export type ServiceName = 'admin.v1.AdminService' | 'apikey.v1.ApiKeyService' | 'byok.v1.ByokService';

/**
 * Who may call an operation (a platform admin may call everything):
 * - `platform_admin`: only the platform-admin token;
 * - `customer_member`: any user of the customer named by the scope;
 * - `project_admin` / `project_member`: a user with that role (admin ⊇ member) in the scoped project;
 * - `authenticated`: any valid credential;
 * - `public`: no credential (the body carries its own proof, e.g. ExchangeOidcToken's ID token).
 */
export type Permission = 'platform_admin' | 'customer_member' | 'project_admin' | 'project_member' | 'authenticated' | 'public';

export const PERMISSION_TEXT: Record<Permission, string> = {
  platform_admin: 'platform admin only',
  customer_member: 'platform admin, or a user token of the customer',
  project_admin: "platform admin, or a user with the 'admin' role in the project",
  project_member: "platform admin, or a user with the 'admin' or 'member' role in the project",
  authenticated: 'any valid credential',
  public: 'no credential: the request carries its own proof',
};

/**
 * What an audit entry's `actionType` says. CREATE/UPDATE/DELETE as the seed; REVOKE for credentials
 * (API keys, tokens) that stay on record; ISSUE for credentials minted without a stored resource.
 */
export type ActionType = 'CREATE' | 'UPDATE' | 'DELETE' | 'REVOKE' | 'ISSUE';

export interface OpSpec<S extends TObject = TObject, O extends TObject = TObject> {
  service: ServiceName;
  /** OpenAPI tag: the resource group. */
  group: string;
  name: string;
  summary: string;
  /** Extra documentation (rules, defaults, errors). */
  notes?: string;
  permission: Permission;
  input: S;
  output: O;
  /** Set for state-changing operations: each call is audited with this action on this resource type (a declaration's `audit`). */
  mutates?: { action: ActionType; resource: AuditResource };
}

/** Declares an operation; keeps its schema types (and whether it mutates) for the handler and the client. */
export const defineOp = <P extends OpSpec<TObject, TObject>>(spec: P): P => spec;

export type InputOf<P> = P extends OpSpec<infer S, TObject> ? Static<S> : never;
export type OutputOf<P> = P extends OpSpec<TObject, infer O> ? Static<O> : never;
