import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { listPrompts, listResources, listTemplates, listTools, type McpGatewayDeps, type McpRequestView } from './aggregate.ts';
import type { Extra } from './links.ts';
import { callTool, complete, type Downstream, getPrompt, readResource, setLevel, subscription } from './operations.ts';

/**
 * The client-facing side for the 2025 generation (2025-11-25 back to 2025-03-26): the SDK's
 * low-level `Server`, one per HTTP request (state lives in the session id and the upstream pool,
 * never in this object), answering for the profile as if it were one server. What each request
 * does is mcp/operations.ts, shared with the 2026-07-28 side (mcp/serve-modern.ts).
 */

export const SERVER_CAPABILITIES = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  logging: {},
  completions: {},
} as const;

/** One validator for every Server and Client (the SDK builds an Ajv instance per object otherwise). */
export const validator = new AjvJsonSchemaValidator();

const down = (extra: Extra): Downstream => ({
  signal: extra.signal,
  progressToken: extra._meta?.progressToken,
  notify: (n) => extra.sendNotification(n),
  link: extra,
  rpcId: extra.requestId,
});

export const buildServer = (m: McpGatewayDeps, v: McpRequestView, version: string): Server => {
  const server = new Server({ name: 'ai-gateway', version }, { capabilities: SERVER_CAPABILITIES, jsonSchemaValidator: validator });

  server.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => ({ tools: await listTools(m, v, extra.signal) }));
  server.setRequestHandler(ListPromptsRequestSchema, async (_req, extra) => ({ prompts: await listPrompts(m, v, extra.signal) }));
  server.setRequestHandler(ListResourcesRequestSchema, async (_req, extra) => ({ resources: await listResources(m, v, extra.signal) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (_req, extra) => ({
    resourceTemplates: await listTemplates(m, v, extra.signal),
  }));

  server.setRequestHandler(CallToolRequestSchema, (req, extra) => callTool(m, v, req.params, down(extra)));
  server.setRequestHandler(GetPromptRequestSchema, (req, extra) => getPrompt(m, v, req.params, down(extra)));
  server.setRequestHandler(ReadResourceRequestSchema, (req, extra) => readResource(m, v, req.params, down(extra)));
  server.setRequestHandler(SubscribeRequestSchema, (req, extra) => subscription(m, v, 'resources/subscribe', req.params, down(extra)));
  server.setRequestHandler(UnsubscribeRequestSchema, (req, extra) => subscription(m, v, 'resources/unsubscribe', req.params, down(extra)));
  server.setRequestHandler(CompleteRequestSchema, (req, extra) => complete(m, v, req.params, down(extra)));
  server.removeRequestHandler('logging/setLevel');
  server.setRequestHandler(SetLevelRequestSchema, (req) => setLevel(m, v, req.params.level));

  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    for (const entry of v.profile.servers) {
      const s = v.servers.get(entry.serverId);
      if (s) void m.pool.use(v.session, s, v.caps, (client) => client.sendRootsListChanged()).catch(() => undefined);
    }
  });
  return server;
};
