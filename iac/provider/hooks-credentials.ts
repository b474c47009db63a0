import { Uuid } from '../../src/api/kit.ts';
import { APIKEY, ApiError, type GatewayClient, type JsonObject } from './client.ts';
import type { TerraformType } from '../../src/api/index.ts';
import type { Hooks } from './declared.ts';
import { envelopeOf, findInList, orGone, str } from './resource.ts';
import type { CtyObject } from './wire.ts';

/**
 * The credentials' own CRUD (their declarations have neither a natural key nor an id-addressed Get):
 * - gateway_api_key: read by listing the project's keys (or, imported by bare UUID, every
 *   customer's); destroy revokes. The key is known once, at creation.
 * - gateway_byok_key: a project-level key of byok.v1.ByokService; the `secret` is sent once and
 *   kept in state as given. Keys cannot be edited: any change replaces the key. A revoked key reads
 *   as gone. User-scoped keys belong to one user's own session and are not managed by Terraform.
 * - gateway_service_account: no update (every argument replaces the account: a new key pair, the
 *   old account revoked). The private key is returned once, by the create call: kept in state as
 *   the sensitive `private_key`, and `credentials_json` holds the whole CreateServiceAccount answer
 *   as `serve --role data --service-account FILE` reads it (keep state in an encrypted backend).
 *   A revoked or expired account reads as gone: the next plan creates a new one.
 *   `workspace_uuid` (the workspace resource's `id`, checked at create against customer_id and
 *   workspace_id) is provider-side: a replaced workspace has a new id, so the account, which the
 *   workspace's delete revokes, is replaced in the same apply.
 */

const BYOK = 'byok.v1.ByokService';
const ACTIVE = 'SERVICE_ACCOUNT_STATUS_ACTIVE';

/** Finds a key by id; with no customer known (import by bare UUID) every customer's projects are searched. */
const findKey = async (c: GatewayClient, s: CtyObject): Promise<JsonObject | null> => {
  const id = str(s.id);
  const match = (k: JsonObject) => k.id === id;
  if (s.customer_id)
    return findInList(c, 'ListApiKeys', { customerId: str(s.customer_id), projectId: str(s.project_id) }, 'apiKeys', match, APIKEY);
  let token = '';
  do {
    const page = await c.callJson('ListCustomers', { pageSize: 1000, ...(token ? { pageToken: token } : {}) });
    for (const cust of Array.isArray(page.customers) ? page.customers : []) {
      const customerId = str((cust as JsonObject).customerId as string);
      const projects = await c.callJson('ListProjects', { customerId, pageSize: 1000 });
      for (const p of Array.isArray(projects.projects) ? projects.projects : []) {
        const hit = await findInList(
          c,
          'ListApiKeys',
          { customerId, projectId: str((p as JsonObject).projectId as string) },
          'apiKeys',
          match,
          APIKEY,
        );
        if (hit) return hit;
      }
    }
    token = typeof page.nextPageToken === 'string' ? page.nextPageToken : '';
  } while (token);
  return null;
};

/** The key's validity in whole days (expiresAt − createdAt), so an imported key reads its expires_in_days. */
const expiresInDays = (k: JsonObject): JsonObject => {
  if (typeof k.expiresAt !== 'string' || !k.expiresAt || typeof k.createdAt !== 'string') return {};
  const days = Math.round((Date.parse(k.expiresAt) - Date.parse(k.createdAt)) / 86_400_000);
  return Number.isFinite(days) && days > 0 ? { expiresInDays: days } : {};
};

const byokKey = (c: GatewayClient, s: { id?: unknown; customer_id?: unknown; project_id?: unknown }): Promise<JsonObject | null> =>
  orGone(
    c.callJson('Get', { id: str(s.id as string), customerId: str(s.customer_id as string), projectId: str(s.project_id as string) }, BYOK),
    'key',
  );

export const CREDENTIAL_HOOKS: Partial<Record<TerraformType, Hooks>> = {
  gateway_api_key: {
    parseImport: (id) => (/^[0-9a-f-]{36}$/.test(id) ? { id } : undefined),
    create: async (c, body) => {
      const r = await c.callJson('CreateApiKey', body, APIKEY);
      return { ...r, expiresAt: typeof r.expiresAt === 'string' ? r.expiresAt : '' };
    },
    read: async (c, s) => {
      const k = await findKey(c, s);
      return k ? { ...k, expiresAt: typeof k.expiresAt === 'string' ? k.expiresAt : '', ...expiresInDays(k) } : null;
    },
    delete: async (c, s) => {
      await c.callJson('RevokeApiKey', { id: str(s.id), customerId: str(s.customer_id), projectId: str(s.project_id) }, APIKEY);
    },
  },
  gateway_byok_key: {
    create: async (c, body) => envelopeOf(await c.callJson('Register', { ...body, userScope: false }, BYOK), 'key'),
    read: async (c, s) => {
      const k = await byokKey(c, s);
      // A revoked key reads as gone, so the next plan registers it again.
      return k && !(typeof k.revokedAt === 'string' && k.revokedAt !== '') ? k : null;
    },
    delete: async (c, s) => {
      await c.callJson('Revoke', { id: str(s.id), customerId: str(s.customer_id), projectId: str(s.project_id) }, BYOK);
    },
  },
  gateway_service_account: {
    extraAttrs: [
      {
        tf: 'workspace_uuid',
        api: 'workspaceUuid',
        kind: 'string',
        schema: Uuid('workspace UUID'),
        optional: true,
        required: false,
        computed: false,
        local: true,
        keep: true,
        forceNew: true,
        updatable: false,
        description:
          "the workspace's id (`gateway_workspace.<name>.id`; checked at create against customer_id and workspace_id): a replaced workspace has a new id, so the account, which the workspace's delete revokes, is replaced in the same apply",
      },
    ],
    create: async (c, body, plan) => {
      const ws = str(plan.workspace_uuid);
      if (ws) {
        const w = await orGone(c.callJson('GetWorkspace', { id: ws }), 'workspace');
        if (!w || w.customerId !== body.customerId || w.workspaceId !== body.workspaceId)
          throw new ApiError(
            'invalid_argument',
            `workspace_uuid ${ws} is not the workspace ${String(body.customerId)}/${String(body.workspaceId)}${w ? ` (it is ${String(w.customerId)}/${String(w.workspaceId)})` : ' (no such workspace)'}`,
            400,
          );
      }
      const r = await c.callJson('CreateServiceAccount', body);
      const sa = envelopeOf(r, 'serviceAccount');
      const info = envelopeOf(await c.callJson('GetServiceAccount', { id: str(sa.id as string) }), 'serviceAccount');
      const out: JsonObject = {
        ...info,
        privateKey: sa.privateKey ?? '',
        privateKeyId: sa.privateKeyId ?? '',
        checksum: r.checksum ?? '',
        credentialsJson: JSON.stringify(r),
      };
      return out;
    },
    read: async (c, s) => {
      const info = await orGone(c.callJson('GetServiceAccount', { id: str(s.id) }), 'serviceAccount');
      return info && info.status === ACTIVE ? info : null;
    },
    delete: async (c, s) => {
      try {
        await c.callJson('RevokeServiceAccount', { id: str(s.id), reason: 'terraform destroy' });
      } catch (e) {
        // Already revoked with what it depended on (its workspace's or customer's delete): gone is done.
        const info = await orGone(c.callJson('GetServiceAccount', { id: str(s.id) }), 'serviceAccount');
        if (info && info.status === ACTIVE) throw e;
      }
    },
  },
};
