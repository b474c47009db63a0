import { APIKEY, type GatewayClient, type JsonObject } from './client.ts';
import { computed, field } from './schema.ts';
import { findInList, type ResourceDef, str } from './resource.ts';
import { byId, common, ID, keyed } from './resources.ts';
import type { CtyObject } from './wire.ts';

/** Assignments, settings, data planes, project gateways and inference keys. */

const projectKeys = (op: string) => [field(op, 'customerId'), field(op, 'projectId')];
const inProject = (s: CtyObject): JsonObject => ({ customerId: str(s.customer_id), projectId: str(s.project_id) });

const member = keyed({
  type: 'gateway_project_member',
  description: "A user's role in a project.",
  create: 'AddProjectMember',
  get: 'ListProjectMembers',
  update: 'UpdateProjectMember',
  del: 'RemoveProjectMember',
  envelope: 'member',
  keys: [...projectKeys('AddProjectMember'), field('AddProjectMember', 'userId')],
  fields: [field('AddProjectMember', 'role', { update: 'UpdateProjectMember' })],
  read: (c, s) => findInList(c, 'ListProjectMembers', inProject(s), 'members', (m) => m.userId === str(s.user_id)),
});
// UpdateProjectMember requires the role in every request.
member.amend = (body, prior, plan) => {
  if (prior) body.role = str(plan.role);
};

const projectModel = keyed({
  type: 'gateway_project_model',
  description: 'A catalog model enabled for a project.',
  create: 'AddProjectModel',
  get: 'ListProjectModels',
  del: 'RemoveProjectModel',
  envelope: 'entry',
  keys: [...projectKeys('AddProjectModel'), field('AddProjectModel', 'modelId')],
  fields: [],
  read: (c, s) => findInList(c, 'ListProjectModels', inProject(s), 'entries', (e) => e.modelId === str(s.model_id)),
});

const projectProvider = keyed({
  type: 'gateway_project_provider',
  description: 'A provider (adapter) enabled for a project.',
  create: 'AddProjectProvider',
  get: 'ListProjectProviders',
  del: 'RemoveProjectProvider',
  envelope: 'entry',
  keys: [...projectKeys('AddProjectProvider'), field('AddProjectProvider', 'providerName')],
  fields: [],
  read: (c, s) => findInList(c, 'ListProjectProviders', inProject(s), 'entries', (e) => e.providerName === str(s.provider_name)),
});

const setting = keyed({
  type: 'gateway_project_setting',
  description: "A project setting ('global-fallback' or 'rate-limit'; the value is JSON text).",
  create: 'UpsertProjectSetting',
  get: 'GetProjectSettings',
  update: 'UpsertProjectSetting',
  del: 'DeleteProjectSetting',
  envelope: 'setting',
  keys: [...projectKeys('UpsertProjectSetting'), field('UpsertProjectSetting', 'settingName')],
  fields: [field('UpsertProjectSetting', 'settingValue', { update: 'UpsertProjectSetting' })],
  read: async (c, s) => {
    const r = await c.callJson('GetProjectSettings', inProject(s)).catch((e: unknown) => {
      if (e instanceof Error && 'code' in e && (e as { code: string }).code === 'not_found') return { settings: [] };
      throw e;
    });
    const list = Array.isArray(r.settings) ? r.settings : [];
    const hit = list.find((x) => x && typeof x === 'object' && !Array.isArray(x) && x.settingName === str(s.setting_name));
    return hit && typeof hit === 'object' && !Array.isArray(hit) ? { ...hit, id: `${str(s.customer_id)}/${str(s.project_id)}/${str(s.setting_name)}` } : null;
  },
});
setting.create = async (c, body) => {
  const r = await c.callJson('UpsertProjectSetting', body);
  const v = r.setting as JsonObject;
  return { ...v, id: `${str(body.customerId as string)}/${str(body.projectId as string)}/${str(body.settingName as string)}` };
};
setting.update = async (c, body) => {
  const r = await c.callJson('UpsertProjectSetting', body);
  const v = r.setting as JsonObject;
  return { ...v, id: `${str(body.customerId as string)}/${str(body.projectId as string)}/${str(body.settingName as string)}` };
};

const plane = (kind: 'Dataplane' | 'Workspace', slug: 'dataplaneId' | 'workspaceId'): ResourceDef =>
  byId({
    type: `gateway_${kind.toLowerCase()}`,
    description: `A ${kind === 'Dataplane' ? 'data plane' : 'workspace (a data plane)'} of a customer.`,
    create: `Create${kind}`,
    get: `Get${kind}`,
    update: `Update${kind}`,
    del: `Delete${kind}`,
    envelope: kind === 'Dataplane' ? 'dataplane' : 'workspace',
    idField: 'id',
    fields: [field(`Create${kind}`, 'customerId'), field(`Create${kind}`, slug), field(`Create${kind}`, 'projectId'), ...common(`Create${kind}`, `Update${kind}`)],
  });

const projectGateway = byId({
  type: 'gateway_project_gateway',
  description: 'A project gateway hosted on a workspace.',
  create: 'CreateProjectGateway',
  get: 'GetProjectGateway',
  update: 'UpdateProjectGateway',
  del: 'DeleteProjectGateway',
  envelope: 'projectGateway',
  idField: 'id',
  fields: [
    field('CreateProjectGateway', 'customerId'),
    field('CreateProjectGateway', 'workspaceId'),
    field('CreateProjectGateway', 'projectGatewayId'),
    field('CreateProjectGateway', 'url', { update: 'UpdateProjectGateway' }),
    ...common('CreateProjectGateway', 'UpdateProjectGateway'),
  ],
});

const EC = 'enterpriseContext';
const ctx = (f: string, extra: Parameters<typeof field>[2] = {}) => field('CreateApiKey', `${EC}.${f}`, extra);

/** Finds a key by id; with no customer known (import by bare UUID) every customer's projects are searched. */
const findKey = async (c: GatewayClient, s: CtyObject): Promise<JsonObject | null> => {
  const id = str(s.id);
  const match = (k: JsonObject) => k.id === id;
  if (s.customer_id) return findInList(c, 'ListApiKeys', { customerId: str(s.customer_id), projectId: str(s.project_id) }, 'apiKeys', match, APIKEY);
  let token = '';
  do {
    const page = await c.callJson('ListCustomers', { pageSize: 1000, ...(token ? { pageToken: token } : {}) });
    for (const cust of Array.isArray(page.customers) ? page.customers : []) {
      const customerId = str((cust as JsonObject).customerId as string);
      const projects = await c.callJson('ListProjects', { customerId, pageSize: 1000 });
      for (const p of Array.isArray(projects.projects) ? projects.projects : []) {
        const hit = await findInList(c, 'ListApiKeys', { customerId, projectId: str((p as JsonObject).projectId as string) }, 'apiKeys', match, APIKEY);
        if (hit) return hit;
      }
    }
    token = typeof page.nextPageToken === 'string' ? page.nextPageToken : '';
  } while (token);
  return null;
};

const apiKey: ResourceDef = {
  type: 'gateway_api_key',
  description: 'An inference API key. The key is known once, at creation, and kept (sensitive) in state; destroy revokes it.',
  attrs: [
    ID,
    field('CreateApiKey', 'name'),
    field('CreateApiKey', 'userId'),
    {
      ...field('CreateApiKey', 'userKeyAddress', { keep: true }),
      description: "the owner's address (typically an email or user id); the key address is derived from user_id, else from it; not returned by the API (an imported key has none in state)",
    },
    ctx('customerId'),
    ctx('projectId'),
    ctx('workspaceId'),
    ctx('role'),
    ctx('organizationUnit'),
    ctx('scopes'),
    { ...ctx('expiresInDays'), keep: true },
    computed('key', 'apiKey', 'string', 'the key (sk-…); known once, at creation', { sensitive: true }),
    computed('key_prefix', 'keyPrefix', 'string', 'first characters of the key, for display'),
    computed('expires_at', 'expiresAt', 'string', 'RFC 3339; empty when the key never expires'),
  ],
  importKeys: ['customer_id', 'project_id', 'id'],
  parseImport: (id) => (/^[0-9a-f-]{36}$/.test(id) ? { id } : undefined),
  create: async (c, body) => {
    const r = await c.callJson('CreateApiKey', body, APIKEY);
    return { ...r, expiresAt: typeof r.expiresAt === 'string' ? r.expiresAt : '' };
  },
  read: async (c, s) => {
    const k = await findKey(c, s);
    return k ? { ...k, expiresAt: typeof k.expiresAt === 'string' ? k.expiresAt : '' } : null;
  },
  delete: async (c, s) => {
    await c.callJson('RevokeApiKey', { id: str(s.id), customerId: str(s.customer_id), projectId: str(s.project_id) }, APIKEY);
  },
};

export const RESOURCES_MORE: ResourceDef[] = [member, projectModel, projectProvider, setting, plane('Dataplane', 'dataplaneId'), plane('Workspace', 'workspaceId'), projectGateway, apiKey];
