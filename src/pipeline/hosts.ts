import { GatewayError } from '../core/errors.ts';
import { normalizeHost } from '../core/hosts.ts';
import type { ConfigSnapshot, HostScope, KeySnapshot } from '../propagation/snapshot.ts';

/**
 * Project gateways served by host (contract §5). The request's `Host` header is looked up once in
 * the snapshot's host map: a project gateway's host serves the projects attached to it, a workspace
 * URL adopted through PROXY_URL serves the workspace's project; any other host is served as before
 * (every project on the embedded data plane, the workspace's own project on a separate one).
 * A caller whose project is not served at the host gets 404 `project_not_served`.
 */

const notServed = (host: string, scope: HostScope | undefined): GatewayError =>
  new GatewayError({
    kind: 'not_found',
    errorCode: 'project_not_served',
    message: `This API key's project is not served at '${host}' (${
      scope
        ? `${scope.kind === 'project_gateway' ? 'project gateway' : 'workspace'} '${scope.name}' serves other projects`
        : "this data plane serves its workspace's project there"
    }); use the URL of a project gateway the project is attached to.`,
  });

/** The caller, if its project is served at the request's host; else the error saying so. */
export const servedAt = (headers: Headers, snapshot: ConfigSnapshot, key: KeySnapshot): KeySnapshot => {
  const { hosts, defaultProjects } = snapshot;
  if (hosts.size === 0 && defaultProjects === undefined) return key;
  const host = normalizeHost(headers.get('host') ?? '');
  const scope = hosts.get(host);
  const served = scope ? scope.projects : defaultProjects;
  if (served === undefined || served.has(key.project.id)) return key;
  throw notServed(host, scope);
};
