import type { McpProfileConfig, McpProfileServer } from './config.ts';

/**
 * Names as a profile lists them (contract §7): a tool, prompt or resource template `name` of a
 * server whose profile entry has prefix `p` is listed as `p__name` (just `name` when `p` is '').
 * The tool filter (names and `*` globs) decides what is listed and what may be called: one test
 * for both, so nothing hidden is callable.
 */

export const SEPARATOR = '__';

export const listedName = (entry: McpProfileServer, name: string): string =>
  entry.prefix === '' ? name : `${entry.prefix}${SEPARATOR}${name}`;

const globCache = new Map<string, RegExp>();
const globRegExp = (glob: string): RegExp => {
  let re = globCache.get(glob);
  if (!re) {
    re = new RegExp(
      `^${glob
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
      's',
    );
    if (globCache.size > 1024) globCache.clear();
    globCache.set(glob, re);
  }
  return re;
};

/** Whether the entry's tool filter lets the tool (its upstream name) through; no filter lets every tool through. */
export const toolAllowed = (entry: McpProfileServer, name: string): boolean => {
  return entry.tools === undefined || matches(entry.tools, name);
};

const matches = (patterns: readonly string[], name: string): boolean => {
  for (const f of patterns) if (f.includes('*') ? globRegExp(f).test(name) : f === name) return true;
  return false;
};

/**
 * Whether the profile's grants let this caller use the tool (its listed name): no grants = every
 * caller of the project; grants = only what a grant to the caller names (deny by default). The
 * caller is `api_key:<its key id>` and, for a member's user token, `user:<their user id>` (role
 * grants arrive expanded to their members' user ids).
 */
export const toolGranted = (profile: McpProfileConfig, caller: { id: string; userId?: string | undefined }, listed: string): boolean => {
  if (!profile.grants) return true;
  for (const g of profile.grants)
    if (
      (g.principal === `api_key:${caller.id}` || (caller.userId !== undefined && g.principal === `user:${caller.userId}`)) &&
      matches(g.tools, listed)
    )
      return true;
  return false;
};

export interface Routed {
  entry: McpProfileServer;
  /** The name as the server knows it. */
  name: string;
}

/**
 * The profile entries a listed name may belong to, most specific first: entries whose prefix it
 * starts with (`prefix__`), then entries without a prefix (the name as is). Several unprefixed
 * entries are told apart by what their servers list (the caller checks).
 */
export const candidatesFor = (profile: McpProfileConfig, listed: string): Routed[] => {
  const out: Routed[] = [];
  for (const entry of profile.servers) {
    if (entry.prefix === '') continue;
    const head = `${entry.prefix}${SEPARATOR}`;
    if (listed.startsWith(head) && listed.length > head.length) out.push({ entry, name: listed.slice(head.length) });
  }
  // A longer prefix is the more specific match (`a__b__x` with prefixes `a` and `a__b`).
  out.sort((x, y) => y.entry.prefix.length - x.entry.prefix.length);
  for (const entry of profile.servers) if (entry.prefix === '') out.push({ entry, name: listed });
  return out;
};
