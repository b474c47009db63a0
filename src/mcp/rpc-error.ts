import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * The upstream side speaks through the v2 SDK client (its `ProtocolError` for a server's JSON-RPC
 * error, `SdkError` for its own time-outs and closed connections), the 2025 client-facing side
 * through the v1 `Server`, which answers any error with a numeric `code` as that JSON-RPC error.
 * One error type inside the MCP gateway: the v1 `McpError`, its message as the server wrote it.
 */
export const asMcpError = (e: unknown): McpError | undefined => {
  if (e instanceof McpError) return e;
  if (e instanceof ProtocolError) {
    const err = new McpError(e.code, e.message.replace(/^MCP error -?\d+: /, ''), e.data);
    return err;
  }
  if (e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout) return new McpError(ErrorCode.RequestTimeout, e.message);
  if (e instanceof SdkError && (e.code === SdkErrorCode.ConnectionClosed || e.code === SdkErrorCode.NotConnected))
    return new McpError(ErrorCode.ConnectionClosed, e.message);
  return undefined;
};
