import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { type CallToolResult, CallToolResultSchema, ListToolsResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { requestUuid } from '../core/ids.ts';
import type { RequestIds } from '../pipeline/context.ts';
import type { KeySnapshot } from '../propagation/snapshot.ts';
import type { McpGatewayDeps, McpRequestView } from './aggregate.ts';
import type { McpProfileConfig, McpServerConfig } from './config.ts';
import { buildServer, validator } from './serve.ts';

/**
 * A profile served in process, for the gateway's own use (Responses `mcp` tools,
 * data-plane/hosted-mcp): the SDK's `Server` that `/mcp/{profileId}` builds for each HTTP request,
 * connected to an SDK `Client` over the SDK's in-memory transport instead of HTTP. Listing,
 * filters, routing back, governance (guardrails, rate limits) and the request records of each
 * `tools/call` are therefore exactly those of `/mcp/{profileId}`; nothing loops over HTTP.
 *
 * The gateway session is the caller's sessionless one for the profile (`anon:{key}:{profile}`, as
 * a `/mcp` client without a session id gets): upstream sessions are shared with it. The client
 * declares no capabilities, so a server's sampling or elicitation request is answered with an
 * error. Each governed call gets a fresh request id; its client request id is the Responses
 * request's own (X-Client-Request-ID when the client sent one, else its X-Request-ID), so
 * `SearchRequestRecords` links the tool calls to the request that made them.
 */

export interface McpToolSession {
  /** The profile's tools as `/mcp/{profileId}` lists them (prefixed, filtered). */
  listTools(signal?: AbortSignal): Promise<Tool[]>;
  /** One governed `tools/call`; a refusal or an upstream failure rejects with the SDK's McpError. */
  callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** What the data plane asks of the MCP gateway (InferenceDeps.mcpTools). */
export interface McpToolHost {
  open(
    key: KeySnapshot,
    profile: McpProfileConfig,
    servers: ReadonlyMap<string, McpServerConfig>,
    headers: Headers,
    ids: RequestIds,
  ): Promise<McpToolSession>;
}

export const openInProcess = async (
  m: McpGatewayDeps,
  version: string,
  key: KeySnapshot,
  profile: McpProfileConfig,
  servers: ReadonlyMap<string, McpServerConfig>,
  headers: Headers,
  ids: RequestIds,
): Promise<McpToolSession> => {
  const linked = ids.clientRequestId ?? ids.requestId;
  const view: McpRequestView = {
    session: `anon:${key.id}:${profile.id}`,
    caps: {},
    profile,
    servers,
    key,
    headers,
    nextIds: () => ({ requestId: requestUuid(), clientRequestId: linked }),
  };
  const server = buildServer(m, view, version);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'ai-gateway-responses', version }, { capabilities: {}, jsonSchemaValidator: validator });
  await client.connect(clientSide);
  return {
    listTools: async (signal) =>
      (
        await client.request(
          { method: 'tools/list', params: {} },
          ListToolsResultSchema,
          signal ? { signal, timeout: m.listTimeoutMs * 2 } : { timeout: m.listTimeoutMs * 2 },
        )
      ).tools,
    callTool: (name, args, signal) =>
      client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, {
        ...(signal ? { signal } : {}),
        timeout: m.maxCallMs,
      }),
    close: async () => {
      await client.close();
      await server.close();
    },
  };
};
