/**
 * Save-time half of contract §3.1 "Upstream addresses" (and the same rule for audit sinks,
 * `checkSinkUrl`): a connection's `baseUrl` and every URL
 * inside its credentials (`apiKey` JSON such as a service account's `token_uri`) or options (watsonx
 * `iamUrl`, …), and a catalog MCP server's `url` (contract §7), must not be, or resolve to, an inward address unless the platform admin saves it or
 * the operator allows it (GATEWAY_UPSTREAM_ALLOW_PRIVATE). The data plane checks again at connect
 * time (data-plane/upstream.ts), so a name that later resolves inward is refused there.
 */
import { inwardSink } from '../audit/otlp.ts';
import { inwardAddress } from '../core/addresses.ts';
import { connectError } from '../core/errors.ts';
import type { Principal } from './auth.ts';

const HTTP_URL = /^https?:\/\//i;

export interface ConnectionUrls {
  baseUrl?: string | null;
  apiKey?: string | null;
  options?: Record<string, unknown> | null;
}

/** Every URL-valued string under `v`, by field path; `headers` objects are not addresses. */
const collect = (v: unknown, path: string, out: Map<string, string>): void => {
  if (typeof v === 'string') {
    if (HTTP_URL.test(v.trim())) out.set(path, v.trim());
  } else if (Array.isArray(v)) {
    v.forEach((x, i) => {
      collect(x, `${path}[${i}]`, out);
    });
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) if (k.toLowerCase() !== 'headers') collect(x, `${path}.${k}`, out);
  }
};

/** The URL fields of a connection: `baseUrl`, `apiKey.<field>` (a JSON key), `options.<field>`. */
export const connectionUrls = (c: ConnectionUrls): Map<string, string> => {
  const out = new Map<string, string>();
  if (c.baseUrl) out.set('baseUrl', c.baseUrl);
  const key = c.apiKey?.trim();
  if (key?.startsWith('{')) {
    try {
      collect(JSON.parse(key), 'apiKey', out);
    } catch {
      // not JSON: an opaque key holds no address
    }
  }
  if (c.options) collect(c.options, 'options', out);
  return out;
};

/**
 * Checks the connection as it will be stored (`next`) and returns whether it carries the
 * private-address allowance (see `checkUpstreamUrls`).
 */
export const checkConnectionUrls = async (
  principal: Principal,
  operatorAllows: boolean,
  next: ConnectionUrls,
  current?: { urls: Map<string, string>; allowPrivate: boolean },
): Promise<boolean> => checkUpstreamUrls(principal, operatorAllows, connectionUrls(next), current);

/**
 * Checks the upstream URLs of a resource as it will be stored (by field name: a connection's, or an
 * MCP server's `url`) and returns whether it carries the private-address allowance. An inward
 * field is accepted from the platform admin, under the operator setting, or when it is unchanged
 * from an already allowed resource (`current`); anyone else gets `permission_denied` naming the
 * field. Names are resolved now; a name that does not resolve is accepted here and checked again
 * when the data plane connects.
 */
export const checkUpstreamUrls = async (
  principal: Principal,
  operatorAllows: boolean,
  urls: ReadonlyMap<string, string>,
  current?: { urls: ReadonlyMap<string, string>; allowPrivate: boolean },
): Promise<boolean> => {
  const admin = principal.kind === 'platform_admin';
  let anyInward = false;
  for (const [field, url] of urls) {
    const inward = await inwardAddress(url).catch(() => undefined);
    if (!inward) continue;
    anyInward = true;
    if (admin || operatorAllows || (current?.allowPrivate === true && current.urls.get(field) === url)) continue;
    throw connectError(
      'permission_denied',
      `field '${field}' points at a ${inward.class} address; only the platform admin may use loopback, private, link-local, shared or metadata addresses`,
      field,
    );
  }
  // Stored only for what the platform admin approved (now or before); the operator setting is applied live.
  return anyInward && (admin || current?.allowPrivate === true);
};

/**
 * The upstream address rule for an audit sink (`sinkUrl`): the management process itself connects
 * there, and only the platform admin configures sinks, so the platform-admin allowance of
 * connections cannot apply — an inward sink is accepted only when the operator allows inward
 * upstreams (GATEWAY_UPSTREAM_ALLOW_PRIVATE=1); otherwise `permission_denied` naming `sinkUrl`, the
 * same answer whatever listens there. The forwarder checks again before every send.
 */
export const checkSinkUrl = async (url: string, operatorAllows: boolean): Promise<void> => {
  if (operatorAllows) return;
  const inward = await inwardSink(url);
  if (inward)
    throw connectError(
      'permission_denied',
      `field 'sinkUrl' points at a ${inward.class} address; loopback, private, link-local, shared and metadata sinks need GATEWAY_UPSTREAM_ALLOW_PRIVATE=1`,
      'sinkUrl',
    );
};
