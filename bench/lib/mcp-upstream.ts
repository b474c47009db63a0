/**
 * An SDK-built MCP server over Streamable HTTP in its own process (bench/mcp.ts): prints its URL, runs
 * until killed. `2025-11-25` (the default): the v1 SDK, stateful sessions; `2026-07-28`: the v2 SDK,
 * stateless, refusing 2025 requests.
 */
import { startStreamableServer } from '../../test/support/mcp-servers.ts';
import { startModernServer } from '../../test/support/mcp-servers-v2.ts';

const server = process.argv[2] === '2026-07-28' ? startModernServer('u') : startStreamableServer('u', {});
console.log(server.url);
