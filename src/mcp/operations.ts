import {
  CLIENT_CAPABILITIES_META_KEY,
  type Client,
  type InputRequiredResult,
  type RequestOptions,
  type StandardSchemaV1,
  withInputRequired,
} from '@modelcontextprotocol/client';
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
import { isRecord } from '../core/json.ts';
import { type McpGatewayDeps, type McpRequestView, routeName, routeUri, type Target } from './aggregate.ts';
import { type GovernedCall, type GovernedMethod, governed } from './govern.ts';
import { type Extra, whileInFlight } from './links.ts';
import { checkedInputRequired } from './input-requests.ts';
import { asMcpError } from './rpc-error.ts';

/**
 * What the gateway does for each client request, whichever generation the client speaks: the
 * 2025 `Server` (mcp/serve.ts) and the 2026-07-28 one (mcp/serve-modern.ts) both call these. Each
 * forwards to the server it routes to with the client's cancellation signal, progress passed back
 * with the client's own token, a bounded time that progress extends, and — for a 2025 client,
 * whose upstream server may ask it things — the request registered as in flight (mcp/links.ts).
 * A 2026-07-28 client is asked things in band (multi round-trip requests): a 2026 upstream's
 * `input_required` answer to `tools/call`, `prompts/get` or `resources/read` is handed back to the
 * client as it came, and the client's retry (`inputResponses`, the upstream's opaque
 * `requestState`) is forwarded unchanged to the server its name or URI routes to — the same one
 * as the first round, under the same profile and caller — as a new governed call.
 */

/** What a 2026-07-28 client's request carries for multi round-trip requests. */
export interface RoundTrip {
  /** The client's declared capabilities (sampling, elicitation, roots), sent on as the request's own. */
  capabilities: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

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
  /** A 2026-07-28 client's side of multi round-trip requests (absent for 2025: its upstream client fulfils them). */
  roundTrip?: RoundTrip;
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

/**
 * A governed method's request to the upstream. To a 2026-07-28 server on behalf of a 2026-07-28
 * client it carries the client's capabilities and retry fields, and an `input_required` answer is
 * returned rather than fulfilled by the gateway's upstream client.
 */
const request = <S extends StandardSchemaV1>(
  client: Client,
  d: Downstream,
  method: GovernedMethod,
  params: Record<string, unknown>,
  schema: S,
  opts: RequestOptions,
): Promise<StandardSchemaV1.InferOutput<S> | InputRequiredResult> => {
  const rt = d.roundTrip;
  if (!rt || client.getProtocolEra() !== 'modern') return client.request({ method, params }, schema, opts);
  const meta = isRecord(params._meta) ? params._meta : {};
  const retried = {
    ...params,
    _meta: { ...meta, [CLIENT_CAPABILITIES_META_KEY]: rt.capabilities },
    ...(rt.inputResponses !== undefined ? { inputResponses: rt.inputResponses } : {}),
    ...(rt.requestState !== undefined ? { requestState: rt.requestState } : {}),
  };
  return client
    .request({ method, params: retried }, withInputRequired(schema), { ...opts, allowInputRequired: true })
    .then(checkedInputRequired);
};

/** The client's params as the record keeps them (a retry's input responses and state with them). */
const sent = (p: Record<string, unknown>, d: Downstream): Record<string, unknown> => {
  const rt = d.roundTrip;
  return {
    ...p,
    ...(rt?.inputResponses !== undefined ? { inputResponses: rt.inputResponses } : {}),
    ...(rt?.requestState !== undefined ? { requestState: rt.requestState } : {}),
  };
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
): Promise<CallToolResult | InputRequiredResult> => {
  const t = await routeName(m, v, 'tools', p.name);
  return governed(call(m, v, d, 'tools/call', t, p.name, p.arguments, sent(p, d)), (input) =>
    forward(m, v, t, d, (client, opts) =>
      request(client, d, 'tools/call', { ...p, name: t.name, ...(input ? { arguments: input } : {}) }, CallToolResultSchema, opts),
    ),
  );
};

export const getPrompt = async (
  m: McpGatewayDeps,
  v: McpRequestView,
  p: GetPromptRequest['params'],
  d: Downstream,
): Promise<GetPromptResult | InputRequiredResult> => {
  const t = await routeName(m, v, 'prompts', p.name);
  return governed(call(m, v, d, 'prompts/get', t, p.name, p.arguments, sent(p, d)), (input) => {
    const args = strings(input);
    return forward(m, v, t, d, (client, opts) =>
      request(client, d, 'prompts/get', { ...p, name: t.name, ...(args ? { arguments: args } : {}) }, GetPromptResultSchema, opts),
    );
  });
};

export const readResource = async (
  m: McpGatewayDeps,
  v: McpRequestView,
  p: ReadResourceRequest['params'],
  d: Downstream,
): Promise<ReadResourceResult | InputRequiredResult> => {
  const t = await routeUri(m, v, p.uri);
  return governed(call(m, v, d, 'resources/read', t, p.uri, undefined, sent(p, d)), () =>
    forward(m, v, t, d, (client, opts) => request(client, d, 'resources/read', { ...p }, ReadResourceResultSchema, opts)),
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
