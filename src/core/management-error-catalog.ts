import type { ConnectCode } from './errors.ts';

/**
 * The management API's errors with what to do about them (beside the inference errors of
 * error-catalog.ts): the data for docs/reference/errors.md (`bun run docs:reference`).
 */

export interface ManagementErrorDoc {
  when: string;
  action: string;
}

/** The management API's Connect codes (status from CONNECT_STATUS). */
export const MANAGEMENT_ERRORS: Record<ConnectCode, ManagementErrorDoc> = {
  invalid_argument: {
    when: "A field breaks its schema or a rule; `message` names it (`invalid field 'x': …`).",
    action: 'Fix the field. Nothing was changed.',
  },
  failed_precondition: {
    when: 'The request is well-formed but the state does not allow it (e.g. revoking a revoked service account, a project the user is not a member of, a referenced row that was deleted).',
    action: 'Read the message; change the state first.',
  },
  out_of_range: { when: 'Not raised by this version (a Connect code clients may still handle).', action: '—' },
  unauthenticated: {
    when: 'No bearer token, a malformed one, or an unknown, revoked or expired admin token, user token or service-account JWT.',
    action: 'Send `Authorization: Bearer <token>` with a live credential.',
  },
  permission_denied: {
    when: 'The credential may not call the operation on that customer or project (docs/reference/management-api.md gives each operation’s permission); or a connection URL reaches a private address and the caller is not the platform admin.',
    action: 'Use a credential with the role the operation needs.',
  },
  not_found: {
    when: 'The addressed resource does not exist (or is deleted), or belongs to another customer; or no such operation (`unknown operation`).',
    action: 'Check the id or slug; operations are `POST /<service>/<Operation>` (the OpenAPI document at `/openapi`).',
  },
  already_exists: { when: 'A resource with that slug or name exists.', action: 'Choose another name, or update the existing one.' },
  aborted: { when: "An A2A agent's card URL changed while its card was fetched (Create/Update/RefreshA2aAgent).", action: 'Call again.' },
  // Not raised by this version (Connect codes clients may still handle).
  resource_exhausted: { when: 'Not raised by this version.', action: '—' },
  unimplemented: { when: 'Not raised by this version.', action: '—' },
  internal: { when: 'An unexpected failure.', action: 'Retry; report it with the `x-request-id` of the answer.' },
  unavailable: {
    when: 'The database cannot be reached (answered within about a second), or a part the operation needs does not run in this process.',
    action: 'Retry; operator: check PostgreSQL (`/readyz` says `database: down`).',
  },
};
