import type { Client, RequestOptions } from '@modelcontextprotocol/client';
import {
  type CallToolRequest,
  type CallToolResult,
  CallToolResultSchema,
  type CompleteRequest,
  type CompleteResult,
  CompleteResultSchema,
  EmptyResultSchema,
  type GetPromptRequest,
  type GetPromptResult,
  GetPromptResultSchema,
  type LoggingLevel,
  type ReadResourceRequest,
  type ReadResourceResult,
  ReadResourceResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type McpGatewayDeps, type McpRequestView, routeName, routeUri, type Target } from './aggregate.ts';
import { type GovernedCall, type GovernedMethod, governed } from './govern.ts';
import { type Extra, whileInFlight } from './links.ts';
import { asMcpError } from './rpc-error.ts';

/**
 * What the gateway does for each client request, whichever generation the client speaks: the
 * 2025 `Server` (mcp/serve.ts) and the 2026-07-28 one (mcp/serve-modern.ts) both call these. Each
 * forwards to the server it routes to with the client's cancellation signal, progress passed back
 * with the client's own token, a bounded time that progress extends, and — for a 2025 client,
 * whose upstream server may ask it things — the request registered as in flight (mcp/links.ts).
 */

/** The client's side of one request. */
export interface Downstream {
  signal: AbortSignal | undefined;
  progressToken: string | number | undefined;
  notify(n: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }): Promise<void>;
  /** A 2025 client's request (the upstream server's own requests reach the client through it); absent for 2026-07-28. */
  link?: Extra;
  /** The JSON-RPC id of the client's request. */
  rpcId?: string | number;
}

const callOptions = (m: McpGatewayDeps, d: Downstream, signal: AbortSignal | undefined): RequestOptions => {
  const token = d.progressToken;
  return {
    ...(signal ? { signal } : {}),
    timeout: m.callTimeoutMs,
    resetTimeoutOnProgress: true,
    maxTotalTimeout: m.maxCallMs,
    ...(token !== undefined
      ? {
          onprogress: (p) =>
            void d
              .notify({
                method: 'notifications/progress',
                params: {
                  progressToken: token,
                  progress: p.progress,
                  ...(p.total !== undefined ? { total: p.total } : {}),
                  ...(p.message !== undefined ? { message: p.message } : {}),
                },
              })
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
  d: Downstream,
  fn: (client: Client, opts: RequestOptions) => Promise<T>,
): Promise<T> => {
  const end = d.link ? m.links.begin({ session: v.session, serverId: t.server.serverId }, d.link) : () => undefined;
  return whileInFlight(d.signal, (signal) => m.pool.use(v.session, t.server, v.caps, (client) => fn(client, callOptions(m, d, signal))))
    .catch((e: unknown) => {
      throw asMcpError(e) ?? e;
    })
    .finally(end);
};

const call = (
  m: McpGatewayDeps,
  v: McpRequestView,
  d: Downstream,
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
  protocol: {
    ...(v.protocolVersion !== undefined ? { version: v.protocolVersion } : {}),
    ...(v.sessionId !== undefined ? { sessionId: v.sessionId } : {}),
    ...(d.rpcId !== undefined ? { rpcId: String(d.rpcId) } : {}),
  },
});

const strings = (o: Record<string, unknown> | undefined): Record<string, string> | undefined =>
  o === undefined
    ? undefined
    : Object.fromEntries(Object.entries(o).map(([k, val]) => [k, typeof val === 'string' ? val : JSON.stringify(val)]));

export const callTool = async (
  m: McpGatewayDeps,
  v: McpRequestView,
  p: CallToolRequest['params'],
  d: Downstream,
): Promise<CallToolResult> => {
  const t = await routeName(m, v, 'tools', p.name);
  return governed(call(m, v, d, 'tools/call', t, p.name, p.arguments, p), (input) =>
    forward(m, v, t, d, (client, opts) =>
      client.request(
        { method: 'tools/call', params: { ...p, name: t.name, ...(input ? { arguments: input } : {}) } },
        CallToolResultSchema,
        opts,
      ),
    ),
  );
};

export const getPrompt = async (
  m: McpGatewayDeps,
  v: McpRequestView,
  p: GetPromptRequest['params'],
  d: Downstream,
): Promise<GetPromptResult> => {
  const t = await routeName(m, v, 'prompts', p.name);
  return governed(call(m, v, d, 'prompts/get', t, p.name, p.arguments, p), (input) => {
    const args = strings(input);
    return forward(m, v, t, d, (client, opts) =>
      client.request(
        { method: 'prompts/get', params: { ...p, name: t.name, ...(args ? { arguments: args } : {}) } },
        GetPromptResultSchema,
        opts,
      ),
    );
  });
};

export const readResource = async (
  m: McpGatewayDeps,
  v: McpRequestView,
  p: ReadResourceRequest['params'],
  d: Downstream,
): Promise<ReadResourceResult> => {
  const t = await routeUri(m, v, p.uri);
  return governed(call(m, v, d, 'resources/read', t, p.uri, undefined, p), () =>
    forward(m, v, t, d, (client, opts) => client.request({ method: 'resources/read', params: p }, ReadResourceResultSchema, opts)),
  );
};

export const subscription = async (
  m: McpGatewayDeps,
  v: McpRequestView,
  method: 'resources/subscribe' | 'resources/unsubscribe',
  p: { uri: string },
  d: Downstream,
): Promise<Record<string, never>> => {
  const t = await routeUri(m, v, p.uri);
  await forward(m, v, t, d, (client, opts) => client.request({ method, params: p }, EmptyResultSchema, opts));
  return {};
};

export const complete = async (
  m: McpGatewayDeps,
  v: McpRequestView,
  p: CompleteRequest['params'],
  d: Downstream,
): Promise<CompleteResult> => {
  const ref = p.ref;
  if (ref.type === 'ref/prompt') {
    const t = await routeName(m, v, 'prompts', ref.name);
    return forward(m, v, t, d, (client, opts) =>
      client.request({ method: 'completion/complete', params: { ...p, ref: { ...ref, name: t.name } } }, CompleteResultSchema, opts),
    );
  }
  const t = await routeUri(m, v, ref.uri);
  return forward(m, v, t, d, (client, opts) => client.request({ method: 'completion/complete', params: p }, CompleteResultSchema, opts));
};

/** The level applies to every server of the profile that logs (a server that fails to take it is skipped). */
export const setLevel = async (m: McpGatewayDeps, v: McpRequestView, level: LoggingLevel): Promise<Record<string, never>> => {
  await Promise.all(
    v.profile.servers.map(async (entry) => {
      const s = v.servers.get(entry.serverId);
      if (!s) return;
      await m.pool
        .use(v.session, s, v.caps, async (client) => {
          if (client.getServerCapabilities()?.logging) await client.setLoggingLevel(level, { timeout: m.listTimeoutMs });
        })
        .catch(() => undefined);
    }),
  );
  return {};
};
