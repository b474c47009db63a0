import { isLegacyRequest } from '@modelcontextprotocol/server';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { asGatewayError, GatewayError } from '../core/errors.ts';
import { requestUuid } from '../core/ids.ts';
import { describeError, log } from '../core/log.ts';
import { readJsonBody } from '../pipeline/body.ts';
import { callerOf } from '../pipeline/index.ts';
import type { PipelineDeps } from '../pipeline/deps.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { idHeaders, markGatewayStream } from '../pipeline/answer.ts';
import type { ConfigSnapshot, KeySnapshot } from '../propagation/snapshot.ts';
import { PinBook, type McpPinSink } from './pins.ts';
import type { McpGatewayDeps, McpRequestView } from './aggregate.ts';
import type { McpProfileConfig, McpServerConfig } from './config.ts';
import { serversFor } from './credentials.ts';
import { challenge } from './discovery.ts';
import { type McpToolHost, type McpToolSession, openInProcess } from './in-process.ts';
import { Links } from './links.ts';
import { SessionLiveness } from './liveness.ts';
import { deliverReply, isReply, RelayTransport } from './relay.ts';
import { buildServer } from './serve.ts';
import { ModernSide } from './serve-modern.ts';
import { newNonce, openSessionId, type SessionState, sessionIdOf } from './session.ts';
import { upstreamBounds } from '../core/upstream-bounds.ts';
import { DEFAULT_UPSTREAM_LIMITS, MODERN_SESSION, UpstreamPool, type UpstreamLimits, upstreamCapabilities } from './upstream.ts';

/**
 * `/mcp/{profileId}` on the inference listener (contract §7): MCP Streamable HTTP — `POST`
 * answered as SSE (or 202 for notifications), `GET` the session's server→client stream, `DELETE`
 * the session. The caller is an API key or user token of the profile's project, checked on the
 * snapshot on every request (so a revoked key or a removed profile stops within the propagation
 * time); missing or bad → 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728,
 * mcp/discovery.ts), another project's → 404.
 *
 * Nothing is sticky: every request gets its own SDK `Server` and stateless transport; the session
 * id carries the session (mcp/session.ts), upstream sessions are opened lazily per replica
 * (mcp/upstream.ts). A request without a session id is served too (a sessionless client).
 */

export interface McpGatewayOptions {
  deps: PipelineDeps;
  version: string;
  /** The listener is bound to a loopback address: only loopback `Host`/`Origin` are served (DNS-rebinding protection). */
  loopbackOnly?: boolean;
  listTimeoutMs?: number;
  callTimeoutMs?: number;
  maxCallMs?: number;
  upstream?: Partial<UpstreamLimits>;
  /** GATEWAY_MCP_SESSION_IDLE (ms) when given here. */
  sessionIdleMs?: number;
  /** Where what is listed of pinned servers is reported (mcp/pins.ts); absent: pins come only from the document. */
  pins?: McpPinSink;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
const hostName = (host: string): string => {
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return '';
  }
};

const rpcError = (status: number, code: number, message: string, ids: RequestIds, extra?: Record<string, string>): Response =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...idHeaders(ids), ...extra },
  });

const unauthorized = (message: string, ids: RequestIds, wwwAuthenticate: string): Response =>
  rpcError(401, -32001, message, ids, { 'www-authenticate': wwwAuthenticate });

/** The presented credential (what the session id is signed with); the data plane's auth decides whether it is valid. */
const credentialOf = (headers: Headers): string | undefined => {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '');
  return m?.[1] ?? headers.get('x-api-key') ?? undefined;
};

/** A protocol revision of the stateless generation (2026-07-28 and later). */
const MODERN = /^20(2[6-9]|[3-9]\d)-\d\d-\d\d$/;

const negotiated = (requested: string): string => (SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION);

/** The response with its body watched: `onEnd` runs once when the stream ends or the client goes away. */
const watched = (res: Response, headers: Record<string, string>, onEnd: () => void): Response => {
  const all = new Headers(res.headers);
  for (const [k, v] of Object.entries(headers)) all.set(k, v);
  const source = res.body;
  if (!source) {
    onEnd();
    return new Response(null, { status: res.status, headers: all });
  }
  const reader = source.getReader();
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      try {
        const r = await reader.read();
        if (r.done) {
          c.close();
          end();
        } else c.enqueue(r.value);
      } catch (e) {
        c.error(e);
        end();
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  return markGatewayStream(new Response(body, { status: res.status, headers: all }));
};

export class McpGateway implements McpToolHost {
  readonly links = new Links();
  readonly pool: UpstreamPool;
  private readonly m: McpGatewayDeps;
  private readonly modern: ModernSide;
  private readonly liveness: SessionLiveness;

  constructor(private readonly opts: McpGatewayOptions) {
    this.pool = new UpstreamPool(this.links, { ...DEFAULT_UPSTREAM_LIMITS, ...opts.upstream }, opts.version);
    this.m = {
      deps: opts.deps,
      pool: this.pool,
      links: this.links,
      pins: new PinBook(opts.pins),
      listTimeoutMs: opts.listTimeoutMs ?? 10_000,
      callTimeoutMs: opts.callTimeoutMs ?? 60_000,
      maxCallMs: opts.maxCallMs ?? 10 * 60_000,
    };
    this.modern = new ModernSide(this.m, opts.version, opts.deps.keepAliveMs);
    this.liveness = new SessionLiveness(opts.deps.counters, () => opts.sessionIdleMs ?? upstreamBounds.mcpSessionIdleMs);
  }

  close(): void {
    this.pool.close();
    void this.modern.close().catch(() => undefined);
  }

  /** The profile served in process (mcp/in-process.ts): Responses `mcp` tools run through it. */
  open(
    key: KeySnapshot,
    profile: McpProfileConfig,
    servers: ReadonlyMap<string, McpServerConfig>,
    headers: Headers,
    ids: RequestIds,
  ): Promise<McpToolSession> {
    return openInProcess(this.m, this.opts.version, key, profile, servers, headers, ids);
  }

  /** The caller and the profile, on the snapshot (once more after a catch-up, for a change committed moments ago). */
  private resolve(req: Request, profileId: string): Promise<{ key: KeySnapshot; profile: McpProfileConfig; snapshot: ConfigSnapshot }> {
    return callerOf(
      this.opts.deps,
      req.headers,
      (key, snapshot) => {
        const profile = snapshot.mcp.profiles.get(key.project.id)?.get(profileId);
        if (!profile)
          throw new GatewayError({
            kind: 'not_found',
            errorCode: 'mcp_profile_not_found',
            message: `MCP profile '${profileId}' not found.`,
          });
        return { key, profile, snapshot };
      },
      (e) => e.errorCode === 'mcp_profile_not_found',
    );
  }

  private view(
    session: string,
    declared: Record<string, unknown>,
    profile: McpProfileConfig,
    snapshot: ConfigSnapshot,
    key: KeySnapshot,
    headers: Headers,
    ids: RequestIds,
  ): McpRequestView {
    let first = true;
    return {
      session,
      caps: upstreamCapabilities(declared),
      profile,
      servers: serversFor(snapshot.mcp, key),
      key,
      headers,
      nextIds: () => {
        if (first) {
          first = false;
          return ids;
        }
        return { requestId: requestUuid(), clientRequestId: ids.clientRequestId };
      },
    };
  }

  async handle(req: Request, ids: RequestIds, profileId: string): Promise<Response> {
    if (this.opts.loopbackOnly) {
      const origin = req.headers.get('origin');
      if (
        !LOOPBACK.has(hostName(req.headers.get('host') ?? '')) ||
        (origin !== null && !LOOPBACK.has(hostName(origin.replace(/^[a-z]+:\/\//i, ''))))
      ) {
        return rpcError(403, -32000, 'Forbidden: the Host or Origin is not allowed on this listener.', ids);
      }
    }
    const credential = credentialOf(req.headers);
    const www = challenge(req, profileId, this.opts.deps.snapshots.current?.publicUrl);
    if (credential === undefined)
      return unauthorized('Missing credential: send "Authorization: Bearer <API key or user token>".', ids, www);
    let resolved: Awaited<ReturnType<McpGateway['resolve']>>;
    try {
      resolved = await this.resolve(req, profileId);
    } catch (e) {
      const err = asGatewayError(e);
      if (err.kind === 'authentication') return unauthorized(err.message, ids, www);
      return rpcError(err.status, err.status === 404 ? -32001 : -32000, err.message, ids);
    }
    const { key, profile, snapshot } = resolved;

    let body: unknown;
    if (req.method === 'POST') {
      try {
        body = (await readJsonBody(req, this.opts.deps.bodyLimits)).value;
      } catch (e) {
        const err = asGatewayError(e);
        return err.status === 400
          ? rpcError(400, -32700, `Parse error: ${err.message}`, ids)
          : rpcError(err.status, -32000, err.message, ids);
      }
    } else if (req.method !== 'GET' && req.method !== 'DELETE') {
      return rpcError(405, -32000, `Method ${req.method} is not allowed.`, ids, { allow: 'GET, POST, DELETE' });
    }

    // MCP 2026-07-28: stateless, no session, no GET/DELETE (mcp/serve-modern.ts).
    if (req.method !== 'POST') {
      if (MODERN.test(req.headers.get('mcp-protocol-version') ?? ''))
        return rpcError(405, -32000, `Method ${req.method} is not allowed for MCP 2026-07-28.`, ids, { allow: 'POST' });
    } else if (!(await isLegacyRequest(req, body))) {
      const view = {
        ...this.view(`${MODERN_SESSION}${key.id}:${profile.id}`, {}, profile, snapshot, key, req.headers, ids),
        protocolVersion: req.headers.get('mcp-protocol-version') ?? '2026-07-28',
      };
      const res = await this.modern.serve(req, body, view);
      return watched(res, idHeaders(ids), () => ids.streamEnded?.());
    }

    // The session: a new one at initialize, else the one the id carries (checked against this caller and profile).
    const init = Array.isArray(body) ? body.find(isInitializeRequest) : isInitializeRequest(body) ? body : undefined;
    let state: SessionState | undefined;
    let newSessionId: string | undefined;
    const presented = req.headers.get('mcp-session-id');
    if (init) {
      state = {
        profile: profile.id,
        caller: key.id,
        protocolVersion: negotiated(init.params.protocolVersion),
        capabilities: { ...init.params.capabilities },
        clientInfo: { name: init.params.clientInfo.name, version: init.params.clientInfo.version },
        issued: Math.floor(Date.now() / 1000),
        nonce: newNonce(),
      };
      newSessionId = sessionIdOf(credential, state);
      await this.liveness.open(state.nonce);
    } else if (presented !== null) {
      state = openSessionId(credential, presented);
      if (!state || state.profile !== profile.id || state.caller !== key.id) return rpcError(404, -32001, 'Session not found', ids);
      if (!(await this.liveness.alive(state.nonce, state.issued)))
        return rpcError(404, -32001, 'Session not found: it was ended or left idle; initialize a new one.', ids);
    }
    const sessionId = newSessionId ?? (state ? (presented ?? undefined) : undefined);
    const session = sessionId ?? `anon:${key.id}:${profile.id}`;

    if (req.method === 'DELETE') {
      if (!sessionId) return rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required', ids);
      this.pool.closeSession(session);
      if (state) await this.liveness.end(state.nonce);
      return new Response(null, { status: 200, headers: idHeaders(ids) });
    }
    if (req.method === 'GET' && !sessionId)
      return rpcError(405, -32000, 'A server-to-client stream needs a session: initialize first.', ids, { allow: 'POST' });

    const view = {
      ...this.view(session, state?.capabilities ?? {}, profile, snapshot, key, req.headers, ids),
      ...(state ? { protocolVersion: state.protocolVersion } : {}),
      ...(sessionId !== undefined ? { sessionId } : {}),
    };
    // Answers to the gateway's own requests (sampling, elicitation, roots passed through) go to the Server that asked.
    const messages: unknown[] = Array.isArray(body) ? body : [body];
    if (req.method === 'POST' && messages.length > 0 && messages.every(isReply)) {
      for (const m of messages)
        if (isReply(m) && !deliverReply(m)) log.debug('mcp client answer to an unknown request', { profile: profile.profileId });
      return new Response(null, { status: 202, headers: idHeaders(ids) });
    }
    const server = buildServer(this.m, view, this.opts.version);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      keepAliveMs: this.opts.deps.keepAliveMs,
    });
    server.onerror = (e) => log.debug('mcp gateway protocol error', { profile: profile.profileId, error: describeError(e) });
    await server.connect(new RelayTransport(transport));
    const unlink = req.method === 'GET' && sessionId ? this.links.stream(session, server) : undefined;
    let res: Response;
    try {
      res = await transport.handleRequest(req, body === undefined ? undefined : { parsedBody: body });
    } catch (e) {
      unlink?.();
      await server.close();
      throw e;
    }
    const extra: Record<string, string> = { ...idHeaders(ids), ...(newSessionId ? { 'mcp-session-id': newSessionId } : {}) };
    return watched(res, extra, () => {
      unlink?.();
      void server.close().catch(() => undefined);
      ids.streamEnded?.();
    });
  }
}
