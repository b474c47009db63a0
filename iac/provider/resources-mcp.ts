import type { TSchema } from '@sinclair/typebox';
import { checkMcpAuth, checkMcpProfileServers, MCP_AUTH_TYPES, type McpProfileServerShape } from '../../src/api/ops/mcp.ts';
import { GatewayError } from '../../src/core/errors.ts';
import { fieldSchema } from './api-schemas.ts';
import { type BlockDef, findInList, type ResourceDef, str } from './resource.ts';
import { keyed } from './resources.ts';
import { type Attr, field, kindOf } from './schema.ts';
import { type Cty, type CtyObject, isUnknown } from './wire.ts';

/**
 * The MCP gateway (contract §7): gateway_mcp_server (catalog; import id `<serverId>`),
 * gateway_project_mcp_server (`acme/web/<serverId>`) and gateway_mcp_profile (`acme/web/<profileId>`,
 * its servers as ordered `server` blocks). The cross-field rules are the API's own functions
 * (src/api/ops/mcp.ts), run at validate/plan time.
 */

const C = 'CreateMcpServer';
const U = 'UpdateMcpServer';

/** The API's refusal of a known configuration as [attribute, message]; nothing while a value is unknown. */
const refusal = (fn: () => void, attrOf: (field: string) => string): [string, string][] => {
  try {
    fn();
    return [];
  } catch (e) {
    if (!(e instanceof GatewayError)) throw e;
    return [[attrOf(e.param ?? ''), e.message]];
  }
};
const known = (v: Cty | undefined): boolean => v !== undefined && !isUnknown(v);
const text = (v: Cty | undefined): string | null => (typeof v === 'string' ? v : null);

export const mcpServer: ResourceDef = keyed({
  type: 'gateway_mcp_server',
  description: 'A catalog MCP server (platform admin): its endpoint, transport and the credential the gateway sends it.',
  create: C,
  get: 'GetMcpServer',
  update: U,
  del: 'DeleteMcpServer',
  envelope: 'server',
  keys: [field(C, 'serverId')],
  fields: [
    field(C, 'url', { update: U }),
    field(C, 'transport', { update: U }),
    field(C, 'description', { update: U }),
    field(C, 'authType', { update: U }),
    field(C, 'authHeader', { update: U }),
    field(C, 'labels', { update: U }),
    {
      ...field(C, 'authValue', { update: U, optionalComputed: false, sensitive: true, keep: true }),
      description: 'the credential (bearer token or header value); kept in state as given, never read back (an out-of-band change is not detected)',
    },
    {
      ...field(C, 'authValue', { tf: 'auth_value_wo', optionalComputed: false, sensitive: true, keep: true }),
      writeOnly: true,
      forceNew: false,
      updatable: false,
      description: 'write-only form of auth_value (Terraform >= 1.11): never stored in state; bump auth_value_wo_version to send a new one',
    },
    { tf: 'auth_value_wo_version', api: 'authValueWoVersion', kind: 'number', optional: true, keep: true, local: true, description: 'change it to send auth_value_wo again' },
  ],
});
mcpServer.amend = (body, prior, plan, config) => {
  // The write-only credential is sent on create, and on update when its version changes.
  if (prior && JSON.stringify(prior.auth_value_wo_version ?? null) !== JSON.stringify(plan.auth_value_wo_version ?? null) && typeof config.auth_value_wo === 'string')
    body.authValue = config.auth_value_wo;
};
mcpServer.check = (config) => {
  if (config.auth_value != null && config.auth_value_wo != null) return [['auth_value_wo', 'set either auth_value or auth_value_wo, not both']];
  const type = config.auth_type ?? 'none';
  if (![type, config.auth_header, config.auth_value, config.auth_value_wo].every(known)) return [];
  const authType = MCP_AUTH_TYPES.find((t) => t === type);
  if (!authType) return [];
  const hasValue = config.auth_value != null || config.auth_value_wo != null;
  return refusal(() => checkMcpAuth({ authType, authHeader: text(config.auth_header), hasValue }), (f) => (f === 'authValue' ? 'auth_value' : 'auth_header'));
};

const A = 'AddProjectMcpServer';
export const projectMcpServer: ResourceDef = keyed({
  type: 'gateway_project_mcp_server',
  description: 'A catalog MCP server assigned to a project (its profiles may then serve it).',
  create: A,
  get: 'ListProjectMcpServers',
  del: 'RemoveProjectMcpServer',
  envelope: 'entry',
  keys: [field(A, 'customerId'), field(A, 'projectId'), field(A, 'serverId')],
  fields: [],
  read: (c, s) =>
    findInList(c, 'ListProjectMcpServers', { customerId: str(s.customer_id), projectId: str(s.project_id) }, 'entries', (e) => e.serverId === str(s.server_id)),
});

const P = 'CreateMcpProfile';
const Servers = fieldSchema(P, 'servers') as TSchema & { items: { properties: Record<string, TSchema> }; minItems?: number; maxItems?: number };
const serverAttr = (api: 'serverId' | 'tools' | 'prefix'): Attr => {
  const s = Servers.items.properties[api] as TSchema;
  const required = api === 'serverId';
  return {
    tf: api === 'serverId' ? 'server_id' : api,
    api,
    kind: kindOf(s),
    description: (s as { description?: string }).description ?? api,
    schema: s,
    required,
    optional: !required,
    // The prefix defaults to the serverId (the server answers it); absent tools mean every tool.
    computed: api === 'prefix',
    forceNew: false,
    updatable: true,
  };
};
const serverBlock: BlockDef = {
  tf: 'server',
  api: 'servers',
  attrs: (['serverId', 'tools', 'prefix'] as const).map(serverAttr),
  min: Servers.minItems ?? 1,
  max: Servers.maxItems ?? 64,
  updatable: true,
  description: 'a server of the profile, in order: server_id (assigned to the project), tools (names or * globs; unset = every tool), prefix (default: the server_id; "" = none)',
};

export const mcpProfile: ResourceDef = keyed({
  type: 'gateway_mcp_profile',
  description: "An MCP profile of a project, served at /mcp/{profile_id}: some of the project's MCP servers, filtered and prefixed.",
  create: P,
  get: 'GetMcpProfile',
  update: 'UpdateMcpProfile',
  del: 'DeleteMcpProfile',
  envelope: 'profile',
  keys: [field(P, 'customerId'), field(P, 'projectId'), field(P, 'profileId')],
  fields: [field(P, 'description', { update: 'UpdateMcpProfile' })],
  blocks: [serverBlock],
});
mcpProfile.check = (config) => {
  const list = config.server;
  if (!Array.isArray(list)) return [];
  const shapes: McpProfileServerShape[] = [];
  for (const el of list) {
    if (!el || typeof el !== 'object' || Array.isArray(el) || isUnknown(el)) return [];
    const o = el as CtyObject;
    if (![o.server_id, o.tools, o.prefix].every(known) || typeof o.server_id !== 'string') return [];
    const tools = Array.isArray(o.tools) && o.tools.every((t): t is string => typeof t === 'string') ? o.tools : undefined;
    shapes.push({ serverId: o.server_id, tools, prefix: text(o.prefix) ?? undefined });
  }
  return refusal(() => checkMcpProfileServers(shapes), () => 'server');
};
export const RESOURCES_MCP: ResourceDef[] = [mcpServer, projectMcpServer, mcpProfile];
