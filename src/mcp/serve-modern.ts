import {
  createMcpHandler,
  type InputRequiredResult,
  inputRequired,
  isInputRequiredResult,
  type McpHttpHandler,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerContext,
  type SpecTypeName,
  type SpecTypes,
  specTypeSchemas,
} from '@modelcontextprotocol/server';
import { describeError, log } from '../core/log.ts';
import { listPrompts, listResources, listTemplates, listTools, type McpGatewayDeps, type McpRequestView } from './aggregate.ts';
import { callTool, complete, type Downstream, getPrompt, readResource, setLevel, subscription } from './operations.ts';
import { SERVER_CAPABILITIES } from './serve.ts';
import { asked, upstreamCapabilities } from './upstream.ts';

/**
 * The client-facing side for MCP 2026-07-28 (contract §7.1): stateless, every request carries its
 * own `_meta` envelope, `server/discover` instead of `initialize`, no server-initiated requests and
 * no `GET`/`DELETE` (405). Served by the v2 SDK's `createMcpHandler` with a v2 `Server` per request
 * whose handlers are the same operations the 2025 side runs (mcp/operations.ts), so a 2026 client
 * reaches 2025 and 2026 upstream servers alike (the upstream client negotiates, mcp/upstream.ts).
 * A server's request for the client's input comes back in band (`input_required`, answered by the
 * client's retry: mcp/operations.ts), never as a server-initiated request.
 */

/** A result of the shared operations (2025 types) as the v2 SDK's type of it, checked by its own schema. */
const as = async <K extends SpecTypeName>(name: K, value: Promise<unknown>): Promise<SpecTypes[K]> => {
  const checked = await specTypeSchemas[name]['~standard'].validate(await value);
  if (checked.issues) throw new ProtocolError(ProtocolErrorCode.InternalError, `The gateway could not form a valid ${name}.`);
  return checked.value;
};

/**
 * A governed method's answer: complete (checked by its schema), or the upstream's request for the
 * client's input, handed on as it came (its input requests checked in the governed call), its
 * `requestState` unchanged.
 */
const answer = async <K extends 'CallToolResult' | 'GetPromptResult' | 'ReadResourceResult'>(
  name: K,
  value: Promise<unknown>,
): Promise<SpecTypes[K] | InputRequiredResult> => {
  const got = await value;
  if (!isInputRequiredResult(got)) return as(name, Promise.resolve(got));
  // Its input requests were checked inside the governed call (mcp/input-requests.ts).
  return inputRequired({
    ...(got.inputRequests && Object.keys(got.inputRequests).length > 0 ? { inputRequests: got.inputRequests } : {}),
    ...(got.requestState !== undefined ? { requestState: got.requestState } : {}),
  });
};

const down = (ctx: ServerContext, server?: Server): Downstream => {
  const state = ctx.mcpReq.requestState<unknown>();
  return {
    signal: ctx.mcpReq.signal,
    progressToken: ctx.mcpReq._meta?.progressToken,
    notify: (n) => ctx.mcpReq.notify(n),
    rpcId: ctx.mcpReq.id,
    ...(server
      ? {
          roundTrip: {
            capabilities: asked(upstreamCapabilities({ ...server.getClientCapabilities() })) ?? {},
            ...(ctx.mcpReq.inputResponses !== undefined ? { inputResponses: ctx.mcpReq.inputResponses } : {}),
            ...(typeof state === 'string' ? { requestState: state } : {}),
          },
        }
      : {}),
  };
};

export const buildModernServer = (m: McpGatewayDeps, v: McpRequestView, version: string): Server => {
  const server = new Server({ name: 'ai-gateway', version }, { capabilities: SERVER_CAPABILITIES });
  server.setRequestHandler('tools/list', (_req, ctx) =>
    as(
      'ListToolsResult',
      listTools(m, v, ctx.mcpReq.signal).then((tools) => ({ tools })),
    ),
  );
  server.setRequestHandler('prompts/list', (_req, ctx) =>
    as(
      'ListPromptsResult',
      listPrompts(m, v, ctx.mcpReq.signal).then((prompts) => ({ prompts })),
    ),
  );
  server.setRequestHandler('resources/list', (_req, ctx) =>
    as(
      'ListResourcesResult',
      listResources(m, v, ctx.mcpReq.signal).then((resources) => ({ resources })),
    ),
  );
  server.setRequestHandler('resources/templates/list', (_req, ctx) =>
    as(
      'ListResourceTemplatesResult',
      listTemplates(m, v, ctx.mcpReq.signal).then((resourceTemplates) => ({ resourceTemplates })),
    ),
  );
  server.setRequestHandler('tools/call', (req, ctx) => answer('CallToolResult', callTool(m, v, req.params, down(ctx, server))));
  server.setRequestHandler('prompts/get', (req, ctx) => answer('GetPromptResult', getPrompt(m, v, req.params, down(ctx, server))));
  server.setRequestHandler('resources/read', (req, ctx) => answer('ReadResourceResult', readResource(m, v, req.params, down(ctx, server))));
  server.setRequestHandler('resources/subscribe', (req, ctx) => subscription(m, v, 'resources/subscribe', req.params, down(ctx)));
  server.setRequestHandler('resources/unsubscribe', (req, ctx) => subscription(m, v, 'resources/unsubscribe', req.params, down(ctx)));
  server.setRequestHandler('completion/complete', (req, ctx) => as('CompleteResult', complete(m, v, req.params, down(ctx))));
  server.setRequestHandler('logging/setLevel', (req) => setLevel(m, v, req.params.level));
  return server;
};

/** One handler for the gateway; each request's view is found by its `Request` object. */
export class ModernSide {
  private readonly views = new WeakMap<Request, McpRequestView>();
  private readonly handler: McpHttpHandler;

  constructor(m: McpGatewayDeps, version: string, keepAliveMs: number | undefined) {
    this.handler = createMcpHandler(
      (ctx) => {
        const v = ctx.requestInfo ? this.views.get(ctx.requestInfo) : undefined;
        if (!v) throw new Error('MCP request served without its view');
        return buildModernServer(m, v, version);
      },
      {
        legacy: 'reject',
        ...(keepAliveMs !== undefined ? { keepAliveMs } : {}),
        onerror: (e) => log.debug('mcp gateway protocol error (2026-07-28)', { error: describeError(e) }),
      },
    );
  }

  serve(req: Request, body: unknown, v: McpRequestView): Promise<Response> {
    this.views.set(req, v);
    return this.handler.fetch(req, body === undefined ? {} : { parsedBody: body });
  }

  close(): Promise<void> {
    return this.handler.close();
  }
}
