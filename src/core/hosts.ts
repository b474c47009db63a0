/**
 * Host names as the data plane matches them (project gateways and workspace URLs, contract §5):
 * lower-cased, port stripped, no trailing dot. IPv6 literals keep their brackets (`[::1]`), as
 * `URL.hostname` and the `Host` header both write them.
 */

/** The host of a `Host` header value (`Gw.Example.com:8443` → `gw.example.com`). */
export const normalizeHost = (raw: string): string => {
  let h = raw.trim();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    h = end > 0 ? h.slice(0, end + 1) : h;
  } else {
    const colon = h.indexOf(':');
    if (colon >= 0) h = h.slice(0, colon);
  }
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h.toLowerCase();
};

/** The host of a URL or bare host name as stored for a gateway or workspace; undefined when it has none. */
export const hostOfUrl = (url: string): string | undefined => {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`;
  try {
    const u = new URL(withScheme);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
    const h = normalizeHost(u.hostname);
    return h === '' ? undefined : h;
  } catch {
    return undefined;
  }
};
