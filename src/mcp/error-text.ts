/**
 * The text of an MCP error without the SDK's prefix. The SDK's McpError message is
 * `MCP error <code>: <text>`; its server sends `error.message` as is on the wire, and its client
 * prefixes what it receives again, so an error relayed through the gateway read
 * `MCP error -32050: MCP error -32050: …` (or three times). The gateway sends, and shows in a hosted
 * `mcp_call.error`, the text alone; the code travels in `error.code`. Free of the SDK (the hosted-MCP
 * path uses it without loading the SDK).
 */
const PREFIX = /^(?:MCP error -?\d+: )+/;

export const bareMcpMessage = (message: string): string => message.replace(PREFIX, '');
