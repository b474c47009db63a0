import type { Client } from '@modelcontextprotocol/client';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import {
  type ClientCapabilities,
  ErrorCode,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListToolsResultSchema,
  McpError,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { describeError, log } from '../core/log.ts';
import { upstreamBounds } from '../core/upstream-bounds.ts';
import type { PipelineDeps } from '../pipeline/deps.ts';
import type { RequestIds } from '../pipeline/context.ts';
import type { KeySnapshot } from '../propagation/snapshot.ts';
import type { McpProfileConfig, McpProfileServer, McpServerConfig } from './config.ts';
import { type Links, whileInFlight } from './links.ts';
import { notApproved, type PinBook } from './pins.ts';
import { candidatesFor, listedName, toolAllowed, toolGranted } from './names.ts';
import type { Conn, UpstreamPool } from './upstream.ts';

/**
 * Aggregation and routing back. A list is asked of every server of the profile at once, each
 * with a bounded time: a server that fails or is slow costs only its own entries (logged with the
 * reason), never the list; an empty list is logged with why it is empty. Names are prefixed and
 * filtered as names.ts says; resource URIs are passed through and routed back to the server that
 * listed them (or whose template matches them).
 */

export interface McpGatewayDeps {
  deps: PipelineDeps;
  pool: UpstreamPool;
  links: Links;
  /** Pinned tools: what may be shown of a `pin: true` server (mcp/pins.ts). */
  pins: PinBook;
  /** Bound on one server's list (ms). */
  listTimeoutMs: number;
  /** Bound on one call without progress (ms); progress notifications extend it. */
  callTimeoutMs: number;
  /** Bound on one call whatever the progress (ms). */
  maxCallMs: number;
}

/** What one HTTP request to `/mcp/{profileId}` serves. */
export interface McpRequestView {
  /** The pool's key for the gateway session (its id, or the sessionless caller). */
  session: string;
  caps: ClientCapabilities;
  profile: McpProfileConfig;
  servers: ReadonlyMap<string, McpServerConfig>;
  key: KeySnapshot;
  headers: Headers;
  /** The client's protocol revision and its 2025 session id (for spans). */
  protocolVersion?: string;
  sessionId?: string;
  /** Ids for the next governed call: the HTTP request's own first, fresh ones after. */
  nextIds(): RequestIds;
}

export interface Target {
  entry: McpProfileServer;
  server: McpServerConfig;
  /** The name at the server. */
  name: string;
}

const MAX_PAGES = 50;

const timed = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new McpError(ErrorCode.RequestTimeout, `${what} timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });

type Listing = 'tools' | 'prompts' | 'resources' | 'templates';
const CAPABILITY: Record<Listing, 'tools' | 'prompts' | 'resources'> = {
  tools: 'tools',
  prompts: 'prompts',
  resources: 'resources',
  templates: 'resources',
};

/** Every page of one list of one server, at most GATEWAY_MCP_MAX_LIST_ITEMS items over all of them. */
const pages = async <T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<T[]> => {
  const out: T[] = [];
  const max = upstreamBounds.mcpMaxListItems;
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await fetchPage(cursor);
    if (out.length + page.items.length > max)
      throw new McpError(
        ErrorCode.InternalError,
        `The MCP server's list holds more than ${max} items (GATEWAY_MCP_MAX_LIST_ITEMS); it is left out.`,
        { code: 'mcp_list_too_long', limit: max },
      );
    out.push(...page.items);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return out;
};

const fetchList = async (client: Client, what: Listing, signal: AbortSignal | undefined): Promise<unknown[]> => {
  const opts = signal ? { signal } : {};
  switch (what) {
    case 'tools':
      return pages(async (cursor) => {
        const r = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ListToolsResultSchema, opts);
        return { items: r.tools, nextCursor: r.nextCursor };
      });
    case 'prompts':
      return pages(async (cursor) => {
        const r = await client.request({ method: 'prompts/list', params: cursor ? { cursor } : {} }, ListPromptsResultSchema, opts);
        return { items: r.prompts, nextCursor: r.nextCursor };
      });
    case 'resources':
      return pages(async (cursor) => {
        const r = await client.request({ method: 'resources/list', params: cursor ? { cursor } : {} }, ListResourcesResultSchema, opts);
        return { items: r.resources, nextCursor: r.nextCursor };
      });
    case 'templates':
      return pages(async (cursor) => {
        const r = await client.request(
          { method: 'resources/templates/list', params: cursor ? { cursor } : {} },
          ListResourceTemplatesResultSchema,
          opts,
        );
        return { items: r.resourceTemplates, nextCursor: r.nextCursor };
      });
  }
};

/** One server's entries of a list as the profile shows them, remembering what it listed on its upstream session. */
const listOne = async (
  m: McpGatewayDeps,
  v: McpRequestView,
  entry: McpProfileServer,
  server: McpServerConfig,
  what: Listing,
  signal?: AbortSignal,
): Promise<unknown[]> =>
  m.pool.use(v.session, server, v.caps, async (client, conn) => {
    if (!client.getServerCapabilities()?.[CAPABILITY[what]]) return [];
    const items = await whileInFlight(signal, (s) => fetchList(client, what, s));
    if (what !== 'tools' || !entry.pin) {
      remember(conn, entry, what, items);
      return items;
    }
    // A pinned server: only tools whose definition is the approved one; the others are held.
    const tools = items.flatMap((t) => {
      const parsed = ListToolsResultSchema.shape.tools.element.safeParse(t);
      return parsed.success ? [parsed.data] : [];
    });
    const ok = m.pins.approved(v.profile, entry, tools);
    const shown = tools.filter((t) => ok.has(t.name));
    remember(conn, entry, what, shown);
    conn.listed = { ...conn.listed, held: new Set(tools.filter((t) => !ok.has(t.name) && toolAllowed(entry, t.name)).map((t) => t.name)) };
    return shown;
  });

const nameOf = (x: unknown): string | undefined =>
  typeof x === 'object' && x !== null && 'name' in x && typeof x.name === 'string' ? x.name : undefined;
const uriOf = (x: unknown, field: 'uri' | 'uriTemplate'): string | undefined => {
  if (typeof x !== 'object' || x === null || !(field in x)) return undefined;
  const u: unknown = Reflect.get(x, field);
  return typeof u === 'string' ? u : undefined;
};

const remember = (conn: Conn, entry: McpProfileServer, what: Listing, items: readonly unknown[]): void => {
  const names = (): Set<string> => new Set(items.map(nameOf).filter((n): n is string => n !== undefined));
  if (what === 'tools') conn.listed = { ...conn.listed, tools: new Set([...names()].filter((n) => toolAllowed(entry, n))) };
  else if (what === 'prompts') conn.listed = { ...conn.listed, prompts: names() };
  else if (what === 'resources')
    conn.listed = { ...conn.listed, resources: new Set(items.map((r) => uriOf(r, 'uri')).filter((u): u is string => u !== undefined)) };
  else conn.listed = { ...conn.listed, templates: items.map((r) => uriOf(r, 'uriTemplate')).filter((u): u is string => u !== undefined) };
};

/** Every server's entries, in the profile's order; failures cost only their server's entries. */
const fanOut = async (
  m: McpGatewayDeps,
  v: McpRequestView,
  what: Listing,
  signal?: AbortSignal,
): Promise<{ entry: McpProfileServer; items: unknown[] }[]> => {
  const failures: string[] = [];
  const results = await Promise.all(
    v.profile.servers.map(async (entry) => {
      const server = v.servers.get(entry.serverId);
      if (!server) return { entry, items: [] };
      try {
        return {
          entry,
          items: await timed(listOne(m, v, entry, server, what, signal), m.listTimeoutMs, `listing ${what} of '${entry.serverId}'`),
        };
      } catch (e) {
        failures.push(entry.serverId);
        log.warn('mcp server left out of a list', {
          profile: v.profile.profileId,
          server: entry.serverId,
          list: what,
          error: describeError(e),
        });
        return { entry, items: [] };
      }
    }),
  );
  if (results.every((r) => r.items.length === 0)) {
    const reason =
      v.profile.servers.length === 0
        ? 'the profile has no server the project may use (none configured, or none assigned to the project and in the catalog)'
        : failures.length === v.profile.servers.length
          ? 'every server of the profile failed to answer'
          : failures.length > 0
            ? `the servers that answered list none, and ${failures.join(', ')} failed`
            : 'the servers list none';
    log.info('mcp list is empty', { profile: v.profile.profileId, list: what, reason });
  }
  return results;
};

export const listTools = async (m: McpGatewayDeps, v: McpRequestView, signal?: AbortSignal): Promise<Tool[]> => {
  const out: Tool[] = [];
  let filtered = 0;
  for (const { entry, items } of await fanOut(m, v, 'tools', signal))
    for (const t of items) {
      const parsed = ListToolsResultSchema.shape.tools.element.safeParse(t);
      if (!parsed.success) continue;
      const name = listedName(entry, parsed.data.name);
      if (!toolAllowed(entry, parsed.data.name) || !toolGranted(v.profile, v.key, name)) {
        filtered++;
        continue;
      }
      out.push({ ...parsed.data, name });
    }
  if (out.length === 0 && filtered > 0)
    log.info('mcp tool list is empty', {
      profile: v.profile.profileId,
      reason: `the profile's tool filters and grants leave this caller none of ${filtered} tools`,
    });
  return out;
};

export const listPrompts = async (m: McpGatewayDeps, v: McpRequestView, signal?: AbortSignal): Promise<Prompt[]> => {
  const out: Prompt[] = [];
  for (const { entry, items } of await fanOut(m, v, 'prompts', signal))
    for (const p of items) {
      const parsed = ListPromptsResultSchema.shape.prompts.element.safeParse(p);
      if (parsed.success) out.push({ ...parsed.data, name: listedName(entry, parsed.data.name) });
    }
  return out;
};

/** Each URI once: the first server in profile order wins (a later duplicate is logged). */
const once = <T>(v: McpRequestView, what: string, uriOf: (x: T) => string): ((x: T, serverId: string) => boolean) => {
  const seen = new Map<string, string>();
  return (x, serverId) => {
    const uri = uriOf(x);
    const first = seen.get(uri);
    if (first === undefined) {
      seen.set(uri, serverId);
      return true;
    }
    log.info('mcp duplicate URI left out of a list', { profile: v.profile.profileId, list: what, uri, server: serverId, kept: first });
    return false;
  };
};

export const listResources = async (m: McpGatewayDeps, v: McpRequestView, signal?: AbortSignal): Promise<Resource[]> => {
  const out: Resource[] = [];
  const keep = once<Resource>(v, 'resources', (r) => r.uri);
  for (const { entry, items } of await fanOut(m, v, 'resources', signal))
    for (const r of items) {
      const parsed = ListResourcesResultSchema.shape.resources.element.safeParse(r);
      if (parsed.success && keep(parsed.data, entry.serverId)) out.push(parsed.data);
    }
  return out;
};

export const listTemplates = async (m: McpGatewayDeps, v: McpRequestView, signal?: AbortSignal): Promise<ResourceTemplate[]> => {
  const out: ResourceTemplate[] = [];
  const keep = once<ResourceTemplate>(v, 'templates', (r) => r.uriTemplate);
  for (const { entry, items } of await fanOut(m, v, 'templates', signal))
    for (const r of items) {
      const parsed = ListResourceTemplatesResultSchema.shape.resourceTemplates.element.safeParse(r);
      if (parsed.success && keep(parsed.data, entry.serverId)) out.push({ ...parsed.data, name: listedName(entry, parsed.data.name) });
    }
  return out;
};

/**
 * The server a listed tool or prompt name belongs to. A tool is callable only when the profile's
 * filter lets it through AND the server listed it on this upstream session (listed first when this
 * replica has not yet): a name the server never listed is never called, whatever a glob says.
 */
export const routeName = async (m: McpGatewayDeps, v: McpRequestView, kind: 'tools' | 'prompts', listed: string): Promise<Target> => {
  const unknown = (): McpError => new McpError(ErrorCode.InvalidParams, `${kind === 'tools' ? 'Tool' : 'Prompt'} ${listed} not found`);
  if (kind === 'tools' && !toolGranted(v.profile, v.key, listed)) throw unknown();
  const targets: Target[] = [];
  for (const c of candidatesFor(v.profile, listed)) {
    const server = v.servers.get(c.entry.serverId);
    if (server && (kind !== 'tools' || toolAllowed(c.entry, c.name))) targets.push({ ...c, server });
  }
  const first = targets[0];
  if (!first) throw unknown();
  if (kind === 'prompts' && (first.entry.prefix !== '' || targets.length === 1)) return first;
  // Tools always, prompts of several servers without a prefix: the server that lists the name.
  for (const t of targets) {
    const conn = m.pool.conn(v.session, t.server, v.caps);
    if (!conn.listed[kind])
      await timed(listOne(m, v, t.entry, t.server, kind), m.listTimeoutMs, `listing ${kind} of '${t.entry.serverId}'`).catch(() => []);
    const listedNow = m.pool.conn(v.session, t.server, v.caps).listed;
    if (listedNow[kind]?.has(t.name)) return t;
    if (kind === 'tools' && listedNow.held?.has(t.name)) throw notApproved(listed);
  }
  throw unknown();
};

/** The server that listed a resource URI, or whose template matches it; with one server, that server. */
export const routeUri = async (m: McpGatewayDeps, v: McpRequestView, uri: string): Promise<Target> => {
  const entries: Target[] = [];
  for (const entry of v.profile.servers) {
    const server = v.servers.get(entry.serverId);
    if (server) entries.push({ entry, server, name: uri });
  }
  const find = (): Target | undefined => {
    for (const exact of [true, false])
      for (const t of entries) {
        const l = m.pool.conn(v.session, t.server, v.caps).listed;
        if (exact ? l.resources?.has(uri) : l.templates?.some((tpl) => matches(tpl, uri))) return t;
      }
    return undefined;
  };
  const found = find();
  if (found) return found;
  if (entries.length === 1 && entries[0]) return entries[0];
  await Promise.all([fanOut(m, v, 'resources'), fanOut(m, v, 'templates')]);
  const again = find();
  if (again) return again;
  throw new McpError(-32002, `Resource ${uri} not found`, { uri });
};

const matches = (template: string, uri: string): boolean => {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
};
