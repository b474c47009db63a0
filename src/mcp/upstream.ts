import {
  Client,
  type FetchLike,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client';
import {
  type ClientCapabilities,
  ClientCapabilitiesSchema,
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitResultSchema,
  ErrorCode,
  ListRootsResultSchema,
  McpError,
  ServerNotificationSchema,
  ServerRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { inwardAddress, knownInward } from '../core/addresses.ts';
import { describeError, log } from '../core/log.ts';
import { upstreamBounds } from '../core/upstream-bounds.ts';
import { boundedAnswer } from './bounded.ts';
import type { McpServerConfig } from './config.ts';
import { LAX_REVISION, type Lax, laxResults } from './lax-results.ts';
import type { Links } from './links.ts';

/**
 * Upstream MCP sessions: one v2 SDK `Client` per (gateway session, catalog server) on this replica,
 * opened lazily on first use (so any replica can serve any session), closed when idle, and opened
 * again when the upstream says the session is gone (HTTP 404) or the connection closed. The
 * catalog's credential (authType/authValue) is the only one sent; the caller's never is. Before
 * every upstream HTTP request the address rule of contract §3.1 is applied (no inward address
 * unless the server allows private addresses), redirects are not followed, and no message larger
 * than GATEWAY_MCP_MAX_MESSAGE_BYTES is read (mcp/bounded.ts); a 2026-07-28 result without its
 * `resultType` is read as complete (mcp/lax-results.ts). Either generation of upstream serves
 * either generation of caller, and a server that speaks both is spoken to in the caller's: for a
 * 2026-07-28 caller (pool key MODERN_SESSION + …) the client negotiates (`server/discover` first,
 * `initialize` for a 2025 server); for a 2025 caller it runs `initialize` first (so sampling,
 * elicitation, roots, subscriptions, logging levels and notifications stay what they are in 2025)
 * and negotiates only when the server refuses it (a 2026-07-28-only server).
 */

/** How long a server that refused a 2025 `initialize` is spoken to in 2026-07-28 straight away. */
const MODERN_ONLY_TTL_MS = 10 * 60_000;

/** The pool key's prefix for a 2026-07-28 caller (the other keys are 2025 sessions). */
export const MODERN_SESSION = 'modern:';

export interface UpstreamLimits {
  /** Connecting and `initialize` (ms). */
  connectTimeoutMs: number;
  /** An upstream session unused this long is closed (ms). */
  idleMs: number;
  /** Upstream sessions held at most; the least recently used are closed beyond it. */
  maxSessions: number;
}

export const DEFAULT_UPSTREAM_LIMITS: UpstreamLimits = { connectTimeoutMs: 10_000, idleMs: 10 * 60_000, maxSessions: 10_000 };

/** What a session's upstream client listed last (for routing names and URIs back). */
export interface Listed {
  tools?: ReadonlySet<string>;
  /** Tools of a pinned server listed with a definition that is not the approved one. */
  held?: ReadonlySet<string>;
  prompts?: ReadonlySet<string>;
  resources?: ReadonlySet<string>;
  templates?: readonly string[];
}

interface Conn {
  readonly key: string;
  readonly server: McpServerConfig;
  ready: Promise<Client>;
  lastUsed: number;
  closed: boolean;
  listed: Listed;
}

const sameServer = (a: McpServerConfig, b: McpServerConfig): boolean =>
  a.url === b.url &&
  a.transport === b.transport &&
  a.authType === b.authType &&
  a.authHeader === b.authHeader &&
  a.authValue === b.authValue &&
  a.allowPrivate === b.allowPrivate;

const forbidden = (serverId: string, what: string): McpError =>
  new McpError(
    ErrorCode.InternalError,
    `The address of MCP server '${serverId}' is ${what}; only the platform admin may allow such addresses.`,
  );

/**
 * fetch with the address rule and no redirects. The SDK opens a standing `GET` stream for every
 * upstream session; it is opened only when `wantsStream()` (the gateway session has a stream of
 * its own open here to carry what comes on it), else answered 405 here, which the SDK takes as
 * "the server offers no stream": a thousand sessions do not hold a thousand idle connections.
 */
const guardedFetch = (server: McpServerConfig, wantsStream: () => boolean): FetchLike => {
  // Once an hour per server: the server, never what it sent.
  const lax: Lax = laxResults(() =>
    log.every(
      `mcp-lax-result:${server.serverId}`,
      'warn',
      'mcp server sent a 2026-07-28 result without resultType; read as complete',
      { server: server.serverId },
      3_600_000,
    ),
  );
  return async (url, init) => {
    if ((init?.method ?? 'GET') === 'GET' && !wantsStream()) return new Response(null, { status: 405 });
    const href = url.toString();
    if (!server.allowPrivate) {
      const known = knownInward(href);
      const inward = known ? known.inward : await inwardAddress(href);
      if (inward) throw forbidden(server.serverId, `a ${inward.class} address`);
    }
    const res = await fetch(url, { ...init, redirect: 'manual' });
    const modern = new Headers(init?.headers).get('mcp-protocol-version') === LAX_REVISION;
    return boundedAnswer(res, upstreamBounds.maxMcpMessageBytes, init?.body, modern ? lax : undefined);
  };
};

const authHeaders = (server: McpServerConfig): Record<string, string> => {
  if (server.authValue === null) return {};
  if (server.authType === 'bearer') return { authorization: `Bearer ${server.authValue}` };
  if (server.authType === 'header' && server.authHeader) return { [server.authHeader]: server.authValue };
  return {};
};

const transportFor = (server: McpServerConfig, wantsStream: () => boolean): Transport => {
  const url = new URL(server.url);
  const headers = authHeaders(server);
  // HTTP+SSE lives on its GET stream: always opened.
  if (server.transport === 'sse') return new SSEClientTransport(url, { requestInit: { headers }, fetch: guardedFetch(server, () => true) });
  return new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: guardedFetch(server, wantsStream) });
};

/** Only what a client may be asked through the gateway: sampling, elicitation and roots, as the downstream client declared them. */
export const upstreamCapabilities = (declared: Record<string, unknown>): ClientCapabilities => {
  const parsed = ClientCapabilitiesSchema.safeParse(declared);
  if (!parsed.success) return {};
  const { sampling, elicitation, roots } = parsed.data;
  return { ...(sampling ? { sampling } : {}), ...(elicitation ? { elicitation } : {}), ...(roots ? { roots } : {}) };
};

/** The capabilities as the v2 client declares them (the same three, their sub-features by name). */
export const asked = (caps: ClientCapabilities): NonNullable<ConstructorParameters<typeof Client>[1]>['capabilities'] => {
  const { sampling, elicitation, roots } = caps;
  return {
    ...(sampling ? { sampling: { ...(sampling.context ? { context: {} } : {}), ...(sampling.tools ? { tools: {} } : {}) } } : {}),
    ...(elicitation
      ? {
          elicitation: {
            ...(elicitation.form
              ? { form: elicitation.form.applyDefaults === undefined ? {} : { applyDefaults: elicitation.form.applyDefaults } }
              : {}),
            ...(elicitation.url ? { url: {} } : {}),
          },
        }
      : {}),
    ...(roots ? { roots: roots.listChanged === undefined ? {} : { listChanged: roots.listChanged } } : {}),
  };
};

/**
 * Whether the server refused a 2025 `initialize` as a server that speaks only later revisions
 * does (HTTP 400/404/405/415 or a JSON-RPC error such as -32022 unsupported version): then the
 * generation is negotiated. An outage, a time-out or a refused credential is not such a refusal.
 */
const refusedLegacy = (e: unknown): boolean =>
  (e instanceof SdkHttpError && [400, 404, 405, 406, 415].includes(e.status)) || e instanceof ProtocolError || e instanceof McpError;

/** Whether an upstream failure means its session is gone (so the request never ran there): re-open and retry once. */
const sessionGone = (e: unknown): boolean =>
  (e instanceof SdkHttpError && e.status === 404) ||
  (e instanceof SdkError && (e.code === SdkErrorCode.NotConnected || e.code === SdkErrorCode.ConnectionClosed)) ||
  (e instanceof Error && /^Not connected$/.test(e.message));

const withTimeout = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new McpError(ErrorCode.RequestTimeout, `${what} timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });

export class UpstreamPool {
  private readonly conns = new Map<string, Conn>();
  /** Servers (url, transport) that refused a 2025 `initialize`, until when. */
  private readonly modernOnly = new Map<string, number>();
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(
    private readonly links: Links,
    private readonly limits: UpstreamLimits = DEFAULT_UPSTREAM_LIMITS,
    private readonly version = '1.0.0',
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1000, limits.idleMs / 2)));
    this.sweeper.unref?.();
  }

  get size(): number {
    return this.conns.size;
  }

  /** A client with the relays the downstream client declared; `conn` receives its notifications. */
  private client(route: { session: string; serverId: string }, caps: ClientCapabilities, conn: Conn): Client {
    const client = new Client(
      { name: 'ai-gateway', version: this.version },
      { capabilities: asked(caps), versionNegotiation: { mode: 'auto' } },
    );
    // The SDK's own request types are checked again with the 2025 schemas the links speak.
    const relay = (schema: Parameters<Links['request']>[2]) => (req: unknown, signal: AbortSignal) => {
      const parsed = ServerRequestSchema.safeParse(req);
      if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, 'The MCP server sent a request the gateway cannot relay.');
      return this.links.request(route, parsed.data, schema, signal);
    };
    if (caps.sampling) {
      const plain = relay(CreateMessageResultSchema);
      const withTools = relay(CreateMessageResultWithToolsSchema);
      client.setRequestHandler('sampling/createMessage', (req, ctx) =>
        (req.params.tools ? withTools : plain)(req, ctx.mcpReq.signal).then((r) => CreateMessageResultWithToolsSchema.parse(r)),
      );
    }
    if (caps.elicitation) {
      const elicit = relay(ElicitResultSchema);
      client.setRequestHandler('elicitation/create', (req, ctx) => elicit(req, ctx.mcpReq.signal).then((r) => ElicitResultSchema.parse(r)));
    }
    if (caps.roots) {
      const roots = relay(ListRootsResultSchema);
      client.setRequestHandler('roots/list', (req, ctx) => roots(req, ctx.mcpReq.signal).then((r) => ListRootsResultSchema.parse(r)));
    }
    client.fallbackNotificationHandler = async (n) => {
      const parsed = ServerNotificationSchema.safeParse(n);
      if (!parsed.success) return;
      const m = parsed.data.method;
      if (m === 'notifications/tools/list_changed') conn.listed = { ...conn.listed, tools: undefined, held: undefined };
      else if (m === 'notifications/prompts/list_changed') conn.listed = { ...conn.listed, prompts: undefined };
      else if (m === 'notifications/resources/list_changed') conn.listed = { ...conn.listed, resources: undefined, templates: undefined };
      this.links.notify(route, parsed.data);
    };
    client.onerror = (e) => log.debug('mcp upstream transport error', { server: route.serverId, error: describeError(e) });
    return client;
  }

  /** Connects a client in the caller's generation when the server speaks it (see the head of this file). */
  private async connect(session: string, server: McpServerConfig, caps: ClientCapabilities, conn: Conn): Promise<Client> {
    const route = { session, serverId: server.serverId };
    const transport = () => transportFor(server, () => this.links.hasStream(session));
    const attempt = async (legacy: boolean): Promise<Client> => {
      const client = this.client(route, caps, conn);
      try {
        await client.connect(transport(), legacy ? { prior: { kind: 'legacy' } } : undefined);
        return client;
      } catch (e) {
        void client.close().catch(() => undefined);
        throw e;
      }
    };
    const verdict = `${server.url}\n${server.transport}`;
    const modernOnly = (this.modernOnly.get(verdict) ?? 0) > Date.now();
    const client =
      session.startsWith(MODERN_SESSION) || modernOnly
        ? await attempt(false)
        : await attempt(true).catch((e: unknown) => {
            if (!refusedLegacy(e)) throw e;
            // Remembered for a while, so that not every 2025 session costs the server a refused initialize.
            this.modernOnly.set(verdict, Date.now() + MODERN_ONLY_TTL_MS);
            return attempt(false);
          });
    client.onclose = () => {
      conn.closed = true;
      if (this.conns.get(conn.key) === conn) this.conns.delete(conn.key);
    };
    return client;
  }

  private open(session: string, server: McpServerConfig, caps: ClientCapabilities): Conn {
    const key = `${session}\n${server.serverId}`;
    let connecting: Promise<Client> | undefined;
    const conn: Conn = {
      key,
      server,
      lastUsed: Date.now(),
      closed: false,
      listed: {},
      // Started once `conn` exists (the client's notifications update what it listed).
      ready: withTimeout(
        Promise.resolve().then(() => (connecting = this.connect(session, server, caps, conn))),
        this.limits.connectTimeoutMs,
        `connecting to MCP server '${server.serverId}'`,
      ).catch((e: unknown) => {
        conn.closed = true;
        if (this.conns.get(key) === conn) this.conns.delete(key);
        void connecting?.then((c) => c.close()).catch(() => undefined);
        throw e;
      }),
    };
    conn.ready.catch(() => undefined);
    this.conns.set(key, conn);
    if (this.conns.size > this.limits.maxSessions) this.evictOldest();
    return conn;
  }

  /** The session's upstream session with `server` (opened when there is none, or when the server's address or credential changed). */
  conn(session: string, server: McpServerConfig, caps: ClientCapabilities): Conn {
    const key = `${session}\n${server.serverId}`;
    const have = this.conns.get(key);
    if (have && !have.closed && sameServer(have.server, server)) {
      have.lastUsed = Date.now();
      return have;
    }
    if (have) this.drop(have);
    return this.open(session, server, caps);
  }

  /** Runs `fn` on the session's client for `server`; an upstream session found gone is re-opened and `fn` run once more. */
  async use<T>(
    session: string,
    server: McpServerConfig,
    caps: ClientCapabilities,
    fn: (client: Client, conn: Conn) => Promise<T>,
  ): Promise<T> {
    const conn = this.conn(session, server, caps);
    try {
      return await fn(await conn.ready, conn);
    } catch (e) {
      if (!sessionGone(e)) throw e;
      log.info('mcp upstream session gone; opening a new one', { server: server.serverId });
      this.drop(conn);
      const again = this.conn(session, server, caps);
      return fn(await again.ready, again);
    }
  }

  /** Closes the session's upstream sessions on this replica (DELETE of the gateway session). */
  closeSession(session: string): void {
    const head = `${session}\n`;
    for (const c of [...this.conns.values()]) if (c.key.startsWith(head)) this.drop(c, true);
  }

  private drop(conn: Conn, terminate = false): void {
    conn.closed = true;
    if (this.conns.get(conn.key) === conn) this.conns.delete(conn.key);
    void conn.ready.then(
      async (client) => {
        const t = client.transport;
        if (terminate && t instanceof StreamableHTTPClientTransport && t.sessionId) await t.terminateSession().catch(() => undefined);
        await client.close();
      },
      () => undefined,
    );
  }

  private evictOldest(): void {
    let oldest: Conn | undefined;
    for (const c of this.conns.values()) if (!oldest || c.lastUsed < oldest.lastUsed) oldest = c;
    if (oldest) this.drop(oldest);
  }

  sweep(now = Date.now()): void {
    for (const [server, until] of [...this.modernOnly]) if (until <= now) this.modernOnly.delete(server);
    for (const c of [...this.conns.values()])
      if (now - c.lastUsed > this.limits.idleMs && !this.links.busy(c.key.slice(0, c.key.indexOf('\n')))) this.drop(c);
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const c of [...this.conns.values()]) this.drop(c);
  }
}

export type { Conn };
