import { ManagementClient } from '../../src/api/client.ts';
import { type Gateway, startGateway } from '../../src/app.ts';
import { loadConfig } from '../../src/config/env.ts';
import { generateKek } from '../../src/core/secrets.ts';

/**
 * An in-process gateway (embedded store in memory) with one customer, an API key and one MCP
 * profile `profileId` fronting `servers` (each `[serverId, url, transport, prefix]`), all
 * configured through the management API as an operator would: CreateMcpServer (the platform
 * admin's save, so a loopback address is allowed), AddProjectMcpServer, CreateMcpProfile.
 */
export interface McpBenchGateway {
  gw: Gateway;
  url: string;
  apiKey: string;
  stop(): Promise<void>;
}

const ADMIN = 'bench-admin-token-0123456789';

export const startMcpGateway = async (
  profileId: string,
  servers: readonly (readonly [string, string, 'streamable-http' | 'sse', string])[],
  env: Record<string, string> = {},
): Promise<McpBenchGateway> => {
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
  const api = new ManagementClient({ endpoint: gw.adminUrl, token: ADMIN, attempts: 1 });
  const project = { customerId: 'bench', projectId: 'default' };
  await api.call('CreateCustomer', { customerId: 'bench', name: 'Bench' });
  const key = await api.call('CreateApiKey', { name: 'mcp', userId: 'bench', enterpriseContext: project });
  for (const [serverId, url, transport] of servers) {
    await api.call('CreateMcpServer', { serverId, url, transport });
    await api.call('AddProjectMcpServer', { ...project, serverId });
  }
  await api.call('CreateMcpProfile', { ...project, profileId, servers: servers.map(([serverId, , , prefix]) => ({ serverId, prefix })) });
  await gw.controller.settled();
  if (!gw.snapshots.current?.mcp.profiles.size) throw new Error('the gateway does not serve the MCP profile');
  return { gw, url: `${gw.inferenceUrl}/mcp/${profileId}`, apiKey: key.apiKey, stop: () => gw.stop(1000) };
};
