import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CompleteRequestSchema,
  CompleteResultSchema,
  EmptyResultSchema,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import {
  listPrompts,
  listResources,
  listTemplates,
  listTools,
  type McpGatewayDeps,
  type McpRequestView,
  routeName,
  routeUri,
  type Target,
} from './aggregate.ts';
import { type GovernedCall, type GovernedMethod, governed } from './govern.ts';
import { type Extra, whileInFlight } from './links.ts';

/**
 * The client-facing side: the SDK's low-level `Server`, one per HTTP request (state lives in the
 * session id and the upstream pool, never in this object), answering for the profile as if it
 * were one server. Every request handler forwards to the server it routes to with the client's
 * cancellation signal, progress passed back with the client's own token, a bounded time that
 * progress extends, and the request registered as in flight (mcp/links.ts) so that the server's
 * own requests and notifications reach the client that caused them.
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

const callOptions = (m: McpGatewayDeps, extra: Extra, signal: AbortSignal | undefined): RequestOptions => {
  const token = extra._meta?.progressToken;
  return {
    ...(signal ? { signal } : {}),
    timeout: m.callTimeoutMs,
    resetTimeoutOnProgress: true,
    maxTotalTimeout: m.maxCallMs,
    ...(token !== undefined
      ? {
          onprogress: (p) =>
            void extra
              .sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } })
              .catch(() => undefined),
        }
      : {}),
  };
};

/** Runs `fn` on the target's upstream client with the request registered as in flight to it. */
const forward = <T>(
  m: McpGatewayDeps,
  v: McpRequestView,
  t: Target,
  extra: Extra,
  fn: (client: Client, opts: RequestOptions) => Promise<T>,
): Promise<T> => {
  const end = m.links.begin({ session: v.session, serverId: t.server.serverId }, extra);
  return whileInFlight(extra.signal, (signal) =>
    m.pool.use(v.session, t.server, v.caps, (client) => fn(client, callOptions(m, extra, signal))),
  ).finally(end);
};

const call = (
  m: McpGatewayDeps,
  v: McpRequestView,
  method: GovernedMethod,
  t: Target,
  listed: string,
  input: Record<string, unknown> | undefined,
  params: unknown,
): GovernedCall => ({
  deps: m.deps,
  key: v.key,
  ids: v.nextIds(),
  headers: v.headers,
  profileId: v.profile.profileId,
  method,
  serverId: t.server.serverId,
  target: t.name,
  listed,
  input,
  params,
});

const strings = (o: Record<string, unknown> | undefined): Record<string, string> | undefined =>
  o === undefined
    ? undefined
    : Object.fromEntries(Object.entries(o).map(([k, val]) => [k, typeof val === 'string' ? val : JSON.stringify(val)]));

export const buildServer = (m: McpGatewayDeps, v: McpRequestView, version: string): Server => {
  const server = new Server({ name: 'ai-gateway', version }, { capabilities: SERVER_CAPABILITIES, jsonSchemaValidator: validator });

  server.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => ({ tools: await listTools(m, v, extra.signal) }));
  server.setRequestHandler(ListPromptsRequestSchema, async (_req, extra) => ({ prompts: await listPrompts(m, v, extra.signal) }));
  server.setRequestHandler(ListResourcesRequestSchema, async (_req, extra) => ({ resources: await listResources(m, v, extra.signal) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (_req, extra) => ({
    resourceTemplates: await listTemplates(m, v, extra.signal),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const t = await routeName(m, v, 'tools', req.params.name);
    return governed(call(m, v, 'tools/call', t, req.params.name, req.params.arguments, req.params), (input) =>
      forward(m, v, t, extra, (client, opts) =>
        client.request(
          { method: 'tools/call', params: { ...req.params, name: t.name, ...(input ? { arguments: input } : {}) } },
          CallToolResultSchema,
          opts,
        ),
      ),
    );
  });

  server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
    const t = await routeName(m, v, 'prompts', req.params.name);
    return governed(call(m, v, 'prompts/get', t, req.params.name, req.params.arguments, req.params), (input) => {
      const args = strings(input);
      return forward(m, v, t, extra, (client, opts) =>
        client.request(
          { method: 'prompts/get', params: { ...req.params, name: t.name, ...(args ? { arguments: args } : {}) } },
          GetPromptResultSchema,
          opts,
        ),
      );
    });
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const t = await routeUri(m, v, req.params.uri);
    return governed(call(m, v, 'resources/read', t, req.params.uri, undefined, req.params), () =>
      forward(m, v, t, extra, (client, opts) =>
        client.request({ method: 'resources/read', params: req.params }, ReadResourceResultSchema, opts),
      ),
    );
  });

  server.setRequestHandler(SubscribeRequestSchema, async (req, extra) => {
    const t = await routeUri(m, v, req.params.uri);
    return forward(m, v, t, extra, (client, opts) =>
      client.request({ method: 'resources/subscribe', params: req.params }, EmptyResultSchema, opts),
    );
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req, extra) => {
    const t = await routeUri(m, v, req.params.uri);
    return forward(m, v, t, extra, (client, opts) =>
      client.request({ method: 'resources/unsubscribe', params: req.params }, EmptyResultSchema, opts),
    );
  });

  server.setRequestHandler(CompleteRequestSchema, async (req, extra) => {
    const ref = req.params.ref;
    if (ref.type === 'ref/prompt') {
      const t = await routeName(m, v, 'prompts', ref.name);
      return forward(m, v, t, extra, (client, opts) =>
        client.request(
          { method: 'completion/complete', params: { ...req.params, ref: { ...ref, name: t.name } } },
          CompleteResultSchema,
          opts,
        ),
      );
    }
    const t = await routeUri(m, v, ref.uri);
    return forward(m, v, t, extra, (client, opts) =>
      client.request({ method: 'completion/complete', params: req.params }, CompleteResultSchema, opts),
    );
  });

  // The level applies to every server of the profile that logs (a server that fails to take it is skipped).
  server.removeRequestHandler('logging/setLevel');
  server.setRequestHandler(SetLevelRequestSchema, async (req) => {
    await Promise.all(
      v.profile.servers.map(async (entry) => {
        const s = v.servers.get(entry.serverId);
        if (!s) return;
        await m.pool
          .use(v.session, s, v.caps, async (client) => {
            if (client.getServerCapabilities()?.logging) await client.setLoggingLevel(req.params.level, { timeout: m.listTimeoutMs });
          })
          .catch(() => undefined);
      }),
    );
    return {};
  });

  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    for (const entry of v.profile.servers) {
      const s = v.servers.get(entry.serverId);
      if (s) void m.pool.use(v.session, s, v.caps, (client) => client.sendRootsListChanged()).catch(() => undefined);
    }
  });
  return server;
};
