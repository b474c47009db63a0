import type { Server } from 'bun';
import pkg from '../../package.json' with { type: 'json' };
import { type TlsFiles, tlsOption } from '../core/tls.ts';
import { asGatewayError, GatewayError } from '../core/errors.ts';
import { requestUuid } from '../core/ids.ts';
import { describeError, log } from '../core/log.ts';
import type { ExtraEndpoint } from '../providers/types.ts';
import { handleExtra } from './extra.ts';
import type { InferenceDeps } from './deps.ts';
import { handleInference, handleModels } from './inference.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { isGatewayStream, jsonResponse } from '../pipeline/answer.ts';
import { errorResponse } from './respond.ts';
import type { InferenceRoute } from '../api/inference-endpoints.ts';
import { bodyTooLarge } from '../pipeline/body.ts';
import { handleStoredResponse } from './stored-responses.ts';
import { handleConversations } from './conversations-api.ts';
import { handleCountTokens } from './count-tokens.ts';
import { cohereRoutes, converseRoutes, geminiRoutes } from './format-routes.ts';
import { resourceMetadata } from '../mcp/discovery.ts';
import type { McpGateway } from '../mcp/http.ts';
import type { McpToolHost } from '../mcp/in-process.ts';
import type { McpPinSink } from '../mcp/pins.ts';
import { serveA2a, serveA2aCard, serveA2aRest } from '../a2a/serve.ts';
import {
  batchRoute,
  cancelBatch,
  createBatch,
  deleteFile,
  fileContent,
  getBatch,
  getFile,
  listBatches,
  listFiles,
  uploadFile,
} from './batches.ts';

/**
 * The inference listener. Plain `Bun.serve` with its static route table: the hot path pays for no
 * framework layer (see README, "Architecture"). Every response carries X-Request-ID.
 */

const idsOf = (req: Request): RequestIds => {
  const client = req.headers.get('x-client-request-id') ?? req.headers.get('x-request-id') ?? undefined;
  return { requestId: requestUuid(), clientRequestId: client === undefined ? undefined : client.slice(0, 256) };
};

const unsupported = (ids: RequestIds): Response =>
  errorResponse(
    new GatewayError({
      kind: 'unsupported_endpoint',
      message: 'Unsupported endpoint: speech-to-text (/v1/audio/transcriptions) is not supported by this gateway.',
    }),
    ids,
  );

export const unknownEndpoint = (req: Request, ids: RequestIds): Response =>
  errorResponse(
    new GatewayError({
      kind: 'not_found',
      errorCode: 'unknown_endpoint',
      message: `Unknown endpoint: ${req.method} ${new URL(req.url).pathname}`,
    }),
    ids,
  );

const methodNotAllowed = (req: Request, ids: RequestIds): Response =>
  errorResponse(
    new GatewayError({
      kind: 'invalid_request',
      status: 405,
      errorCode: 'method_not_allowed',
      message: `Method ${req.method} is not allowed on ${new URL(req.url).pathname}.`,
    }),
    ids,
  );

export interface DataPlaneServerOptions {
  host: string;
  port: number;
  /** GATEWAY_TLS_*: serve HTTPS. */
  tls?: TlsFiles;
  deps: InferenceDeps;
  /** GATEWAY_MAX_BODY (checked on Content-Length here; counted by the body reader) and the idle time-out of kept-alive connections. */
  limits: { maxBodyBytes: number; idleTimeoutSeconds: number };
  /** Health: true once migrations ran and a snapshot is being served. */
  ready: () => boolean;
  readiness: () => Record<string, unknown>;
  /** The MCP gateway serving `/mcp/{profileId}` (one is made from `deps` when absent). */
  mcp?: McpGateway;
  /** The gateway's version, as the MCP gateway tells clients (`serverInfo.version`); default: the product's (package.json). */
  version?: string;
  /** Where what is listed of pinned MCP servers is reported (the management plane). */
  mcpPins?: McpPinSink;
  /** GATEWAY_OIDC_ISSUER: named as the authorization server in the MCP profiles' RFC 9728 metadata. */
  oidcIssuer?: string;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

type Handler = (req: Request, ids: RequestIds) => Response | Promise<Response>;

/**
 * Every route runs in a guard: ids, the body-size check on Content-Length, the error envelope for
 * anything thrown, and the connection's idle time-out. Bun's per-connection timer is switched off
 * while a request is handled (a long upstream call or a quiet stream is not a slow client; the body
 * has its own deadline, the upstream its own time-outs) and armed again once the response is
 * handed over — for a stream, when the stream ends — so idle kept-alive connections are closed.
 */
const guardFor =
  (idleSeconds: number, maxBodyBytes: number) =>
  (handler: Handler) =>
  (req: Request, server: Server<undefined>): Response | Promise<Response> => {
    const ids = idsOf(req);
    server.timeout(req, 0);
    let rearmed = false;
    const rearm = (): void => {
      if (rearmed) return;
      rearmed = true;
      try {
        server.timeout(req, idleSeconds);
      } catch {
        // The connection is already gone.
      }
    };
    ids.streamEnded = rearm;
    const failed = (e: unknown): Response => {
      log.error('unhandled error in the inference listener', { requestId: ids.requestId, error: describeError(e) });
      return errorResponse(asGatewayError(e), ids);
    };
    const handed = (res: Response): Response => {
      if (!isGatewayStream(res)) rearm();
      return res;
    };
    let out: Response | Promise<Response>;
    try {
      const declared = req.headers.get('content-length');
      out = declared !== null && Number(declared) > maxBodyBytes ? errorResponse(bodyTooLarge(maxBodyBytes), ids) : handler(req, ids);
    } catch (e) {
      out = failed(e);
    }
    // No async frame of its own: the handler's promise is chained.
    return out instanceof Promise ? out.then(handed, (e: unknown) => handed(failed(e))) : handed(out);
  };

/** What the routes need of the MCP gateway. */
type McpServing = Pick<McpGateway, 'handle'> & McpToolHost;

/**
 * The MCP gateway, loaded on its first use (an `/mcp/…` call, or a Responses `mcp` tool naming a
 * profile): a data plane that serves no MCP loads none of the MCP SDK (its validators and schemas
 * are most of a data plane's module memory).
 */
const lazyMcp = (make: () => Promise<McpGateway>): McpServing => {
  let loading: Promise<McpGateway> | undefined;
  const get = () => (loading ??= make());
  return {
    handle: async (req, ids, profileId) => (await get()).handle(req, ids, profileId),
    open: async (key, profile, servers, headers, ids) => (await get()).open(key, profile, servers, headers, ids),
  };
};

export const buildInferenceRoutes = (opts: DataPlaneServerOptions) => {
  const mcp: McpServing =
    opts.mcp ??
    lazyMcp(async () => {
      const { McpGateway: Gateway } = await import('../mcp/http.ts');
      return new Gateway({
        deps: opts.deps,
        version: opts.version ?? pkg.version,
        loopbackOnly: LOOPBACK_HOSTS.has(opts.host),
        ...(opts.mcpPins ? { pins: opts.mcpPins } : {}),
      });
    });
  // Responses `mcp` tools naming one of the caller's profiles run through this gateway in process.
  const deps: InferenceDeps = opts.deps.mcpTools ? opts.deps : { ...opts.deps, mcpTools: mcp };
  const guard = guardFor(opts.limits.idleTimeoutSeconds, opts.limits.maxBodyBytes);
  const post = (handler: Handler) => ({
    POST: guard(handler),
    GET: guard(methodNotAllowed),
  });
  const stored: Handler = (req, ids) => handleStoredResponse(deps, req, ids);
  const conversations: Handler = (req, ids) => handleConversations(deps, req, ids);
  const extra = (endpoint: ExtraEndpoint, path: string) => post((req, ids) => handleExtra(deps, endpoint, path, req, ids));
  // Uploads are bounded by GATEWAY_FILE_MAX (plus room for the multipart framing), not GATEWAY_MAX_BODY.
  const uploadGuard = guardFor(
    opts.limits.idleTimeoutSeconds,
    deps.batches ? deps.batches.maxFileBytes + 65_536 : opts.limits.maxBodyBytes,
  );
  const files = (path: string, h: Parameters<typeof batchRoute>[1]) => {
    const route = batchRoute(path, h);
    return guard((req, ids) => route(deps, req, ids));
  };
  const upload = batchRoute('/v1/files', uploadFile);
  const mcpHandler = guard((req, ids) => mcp.handle(req, ids, decodeURIComponent(new URL(req.url).pathname.slice('/mcp/'.length))));
  const agentOf = (req: Request): string => decodeURIComponent(new URL(req.url).pathname.split('/')[2] ?? '');
  return {
    '/a2a/:agentId': { POST: guard((req, ids) => serveA2a(deps, req, ids, agentOf(req))), GET: guard(methodNotAllowed) },
    '/a2a/:agentId/v1/*': {
      POST: guard((req, ids) => serveA2aRest(deps, req, ids, agentOf(req))),
      GET: guard((req, ids) => serveA2aRest(deps, req, ids, agentOf(req))),
    },
    '/a2a/:agentId/.well-known/agent-card.json': { GET: guard((req, ids) => serveA2aCard(deps, req, ids, agentOf(req))) },
    '/mcp/:profileId': { POST: mcpHandler, GET: mcpHandler, DELETE: mcpHandler },
    '/.well-known/oauth-protected-resource/mcp/:profileId': {
      GET: guard((req, ids) =>
        resourceMetadata(
          req,
          ids,
          decodeURIComponent(new URL(req.url).pathname.split('/').pop() ?? ''),
          opts.deps.snapshots.current?.publicUrl,
          opts.oidcIssuer,
        ),
      ),
      POST: guard(methodNotAllowed),
    },
    '/v1/chat/completions': post((req, ids) => handleInference(deps, 'chat', req, ids)),
    '/v1/responses': post((req, ids) => handleInference(deps, 'responses', req, ids)),
    '/v1/messages': post((req, ids) => handleInference(deps, 'messages', req, ids)),
    '/v1/messages/count_tokens': post((req, ids) => handleCountTokens(deps, 'messages', req, ids)),
    '/v1/responses/input_tokens': post((req, ids) => handleCountTokens(deps, 'responses', req, ids)),
    '/v1/responses/:id': { GET: guard(stored), DELETE: guard(stored), POST: guard(methodNotAllowed) },
    '/v1/responses/:id/input_items': { GET: guard(stored), POST: guard(methodNotAllowed) },
    '/v1/responses/:id/cancel': { POST: guard(stored), GET: guard(methodNotAllowed) },
    '/v1/conversations': { POST: guard(conversations), GET: guard(methodNotAllowed) },
    '/v1/conversations/:id': { GET: guard(conversations), POST: guard(conversations), DELETE: guard(conversations) },
    '/v1/conversations/:id/items': { GET: guard(conversations), POST: guard(conversations) },
    '/v1/conversations/:id/items/:itemId': { GET: guard(conversations), DELETE: guard(conversations), POST: guard(methodNotAllowed) },
    ...geminiRoutes(deps, post, guard),
    ...converseRoutes(deps, post),
    ...cohereRoutes(deps, post),
    '/v1/models': { GET: guard((req, ids) => handleModels(deps, req, ids)), POST: guard(methodNotAllowed) },
    '/v1/files': { GET: files('/v1/files', listFiles), POST: uploadGuard((req, ids) => upload(deps, req, ids)) },
    '/v1/files/:id': { GET: files('/v1/files/{id}', getFile), DELETE: files('/v1/files/{id}', deleteFile), POST: guard(methodNotAllowed) },
    '/v1/files/:id/content': { GET: files('/v1/files/{id}/content', fileContent), POST: guard(methodNotAllowed) },
    '/v1/batches': { GET: files('/v1/batches', listBatches), POST: files('/v1/batches', createBatch) },
    '/v1/batches/:id': { GET: files('/v1/batches/{id}', getBatch), POST: guard(methodNotAllowed) },
    '/v1/batches/:id/cancel': { POST: files('/v1/batches/{id}/cancel', cancelBatch), GET: guard(methodNotAllowed) },
    '/v1/audio/transcriptions': { POST: guard((_r, ids) => unsupported(ids)), GET: guard((_r, ids) => unsupported(ids)) },
    '/v1/completions': extra('completions', '/v1/completions'),
    '/v1/embeddings': extra('embeddings', '/v1/embeddings'),
    '/v1/images/generations': extra('images', '/v1/images/generations'),
    '/v1/images': extra('images', '/v1/images'),
    '/v1/audio/speech': extra('speech', '/v1/audio/speech'),
    '/v1/rerank': extra('rerank', '/v1/rerank'),
    '/healthz': {
      GET: guard((_req, ids) =>
        opts.ready() ? jsonResponse(200, '{"status":"ok"}', ids) : jsonResponse(503, '{"status":"starting"}', ids),
      ),
    },
    '/readyz': {
      GET: guard((_req, ids) =>
        jsonResponse(opts.ready() ? 200 : 503, JSON.stringify({ status: opts.ready() ? 'ok' : 'starting', ...opts.readiness() }), ids),
      ),
    },
  } as const satisfies Record<InferenceRoute, unknown>;
};

/**
 * Bun refuses bodies over `maxRequestBodySize` itself, with an empty 413; it is set far above
 * GATEWAY_MAX_BODY so that the guard and the body reader refuse first, in the error format. Bun's
 * `idleTimeout` closes kept-alive connections left idle; request headers must arrive within Bun's
 * own fixed header deadline (about 10 s) whatever the value.
 */
export const startDataPlaneServer = (opts: DataPlaneServerOptions): Server<undefined> => {
  const guard = guardFor(opts.limits.idleTimeoutSeconds, opts.limits.maxBodyBytes);
  return Bun.serve({
    hostname: opts.host,
    port: opts.port,
    ...tlsOption(opts.tls),
    idleTimeout: opts.limits.idleTimeoutSeconds,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    routes: buildInferenceRoutes(opts),
    fetch: guard(unknownEndpoint),
    error: (e) => errorResponse(asGatewayError(e), { requestId: requestUuid(), clientRequestId: undefined }),
  });
};
