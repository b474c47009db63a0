/**
 * Upstream address classification (contract §3.1 "Upstream addresses"), shared by the management
 * plane (checked when a connection is saved) and the data plane (checked again before every
 * upstream connection). Framework-free: node:dns and node:net only.
 *
 * "Inward" addresses: loopback (127/8, ::1), private (10/8, 172.16/12, 192.168/16, fc00::/7),
 * link-local (169.254/16, fe80::/10), shared CGNAT (100.64/10), unspecified (0.0.0.0/8, ::),
 * multicast/reserved/broadcast, cloud metadata (169.254.169.254, fd00:ec2::254, 100.100.100.200,
 * metadata.google.internal, …), IPv4 embedded in IPv6 (mapped, compatible, translated, NAT64,
 * 6to4) of those,
 * and host names that mean the machine itself or its cloud (localhost, *.localhost, *.internal).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'shared' | 'unspecified' | 'metadata' | 'reserved';

const v4Octets = (ip: string): number[] | undefined => {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  const n = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : Number.NaN));
  return n.every((x) => x >= 0 && x <= 255) ? n : undefined;
};

const classifyV4 = (o: readonly number[]): AddressClass => {
  const [a = 0, b = 0, c = 0, d = 0] = o;
  if ((a === 169 && b === 254 && c === 169 && d === 254) || (a === 100 && b === 100 && c === 100 && d === 200)) return 'metadata';
  if (a === 0) return 'unspecified';
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 169 && b === 254) return 'link-local';
  if (a === 100 && b >= 64 && b <= 127) return 'shared';
  // IETF protocol assignments, benchmarking, multicast, reserved and broadcast.
  if ((a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19)) || a >= 224) return 'reserved';
  return 'public';
};

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part allowed), or undefined. */
const v6Groups = (ip: string): number[] | undefined => {
  let s = ip.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const lastColon = s.lastIndexOf(':');
  const dotted = s.slice(lastColon + 1);
  if (dotted.includes('.')) {
    // A trailing dotted IPv4 part (`::ffff:127.0.0.1`) is two groups.
    const o = v4Octets(dotted);
    if (!o) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = o;
    s = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const parse = (h: string | undefined): number[] | undefined => {
    if (h === undefined || h === '') return [];
    const g = h.split(':').map((x) => (/^[0-9a-f]{1,4}$/.test(x) ? Number.parseInt(x, 16) : Number.NaN));
    return g.every((x) => !Number.isNaN(x)) ? g : undefined;
  };
  const head = parse(halves[0]);
  const rest = parse(halves[1]);
  if (!head || !rest) return undefined;
  const given = head.length + rest.length;
  if (halves.length === 1) return given === 8 ? head : undefined;
  if (given > 7) return undefined;
  return [...head, ...Array<number>(8 - given).fill(0), ...rest];
};

const embeddedV4 = (hi: number, lo: number): number[] => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];

const classifyV6 = (g: readonly number[]): AddressClass => {
  const at = (i: number): number => g[i] ?? 0;
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && at(7) === 1) return 'loopback';
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated, RFC 2765/6145),
  // 64:ff9b::a.b.c.d (NAT64): the IPv4 decides.
  if (zeroUpTo(5) && (at(5) === 0xffff || at(5) === 0)) return classifyV4(embeddedV4(at(6), at(7)));
  if (zeroUpTo(4) && at(4) === 0xffff && at(5) === 0) return classifyV4(embeddedV4(at(6), at(7)));
  if (at(0) === 0x64 && at(1) === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return classifyV4(embeddedV4(at(6), at(7)));
  if (at(0) === 0x2002) return classifyV4(embeddedV4(at(1), at(2)));
  if (at(0) === 0xfd00 && at(1) === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && at(7) === 0x254) return 'metadata';
  if ((at(0) & 0xfe00) === 0xfc00) return 'private';
  if ((at(0) & 0xffc0) === 0xfe80) return 'link-local';
  if ((at(0) & 0xffc0) === 0xfec0) return 'private';
  if ((at(0) & 0xff00) === 0xff00) return 'reserved';
  return 'public';
};

/** The class of an IP literal; undefined when `ip` is not one. */
export const classifyIp = (ip: string): AddressClass | undefined => {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const family = isIP(bare.split('%')[0] ?? '');
  if (family === 4) {
    const o = v4Octets(bare);
    return o ? classifyV4(o) : undefined;
  }
  if (family === 6) {
    const g = v6Groups(bare);
    return g ? classifyV6(g) : 'reserved';
  }
  return undefined;
};

const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

/** Host names that are inward whatever they resolve to. */
export const classifyName = (host: string): AddressClass | undefined => {
  if (METADATA_NAMES.has(host)) return 'metadata';
  if (host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.localdomain') return 'loopback';
  if (host.endsWith('.internal') || host.endsWith('.local')) return 'private';
  return undefined;
};

/** The host of an http(s) URL as the connection would use it (brackets and a trailing dot removed); undefined when not a URL. */
export const urlHost = (url: string): string | undefined => {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  let h = u.hostname.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  return h.endsWith('.') ? h.slice(0, -1) : h;
};

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
let resolver: Resolver = systemResolver;

/** Resolutions are reused this long, so that the hot path does not pay a DNS lookup per request. */
export const RESOLUTION_TTL_MS = 30_000;
const MAX_CACHED = 1024;
interface Resolution {
  addresses: Promise<string[]>;
  at: number;
}
const cache = new Map<string, Resolution>();

/** Why a host is inward: its own class, or the first inward address it resolves to. */
export interface Inward {
  address: string;
  class: AddressClass;
}

/** Verdicts of `inwardAddress` per URL, each valid as long as the resolution it rests on. */
const verdicts = new Map<string, { inward: Inward | undefined; until: number }>();

/** Replaces the resolver (tests), or restores the system one; clears the caches either way. */
export const setResolver = (r: Resolver | undefined): void => {
  resolver = r ?? systemResolver;
  cache.clear();
  verdicts.clear();
};

const resolution = (host: string, now: number): Resolution => {
  const hit = cache.get(host);
  if (hit && now - hit.at < RESOLUTION_TTL_MS) return hit;
  if (cache.size >= MAX_CACHED) cache.clear();
  const addresses = resolver(host);
  const entry = { addresses, at: now };
  cache.set(host, entry);
  addresses.catch(() => cache.delete(host));
  return entry;
};

/** Every address `host` resolves to, cached for `RESOLUTION_TTL_MS`; failed lookups are not cached. */
export const resolveHost = (host: string, now: number = Date.now()): Promise<string[]> => resolution(host, now).addresses;

const remember = (url: string, inward: Inward | undefined, until: number): Inward | undefined => {
  if (verdicts.size >= MAX_CACHED) verdicts.clear();
  verdicts.set(url, { inward, until });
  return inward;
};

/**
 * The verdict of `inwardAddress(url)` when one is known and its resolution is still fresh, without
 * waiting (the hot path); undefined when it has to be established.
 */
export const knownInward = (url: string, now: number = Date.now()): { inward: Inward | undefined } | undefined => {
  const v = verdicts.get(url);
  return v && now < v.until ? v : undefined;
};

/**
 * Whether `url`'s host is or resolves to an inward address; undefined when every address is
 * public. Throws what the resolver throws when a name does not resolve.
 */
export const inwardAddress = async (url: string): Promise<Inward | undefined> => {
  const now = Date.now();
  const host = urlHost(url);
  if (host === undefined || host === '') return { address: url, class: 'reserved' };
  const direct = classifyIp(host) ?? classifyName(host);
  if (direct !== undefined)
    return remember(url, direct === 'public' ? undefined : { address: host, class: direct }, now + RESOLUTION_TTL_MS);
  const r = resolution(host, now);
  for (const address of await r.addresses) {
    const c = classifyIp(address) ?? 'reserved';
    if (c !== 'public') return remember(url, { address, class: c }, r.at + RESOLUTION_TTL_MS);
  }
  return remember(url, undefined, r.at + RESOLUTION_TTL_MS);
};
