/** GATEWAY_MAX_STREAM_EVENT's default: the largest event of an upstream stream held while it arrives. */
export const DEFAULT_MAX_EVENT = 16 * 1024 * 1024;

/**
 * The bounds on what is read from upstreams into memory, set at start-up from the settings:
 * GATEWAY_MAX_UPSTREAM_RESPONSE (a whole answer or error body), GATEWAY_MAX_STREAM_EVENT (one
 * event of a stream), GATEWAY_MCP_MAX_MESSAGE (one message of an MCP server).
 */
export interface UpstreamBounds {
  maxUpstreamResponseBytes: number;
  maxStreamEventBytes: number;
  maxMcpMessageBytes: number;
}

export const upstreamBounds: UpstreamBounds = {
  maxUpstreamResponseBytes: 32 * 1024 * 1024,
  maxStreamEventBytes: DEFAULT_MAX_EVENT,
  maxMcpMessageBytes: 16 * 1024 * 1024,
};

export const setUpstreamBounds = (bounds: Partial<UpstreamBounds>): void => {
  if (bounds.maxUpstreamResponseBytes !== undefined) upstreamBounds.maxUpstreamResponseBytes = bounds.maxUpstreamResponseBytes;
  if (bounds.maxStreamEventBytes !== undefined) upstreamBounds.maxStreamEventBytes = bounds.maxStreamEventBytes;
  if (bounds.maxMcpMessageBytes !== undefined) upstreamBounds.maxMcpMessageBytes = bounds.maxMcpMessageBytes;
};
