import type { Json, JsonObject } from '../../api/client.ts';
import type { ResourceDef } from './resource.tsx';
import { text } from './resource.tsx';

/** The pages of telemetry forwarding, service accounts, BYOK keys and MCP credentials (contract §16). */

const isObj = (v: Json | undefined): v is JsonObject => v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
const str = (v: Json | undefined): string => text(v);

/** Telemetry forwarding configs (platform admin only): the sink secret is write-only in the console. */
export const TELEMETRY_CONFIGS: ResourceDef = {
  title: 'Telemetry forwarding configs',
  scope: 'global',
  list: 'ListTelemetryConfigs',
  create: 'CreateTelemetryConfig',
  createLabel: 'Add telemetry config',
  columns: ['telemetryType', 'sinkUrl', 'protocol', 'authType', 'enabled', 'status', 'lastCheckedAt'],
  rowName: (row) => `${str(row.telemetryType)} ${str(row.sinkUrl)}`,
  update: { op: 'UpdateTelemetryConfig', fixed: (row) => ({ id: str(row.id) }), hide: ['authValue'] },
  remove: { op: 'DeleteTelemetryConfig', label: 'Delete', input: (row) => ({ id: str(row.id) }) },
};

/** Service accounts of the customer (members read them; creating and revoking is the platform admin's). */
export const SERVICE_ACCOUNTS: ResourceDef = {
  title: 'Service accounts',
  scope: 'customer',
  list: 'ListServiceAccounts',
  listInput: { includeRevoked: true },
  create: 'CreateServiceAccount',
  createLabel: 'Create service account',
  columns: ['email', 'workspaceId', 'status', 'expiresAt', 'lastUsedAt', 'publicKeyFingerprint'],
  created: (answer) => {
    const account = isObj(answer.serviceAccount) ? answer.serviceAccount : {};
    return (
      <div class="once" role="status">
        <p>
          <strong>New service account key file — shown once.</strong> Save it for <code>serve --role data --service-account FILE</code>: the
          private key is not stored.
        </p>
        <label for="new-service-account">Service account key file (JSON)</label>
        <textarea id="new-service-account" readOnly rows={6} value={JSON.stringify(account, null, 2)} />
      </div>
    );
  },
  remove: {
    op: 'RevokeServiceAccount',
    label: 'Revoke',
    input: (row) => ({ id: str(row.id), reason: 'revoked in the console' }),
    when: (row) => !row.revokedAt,
  },
};

/** BYOK provider keys of the project: the project's and the caller's own (never the secret). */
export const BYOK_KEYS: ResourceDef = {
  title: 'BYOK provider keys',
  scope: 'project',
  list: 'List',
  create: 'Register',
  createLabel: 'Register provider key',
  columns: ['name', 'provider', 'displaySuffix', 'userScope', 'scopeUserId', 'createdAt', 'revokedAt'],
  cells: { displaySuffix: (row) => `…${str(row.displaySuffix)}` },
  remove: {
    op: 'Revoke',
    label: 'Revoke',
    input: (row, s) => ({ id: str(row.id), customerId: s.customerId, projectId: s.projectId }),
    when: (row) => !row.revokedAt,
  },
};

/** MCP server credentials of the project and of its members (metadata only: the credential is write-only). */
export const MCP_CREDENTIALS: ResourceDef = {
  title: 'MCP server credentials',
  scope: 'project',
  list: 'ListMcpServerCredentials',
  create: 'SetMcpServerCredential',
  createLabel: 'Set MCP credential',
  columns: ['serverId', 'userId', 'updatedAt'],
  rowKey: (row) => str(row.id),
  rowName: (row) => `${str(row.serverId)} ${str(row.userId) || '(project)'}`,
  cells: { userId: (row) => str(row.userId) || "the project's" },
  choices: async (s) => {
    const page = await s.session.client.callJson('ListProjectMcpServers', { customerId: s.customerId, projectId: s.projectId });
    const entries = Array.isArray(page.entries) ? page.entries.filter(isObj) : [];
    return { serverId: entries.map((e) => ({ value: str(e.serverId), label: str(e.serverId) })) };
  },
  remove: {
    op: 'DeleteMcpServerCredential',
    label: 'Delete',
    input: (row, s) => ({
      customerId: s.customerId,
      projectId: s.projectId,
      serverId: str(row.serverId),
      ...(str(row.userId) ? { userId: str(row.userId) } : {}),
    }),
  },
};
