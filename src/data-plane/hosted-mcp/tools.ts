import type { JsonObject } from '../../canonical/types.ts';
import { invalidRequest } from '../../core/errors.ts';
import { hostOfUrl, normalizeHost } from '../../core/hosts.ts';
import type { McpProfileConfig } from '../../mcp/config.ts';
import type { ConfigSnapshot, KeySnapshot } from '../../propagation/snapshot.ts';

/**
 * Which Responses `mcp` tools the gateway runs itself, and their options as OpenAI documents
 * them. A tool is the gateway's when its `server_url` names `/mcp/{profileId}` on this gateway
 * and the profile is one of the caller's project:
 *
 * - a relative URL (`/mcp/tools`), or
 * - an absolute http(s) URL whose authority is the request's `Host` (the address the client used
 *   to reach this gateway), or whose host is one this data plane serves by name (a project
 *   gateway's host, a workspace URL, the data plane's public URL).
 *
 * Anything else (another host, another path, a profile the project does not have) is not the
 * gateway's: it goes on as before — passed through to upstreams that speak the Responses API
 * natively (openai, azure-openai), refused with a 400 by translated ones.
 */

export interface ToolFilter {
  names?: ReadonlySet<string>;
  /** Tools annotated `readOnlyHint` (true) or not (false). */
  readOnly?: boolean;
}

export type Approval = 'always' | 'never' | { always?: ToolFilter; never?: ToolFilter };

export interface HostedTool {
  /** `server_label`: how output items name the server. */
  label: string;
  profile: McpProfileConfig;
  /** `allowed_tools`; undefined = every tool the profile lists. */
  allowed?: ToolFilter;
  /** `require_approval` (OpenAI's default: every call needs approval). */
  approval: Approval;
  /** Where the tool is in the request (`tools.2`). */
  param: string;
}

const MCP_PATH = /^\/mcp\/([^/?#]+)\/?$/;

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether an absolute URL's host is this gateway's, as the request reached it or by a name it serves. */
const atThisGateway = (u: URL, headers: Headers, snapshot: ConfigSnapshot): boolean => {
  const host = headers.get('host')?.trim().toLowerCase();
  if (host) {
    const bare = host.replace(u.protocol === 'https:' ? /:443$/ : /:80$/, '');
    if (u.host.toLowerCase() === bare) return true;
  }
  const name = normalizeHost(u.hostname);
  if (snapshot.hosts.has(name)) return true;
  return snapshot.publicUrl !== undefined && hostOfUrl(snapshot.publicUrl) === name;
};

/** The profile id a `server_url` names on this gateway, or undefined when it names something else. */
export const profileIdOf = (serverUrl: string, headers: Headers, snapshot: ConfigSnapshot): string | undefined => {
  let path: string;
  if (serverUrl.startsWith('/') && !serverUrl.startsWith('//')) path = serverUrl.replace(/[?#].*$/s, '');
  else {
    let u: URL;
    try {
      u = new URL(serverUrl);
    } catch {
      return undefined;
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !atThisGateway(u, headers, snapshot)) return undefined;
    path = u.pathname;
  }
  const m = MCP_PATH.exec(path);
  if (!m?.[1]) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return undefined;
  }
};

const stringList = (v: unknown, param: string): ReadonlySet<string> => {
  if (!Array.isArray(v) || !v.every((n) => typeof n === 'string'))
    throw invalidRequest(`'${param}' must be an array of tool names.`, param);
  return new Set(v);
};

const filterOf = (v: unknown, param: string): ToolFilter => {
  if (!isObject(v)) throw invalidRequest(`'${param}' must be an object with 'tool_names' and/or 'read_only'.`, param);
  const out: { names?: ReadonlySet<string>; readOnly?: boolean } = {};
  if (v.tool_names !== undefined && v.tool_names !== null) out.names = stringList(v.tool_names, `${param}.tool_names`);
  if (v.read_only !== undefined && v.read_only !== null) {
    if (typeof v.read_only !== 'boolean') throw invalidRequest(`'${param}.read_only' must be a boolean.`, `${param}.read_only`);
    out.readOnly = v.read_only;
  }
  return out;
};

const approvalOf = (v: unknown, param: string): Approval => {
  if (v === undefined || v === null || v === 'always') return 'always';
  if (v === 'never') return 'never';
  if (!isObject(v)) throw invalidRequest(`'${param}' must be 'always', 'never' or an object with 'always' and/or 'never' filters.`, param);
  return {
    ...(v.always !== undefined && v.always !== null ? { always: filterOf(v.always, `${param}.always`) } : {}),
    ...(v.never !== undefined && v.never !== null ? { never: filterOf(v.never, `${param}.never`) } : {}),
  };
};

/** The tool at `tools.{i}` as the gateway runs it, or undefined when it is not one of the caller's profiles. */
export const hostedToolOf = (
  tool: JsonObject,
  i: number,
  key: KeySnapshot,
  headers: Headers,
  snapshot: ConfigSnapshot,
): HostedTool | undefined => {
  const param = `tools.${i}`;
  if (tool.type !== 'mcp' || typeof tool.server_url !== 'string') return undefined;
  const profileId = profileIdOf(tool.server_url, headers, snapshot);
  const profile = profileId === undefined ? undefined : snapshot.mcp.profiles.get(key.project.id)?.get(profileId);
  if (!profile) return undefined;
  const label = tool.server_label;
  if (typeof label !== 'string' || label === '')
    throw invalidRequest(`'${param}.server_label' is required: output items name the server by it.`, `${param}.server_label`);
  for (const f of ['authorization', 'headers'] as const) {
    if (tool[f] !== undefined && tool[f] !== null) {
      throw invalidRequest(
        `'${param}.${f}' cannot be sent for an MCP profile of this gateway: the profile is called with this request's own credential, and the catalog's credentials go to its servers.`,
        `${param}.${f}`,
      );
    }
  }
  const allowedRaw = tool.allowed_tools;
  const allowed =
    allowedRaw === undefined || allowedRaw === null
      ? undefined
      : Array.isArray(allowedRaw)
        ? { names: stringList(allowedRaw, `${param}.allowed_tools`) }
        : filterOf(allowedRaw, `${param}.allowed_tools`);
  return {
    label,
    profile,
    ...(allowed ? { allowed } : {}),
    approval: approvalOf(tool.require_approval, `${param}.require_approval`),
    param,
  };
};

const matches = (f: ToolFilter, name: string, readOnly: boolean): boolean => {
  if (f.names === undefined && f.readOnly === undefined) return false;
  if (f.names !== undefined && !f.names.has(name)) return false;
  return f.readOnly === undefined || f.readOnly === readOnly;
};

/** Whether `allowed_tools` lets a listed tool through. */
export const allowedTool = (t: HostedTool, name: string, readOnly: boolean): boolean =>
  t.allowed === undefined || matches(t.allowed, name, readOnly);

/** Whether a call of the tool waits for the client's approval (`require_approval`; a tool neither filter names needs it). */
export const needsApproval = (t: HostedTool, name: string, readOnly: boolean): boolean => {
  const a = t.approval;
  if (a === 'always' || a === 'never') return a === 'always';
  if (a.always && matches(a.always, name, readOnly)) return true;
  if (a.never && matches(a.never, name, readOnly)) return false;
  return true;
};

/** A listed tool name as a function name every provider takes (`[A-Za-z0-9_-]{1,64}`). */
export const functionName = (listed: string): string => listed.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
