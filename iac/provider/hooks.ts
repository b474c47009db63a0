import { checkMcpAuth, checkMcpProfileServers, MCP_AUTH_TYPES, type McpProfileServerShape } from '../../src/api/mcp-rules.ts';
import { GatewayError } from '../../src/core/errors.ts';
import type { JsonObject } from './client.ts';
import type { Hooks } from './declared.ts';
import type { TerraformType } from '../../src/api/index.ts';
import { CREDENTIAL_HOOKS } from './hooks-credentials.ts';
import { str } from './resource.ts';
import { type Cty, type CtyObject, isUnknown } from './wire.ts';

/**
 * What a resource's declaration (src/api/ops/*) cannot say, by Terraform type (a declared one:
 * `TerraformType`, so a hook of a type no declaration maps does not compile): requests that must
 * repeat fields, reads without a Get, and the API's own cross-field rules run at validate/plan time.
 * Everything else of a resource is derived from its declaration (declared.ts).
 */

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

const settingId = (body: JsonObject): string =>
  `${str(body.customerId as string)}/${str(body.projectId as string)}/${str(body.settingName as string)}`;

export const HOOKS: Partial<Record<TerraformType, Hooks>> = {
  // UpdateProjectMember requires the role in every request.
  gateway_project_member: {
    amend: (body, prior, plan) => {
      if (prior) body.role = str(plan.role);
    },
  },
  // Settings have no Get of one: read the project's list; the id is the import id.
  gateway_project_setting: {
    read: async (c, s) => {
      const inProject = { customerId: str(s.customer_id), projectId: str(s.project_id) };
      const r = await c.callJson('GetProjectSettings', inProject).catch((e: unknown) => {
        if (e instanceof Error && 'code' in e && (e as { code: string }).code === 'not_found') return { settings: [] };
        throw e;
      });
      const list = Array.isArray(r.settings) ? r.settings : [];
      const hit = list.find((x) => x && typeof x === 'object' && !Array.isArray(x) && x.settingName === str(s.setting_name));
      return hit && typeof hit === 'object' && !Array.isArray(hit)
        ? { ...hit, id: `${str(s.customer_id)}/${str(s.project_id)}/${str(s.setting_name)}` }
        : null;
    },
    create: async (c, body) => {
      const r = await c.callJson('UpsertProjectSetting', body);
      const v = r.setting as JsonObject;
      return { ...v, id: settingId(body) };
    },
    update: async (c, body) => {
      const r = await c.callJson('UpsertProjectSetting', body);
      const v = r.setting as JsonObject;
      return { ...v, id: settingId(body) };
    },
  },
  // UpsertBudget replaces the budget: every field goes with each update.
  gateway_budget: {
    amend: (body, prior, plan) => {
      if (!prior) return;
      body.limitUsd = str(plan.limit_usd);
      body.period = str(plan.period);
      if (str(plan.api_key_id) !== '') body.apiKeyId = str(plan.api_key_id);
    },
  },
  // The API's own rules (src/api/ops/mcp.ts), after the write-only check of auth_value.
  gateway_mcp_server: {
    check: (config) => {
      const type = config.auth_type ?? 'none';
      if (![type, config.auth_header, config.auth_value, config.auth_value_wo].every(known)) return [];
      const authType = MCP_AUTH_TYPES.find((t) => t === type);
      if (!authType) return [];
      const hasValue = config.auth_value != null || config.auth_value_wo != null;
      const value = text(config.auth_value) ?? text(config.auth_value_wo);
      return refusal(
        () => checkMcpAuth({ authType, authHeader: text(config.auth_header), hasValue, value }),
        (f) => (f === 'authValue' ? (config.auth_value_wo != null ? 'auth_value_wo' : 'auth_value') : 'auth_header'),
      );
    },
  },
  gateway_mcp_profile: {
    check: (config) => {
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
      return refusal(
        () => checkMcpProfileServers(shapes),
        () => 'server',
      );
    },
  },
  ...CREDENTIAL_HOOKS,
};

/** The hooks of a declared Terraform type (none for a type without any). */
export const hooksOf = (type: string): Hooks | undefined => Object.entries(HOOKS).find(([t]) => t === type)?.[1];
