import { connectError } from '../core/errors.ts';
import { checkHeaderValue } from './header-values.ts';

/**
 * The MCP catalog's rules beyond one field's schema (ops/mcp.ts declares the operations): the
 * transports and authentication types a catalog server may have, and the checks across fields that
 * the management API's handlers and the Terraform provider's plan-time hooks both run.
 */

export const MCP_TRANSPORTS = ['streamable-http', 'sse'] as const;
export const MCP_AUTH_TYPES = ['none', 'bearer', 'header'] as const;
/** Header names the gateway sets itself on an upstream MCP request: never a catalog credential's header. */
export const MCP_RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'connection',
  'content-length',
  'content-type',
  'host',
  'last-event-id',
  'mcp-protocol-version',
  'mcp-session-id',
  'te',
  'transfer-encoding',
  'upgrade',
]);

/** A catalog server's authentication as it will be stored. */
export interface McpAuthShape {
  authType: (typeof MCP_AUTH_TYPES)[number];
  authHeader: string | null;
  /** Whether a credential will be stored. */
  hasValue: boolean;
  /** The credential given now, when known (checked as a header value: it is sent as one). */
  value?: string | null;
}

/**
 * The rules across a catalog server's authentication fields (the management API and the Terraform
 * provider's plan-time check run this same function); throws `invalid_argument` naming the field.
 */
export const checkMcpAuth = (a: McpAuthShape): void => {
  if (a.authType === 'header') {
    if (!a.authHeader) throw connectError('invalid_argument', "invalid field 'authHeader': required for authType 'header'", 'authHeader');
    if (MCP_RESERVED_HEADERS.has(a.authHeader.toLowerCase()))
      throw connectError('invalid_argument', `invalid field 'authHeader': '${a.authHeader}' is set by the gateway itself`, 'authHeader');
  } else if (a.authHeader) throw connectError('invalid_argument', "invalid field 'authHeader': only for authType 'header'", 'authHeader');
  if (a.authType === 'none' && a.hasValue)
    throw connectError('invalid_argument', "invalid field 'authValue': authType 'none' takes no credential", 'authValue');
  if (a.authType !== 'none' && !a.hasValue)
    throw connectError('invalid_argument', `invalid field 'authValue': required for authType '${a.authType}'`, 'authValue');
  if (a.value) checkHeaderValue('authValue', a.value);
};

export interface McpProfileServerShape {
  serverId: string;
  tools?: readonly string[] | undefined;
  prefix?: string | undefined;
  pin?: boolean | undefined;
}

/**
 * A profile's server list with the default prefixes filled in (the serverId), or `invalid_argument`
 * naming the entry: a server listed twice, two entries with one prefix (their names would
 * collide), a prefix with `__` (the separator: `a` + `b__x` and `a__b` + `x` would collide).
 */
export const checkMcpProfileServers = (
  servers: readonly McpProfileServerShape[],
): { serverId: string; tools?: string[]; prefix: string; pin?: boolean }[] => {
  const ids = new Set<string>();
  const prefixes = new Set<string>();
  return servers.map((s, i) => {
    const prefix = s.prefix ?? s.serverId;
    if (ids.has(s.serverId))
      throw connectError(
        'invalid_argument',
        `invalid field 'servers.${i}.serverId': server '${s.serverId}' is listed twice`,
        `servers.${i}.serverId`,
      );
    if (prefix.includes('__'))
      throw connectError(
        'invalid_argument',
        `invalid field 'servers.${i}.prefix': '__' separates the prefix from the name; a prefix cannot contain it`,
        `servers.${i}.prefix`,
      );
    if (prefixes.has(prefix))
      throw connectError(
        'invalid_argument',
        `invalid field 'servers.${i}.prefix': prefix '${prefix}' is used by another server of the profile`,
        `servers.${i}.prefix`,
      );
    ids.add(s.serverId);
    prefixes.add(prefix);
    return { serverId: s.serverId, ...(s.tools ? { tools: [...s.tools] } : {}), prefix, ...(s.pin ? { pin: true } : {}) };
  });
};
