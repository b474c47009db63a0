/** An SDK-built MCP server over Streamable HTTP in its own process (bench/mcp.ts): prints its URL, runs until killed. */
import { startStreamableServer } from '../../test/support/mcp-servers.ts';

const server = startStreamableServer('u', {});
console.log(server.url);
