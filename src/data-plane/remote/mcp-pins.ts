import type { McpPinSink } from '../../mcp/pins.ts';
import type { ProtocolClient } from './conversations.ts';

/** Pinned MCP tools of a separate data plane: what it lists of a pinned server goes to the management plane (`ReportMcpTools`). */
export const remoteMcpPinSink = (client: ProtocolClient, timeoutMs = 5_000): McpPinSink => ({
  seen: async ({ profileUuid, serverId, tools }) => {
    await client.protocol('ReportMcpTools', { profileUuid, serverId, tools: [...tools] }, { timeoutMs, attempts: 2 });
  },
});
