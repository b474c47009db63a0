import type { Json } from '../../api/client.ts';
import type { ResourceDef } from './resource.tsx';
import { text } from './resource.tsx';

/** The pages of user tokens and SCIM tokens (contract §16; docs/sso.md). */

const str = (v: Json | undefined): string => text(v);

export const USER_TOKENS: ResourceDef = {
  title: 'User tokens',
  scope: 'customer',
  list: 'ListUserTokens',
  listInput: { includeRevoked: true },
  columns: ['userId', 'role', 'status', 'createdAt', 'expiresAt', 'lastUsedAt', 'revokedAt'],
  rowKey: (row) => str(row.jti),
  remove: {
    op: 'RevokeUserToken',
    label: 'Revoke',
    input: (row) => ({ jti: str(row.jti), reason: 'revoked in the console' }),
    when: (row) => !row.revokedAt,
  },
};

export const SCIM_TOKENS: ResourceDef = {
  title: 'SCIM tokens',
  scope: 'customer',
  list: 'ListScimTokens',
  create: 'CreateScimToken',
  createLabel: 'Create SCIM token',
  columns: ['name', 'prefix', 'createdAt', 'lastUsedAt', 'revokedAt'],
  created: (answer) => (
    <div class="once" role="status">
      <p>
        <strong>New SCIM token — shown once.</strong> Give it to the identity provider with the base URL{' '}
        <code>{`${location.origin}/scim/v2`}</code>: only its hash is stored.
      </p>
      <label for="new-scim-token">SCIM token</label>
      <input id="new-scim-token" readOnly value={str(answer.token)} onFocus={(e) => e.currentTarget.select()} />
    </div>
  ),
  remove: { op: 'RevokeScimToken', label: 'Revoke', input: (row) => ({ id: str(row.id) }), when: (row) => !row.revokedAt },
};
