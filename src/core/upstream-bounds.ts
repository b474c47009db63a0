/** GATEWAY_MAX_STREAM_EVENT's default: the largest event of an upstream stream held while it arrives. */
export const DEFAULT_MAX_EVENT = 16 * 1024 * 1024;

/**
 * The bounds on what is read from upstreams into memory, set at start-up from the settings:
 * GATEWAY_MAX_UPSTREAM_RESPONSE (a whole answer or error body), GATEWAY_MAX_STREAM_EVENT (one
 * event of a stream), GATEWAY_MCP_MAX_MESSAGE_BYTES (one message of an MCP server),
 * GATEWAY_MCP_MAX_LIST_ITEMS (one MCP server's list); and how long an idle MCP session lives
 * (GATEWAY_MCP_SESSION_IDLE); an A2A agent's call time-out (GATEWAY_A2A_TIMEOUT), how often its
 * card is checked against its pin (GATEWAY_A2A_CARD_CHECK) and its largest answer or stream event
 * (GATEWAY_A2A_MAX_MESSAGE).
 */
export interface UpstreamBounds {
  maxUpstreamResponseBytes: number;
  maxStreamEventBytes: number;
  maxMcpMessageBytes: number;
  mcpMaxListItems: number;
  mcpSessionIdleMs: number;
  a2aTimeoutMs: number;
  a2aCardCheckMs: number;
  a2aMaxMessageBytes: number;
}

export const upstreamBounds: UpstreamBounds = {
  maxUpstreamResponseBytes: 32 * 1024 * 1024,
  maxStreamEventBytes: DEFAULT_MAX_EVENT,
  maxMcpMessageBytes: 8 * 1024 * 1024,
  mcpMaxListItems: 5000,
  mcpSessionIdleMs: 24 * 3600_000,
  a2aTimeoutMs: 60_000,
  a2aCardCheckMs: 30_000,
  a2aMaxMessageBytes: 8 * 1024 * 1024,
};

export const setUpstreamBounds = (bounds: Partial<UpstreamBounds>): void => {
  if (bounds.maxUpstreamResponseBytes !== undefined) upstreamBounds.maxUpstreamResponseBytes = bounds.maxUpstreamResponseBytes;
  if (bounds.maxStreamEventBytes !== undefined) upstreamBounds.maxStreamEventBytes = bounds.maxStreamEventBytes;
  if (bounds.maxMcpMessageBytes !== undefined) upstreamBounds.maxMcpMessageBytes = bounds.maxMcpMessageBytes;
  if (bounds.mcpMaxListItems !== undefined) upstreamBounds.mcpMaxListItems = bounds.mcpMaxListItems;
  if (bounds.mcpSessionIdleMs !== undefined) upstreamBounds.mcpSessionIdleMs = bounds.mcpSessionIdleMs;
  if (bounds.a2aTimeoutMs !== undefined) upstreamBounds.a2aTimeoutMs = bounds.a2aTimeoutMs;
  if (bounds.a2aCardCheckMs !== undefined) upstreamBounds.a2aCardCheckMs = bounds.a2aCardCheckMs;
  if (bounds.a2aMaxMessageBytes !== undefined) upstreamBounds.a2aMaxMessageBytes = bounds.a2aMaxMessageBytes;
};
