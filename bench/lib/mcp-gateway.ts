import { type Gateway, startGateway } from '../../src/app.ts';
import { loadConfig } from '../../src/config/env.ts';
import { generateKek } from '../../src/core/secrets.ts';
import type { ConfigDocument } from '../../src/api/config-document.ts';
import { mcpSnapshotOf } from '../../src/propagation/mcp.ts';

/**
 * An in-process gateway (embedded store in memory) with one customer, an API key and one MCP
 * profile `profileId` fronting `servers` (each `[serverId, url, transport, prefix]`). The MCP
 * configuration is built by the real snapshot builder from the document's MCP sections and put into
 * the served snapshot, as the tests do until the management operations (CreateMcpServer,
 * AddProjectMcpServer, CreateMcpProfile) exist; then these become three management calls.
 */
export interface McpBenchGateway {
  gw: Gateway;
  url: string;
  apiKey: string;
  stop(): Promise<void>;
}

const ADMIN = 'bench-admin-token-0123456789';

export const startMcpGateway = async (profileId: string, servers: readonly (readonly [string, string, 'streamable-http' | 'sse', string])[], env: Record<string, string> = {}): Promise<McpBenchGateway> => {
  const config = loadConfig([], {
    GATEWAY_PORT: '0',
    GATEWAY_ADMIN_PORT: '0',
    GATEWAY_DATA_DIR: 'memory://',
    GATEWAY_ADMIN_TOKEN: ADMIN,
    GATEWAY_DEMO: '0',
    GATEWAY_KEK: generateKek(),
    GATEWAY_LOG_LEVEL: 'error',
    GATEWAY_SHUTDOWN_GRACE: '1s',
    ...env,
  });
  const gw = await startGateway(config);
  const call = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${gw.adminUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` }, body: JSON.stringify(body) });
    const out: unknown = await res.json();
    if (res.status !== 200 || typeof out !== 'object' || out === null) throw new Error(`${path}: ${res.status} ${JSON.stringify(out)}`);
    return Object.fromEntries(Object.entries(out));
  };
  await call('/admin.v1.AdminService/CreateCustomer', { customerId: 'bench', name: 'Bench' });
  const key = await call('/apikey.v1.ApiKeyService/CreateApiKey', { name: 'mcp', userId: 'bench', enterpriseContext: { customerId: 'bench', projectId: 'default' } });
  await gw.controller.settled();
  const current = gw.snapshots.current;
  const project = current?.projects.get('bench/default');
  if (!current || !project || typeof key.apiKey !== 'string') throw new Error('the gateway did not come up');
  const sections: Pick<ConfigDocument, 'mcpServers' | 'mcpProfiles'> = {
    mcpServers: servers.map(([serverId, url, transport]) => ({ serverId, url, transport, authType: 'none', authHeader: null, authValue: null, allowPrivate: true })),
    mcpProfiles: [{ id: crypto.randomUUID(), projectUuid: project.id, profileId, servers: servers.map(([serverId, , , prefix]) => ({ serverId, prefix })) }],
  };
  gw.snapshots.swap({ ...current, mcp: mcpSnapshotOf(sections) });
  return { gw, url: `${gw.inferenceUrl}/mcp/${profileId}`, apiKey: key.apiKey, stop: () => gw.stop(1000) };
};
