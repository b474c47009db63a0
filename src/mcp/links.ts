import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, McpError, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { describeError, log } from '../core/log.ts';

/**
 * What flows from an upstream server to the client, routed on this replica: the downstream
 * requests in flight of each gateway session (by the server they went to) and the session's open
 * `GET` streams. A server's request (sampling, elicitation, roots) or logging notification goes
 * on the stream of the newest request in flight to that server — the client request that caused
 * it — else on the session's `GET` stream; list changes and resource updates go on the `GET`
 * stream, else on a request's stream. Progress travels with its request (mcp/serve.ts).
 */

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface Route {
  /** The gateway session (its id, or the sessionless caller's key). */
  session: string;
  serverId: string;
}

interface SessionLinks {
  inflight: Map<string, Extra[]>;
  streams: Set<Server>;
}

/**
 * Runs an upstream request with a signal that follows `signal` only while the request is in
 * flight. The SDK's `request` never removes its abort listener: handed the client's own signal,
 * which aborts when the client's HTTP request ends (after the answer), it would send the server a
 * `notifications/cancelled` for every finished request.
 */
export const whileInFlight = async <T>(
  signal: AbortSignal | undefined,
  fn: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> => {
  if (!signal) return fn(undefined);
  const own = new AbortController();
  const follow = (): void => own.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  try {
    return await fn(own.signal);
  } finally {
    signal.removeEventListener('abort', follow);
  }
};

const UNRELATED = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
]);

export class Links {
  private readonly sessions = new Map<string, SessionLinks>();

  private of(session: string): SessionLinks {
    let s = this.sessions.get(session);
    if (!s) {
      s = { inflight: new Map(), streams: new Set() };
      this.sessions.set(session, s);
    }
    return s;
  }

  private tidy(session: string): void {
    const s = this.sessions.get(session);
    if (s && s.inflight.size === 0 && s.streams.size === 0) this.sessions.delete(session);
  }

  /** A downstream request in flight to `route.serverId`; the returned function ends it. */
  begin(route: Route, extra: Extra): () => void {
    const s = this.of(route.session);
    let list = s.inflight.get(route.serverId);
    if (!list) {
      list = [];
      s.inflight.set(route.serverId, list);
    }
    list.push(extra);
    return () => {
      const l = s.inflight.get(route.serverId);
      const i = l ? l.indexOf(extra) : -1;
      if (l && i >= 0) l.splice(i, 1);
      if (l && l.length === 0) s.inflight.delete(route.serverId);
      this.tidy(route.session);
    };
  }

  /** A session's open `GET` stream (its per-request Server); the returned function ends it. */
  stream(session: string, server: Server): () => void {
    this.of(session).streams.add(server);
    return () => {
      this.sessions.get(session)?.streams.delete(server);
      this.tidy(session);
    };
  }

  /** Whether the session has a request in flight or an open stream here (its upstream sessions are kept). */
  busy(session: string): boolean {
    return this.sessions.has(session);
  }

  /** Whether the session has a `GET` stream open on this replica. */
  hasStream(session: string): boolean {
    return (this.sessions.get(session)?.streams.size ?? 0) > 0;
  }

  get openStreams(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.streams.size;
    return n;
  }

  private latest(route: Route): Extra | undefined {
    const s = this.sessions.get(route.session);
    const own = s?.inflight.get(route.serverId);
    if (own && own.length > 0) return own[own.length - 1];
    return undefined;
  }

  private anyInflight(session: string): Extra | undefined {
    const s = this.sessions.get(session);
    if (!s) return undefined;
    for (const l of s.inflight.values()) if (l.length > 0) return l[l.length - 1];
    return undefined;
  }

  private anyStream(session: string): Server | undefined {
    const s = this.sessions.get(session);
    if (!s) return undefined;
    for (const server of s.streams) return server;
    return undefined;
  }

  notify(route: Route, n: ServerNotification): void {
    const failed = (e: unknown): void =>
      log.debug('mcp notification not delivered', { server: route.serverId, method: n.method, error: describeError(e) });
    const stream = this.anyStream(route.session);
    if (UNRELATED.has(n.method) && stream) {
      stream.notification(n).catch(failed);
      return;
    }
    const extra = this.latest(route) ?? (UNRELATED.has(n.method) ? this.anyInflight(route.session) : undefined);
    if (extra) extra.sendNotification(n).catch(failed);
    else if (stream) stream.notification(n).catch(failed);
    else log.debug('mcp notification dropped: no client stream open for the session', { server: route.serverId, method: n.method });
  }

  /** A server's request to the client, answered by the client that caused it (or the session's stream). */
  async request<S extends AnySchema>(route: Route, req: ServerRequest, schema: S, signal: AbortSignal): Promise<SchemaOutput<S>> {
    const extra = this.latest(route);
    if (extra) return extra.sendRequest(req, schema, { signal });
    const stream = this.anyStream(route.session);
    if (stream) return stream.request(req, schema, { signal });
    throw new McpError(ErrorCode.InvalidRequest, `The client has no open stream to receive '${req.method}' through the gateway.`);
  }
}
