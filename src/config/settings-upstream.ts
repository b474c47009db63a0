import { duration, integer, type Setting, size } from './setting-kinds.ts';

/**
 * The settings of the MCP and A2A gateways' upstream calls (declared here, spread into SETTINGS in
 * settings.ts at this place of the declaration order).
 */
export const AGENT_AND_TOOL_SETTINGS = {
  GATEWAY_MCP_MAX_MESSAGE_BYTES: size({
    default: '8MiB',
    min: '64KiB',
    description:
      'largest message read from an upstream MCP server (a JSON answer, or one SSE event: a tool result, a list page); larger → the read is cancelled and the call fails with `upstream_response_too_large`',
  }),
  GATEWAY_MCP_MAX_LIST_ITEMS: integer({
    default: '5000',
    min: 1,
    max: 1_000_000,
    unit: 'items',
    description:
      "most items one MCP server's list (tools, prompts, resources, templates) may hold over all its pages; past it that server is left out of the list (logged) and its names are not callable",
  }),
  GATEWAY_MCP_SESSION_IDLE: duration({
    default: '24h',
    description:
      'an MCP 2025-generation session without a request for this long is refused (404: the client initializes again); shared by every replica through REDIS_URL, else each replica enforces what it saw',
  }),
  GATEWAY_A2A_TIMEOUT: duration({
    default: '60s',
    description:
      "how long an A2A agent may take to answer a non-streamed call, or to start the answer of a streamed one; longer → the call is cancelled, 504 `upstream_timeout` in A2A's JSON-RPC error shape",
  }),
  GATEWAY_A2A_CARD_CHECK: duration({
    default: '30s',
    description:
      "how often a data plane fetches a served A2A agent's card again to compare it with its pin (`cardSha256`); a changed card stops the agent (503 `a2a_agent_drifted`) until `RefreshA2aAgent`",
  }),
  GATEWAY_A2A_MAX_MESSAGE: size({
    default: '8MiB',
    min: '64KiB',
    description:
      'largest answer read from an A2A agent (a JSON-RPC answer, or one SSE event of a stream); larger → the read is cancelled and the call fails with 502 `bad_gateway` (a stream: `a2a_upstream_error` as its last event)',
  }),
} as const satisfies Record<string, Setting<unknown>>;
