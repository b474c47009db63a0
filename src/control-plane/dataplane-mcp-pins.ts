import { PROTOCOL, type ProtocolInput, protocolPath } from '../api/dataplane.ts';
import type { ControlDeps } from './deps.ts';
import { answer, authenticate, body, fail, planeOf, valid } from './dataplane-protocol.ts';
import { recordSeen } from './services/mcp-pins.ts';

/**
 * Pinned MCP tools for separate data planes (contract §7.1): `ReportMcpTools` `{profileUuid,
 * serverId, tools: [{name, hash}]}` → `{}` records what the data plane listed of a profile's
 * pinned server (services/mcp-pins.ts: the first listing pins it, later ones are compared for
 * GetMcpProfile's `pendingTools`). The profile must belong to a project the calling data plane
 * serves, else `permission_denied`; a server the profile does not pin changes nothing.
 */

const REFUSALS: Record<string, string> = {
  profileUuid: 'profileUuid: the profile row id',
  serverId: 'serverId: a catalog server id (1-253)',
  tools: 'tools: at most 5000 {name (1-256), hash (sha256, hex)}',
};

export const mcpPinRoutes = (deps: ControlDeps): Record<string, (req: Request) => Promise<Response>> => ({
  [protocolPath('ReportMcpTools')]: async (req) => {
    try {
      const a = await authenticate(deps, req);
      if (a instanceof Response) return a;
      const input: ProtocolInput<'ReportMcpTools'> = valid(PROTOCOL.ReportMcpTools.input, await body(req), REFUSALS);
      const plane = await planeOf(deps, a);
      await recordSeen(deps, input.profileUuid, input.serverId, input.tools, plane.projectUuids);
      return answer<'ReportMcpTools'>({});
    } catch (e) {
      return fail(e);
    }
  },
});
