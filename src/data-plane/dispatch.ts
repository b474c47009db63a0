import type { CanonicalRequest, CanonicalResponse, JsonObject, StreamEvent } from '../canonical/types.ts';
import { GatewayError } from '../core/errors.ts';
import type { ResolvedTarget, RouteSnapshot } from '../propagation/snapshot.ts';
import { createFrameParser } from '../providers/framing.ts';
import type { ExtraEndpoint, HttpProviderAdapter, UpstreamFrame } from '../providers/types.ts';
import { targetOrder } from './resolve.ts';
import { clientClosed, prepareRequest, sendUpstream, timeoutError, tokenHttp, upstreamFailure } from './upstream.ts';

/** One try against one target, for the request record and the span. */
export interface Attempt {
  connection: string;
  provider: string;
  upstreamModel: string;
  status: number;
  errorCode?: string;
  ms: number;
}

export type DispatchFailure = { ok: false; error: GatewayError; attempts: Attempt[]; target: ResolvedTarget | undefined };

export type CompleteOutcome = { ok: true; response: CanonicalResponse; target: ResolvedTarget; attempts: Attempt[] } | DispatchFailure;

/** A stream whose first events arrived: from here on the client gets a 200 and SSE. */
export interface OpenStream {
  target: ResolvedTarget;
  attempts: Attempt[];
  /** The events read while opening (at least one, unless the upstream ended at once). */
  first: StreamEvent[];
  /** Next batch of events; null at the normal end. Throws GatewayError on failure. */
  next(): Promise<StreamEvent[] | null>;
  /** Aborts the upstream request (client went away, idle time-out). */
  abort(reason: GatewayError): void;
  /** Re-arms the idle timer: called by the responder whenever upstream data arrived. */
  readonly controller: AbortController;
}

export type StreamOutcome = { ok: true; stream: OpenStream } | DispatchFailure;

interface Try {
  target: ResolvedTarget;
  controller: AbortController;
  timer: ReturnType<typeof setTimeout>;
  started: number;
}

/** Every (target, retry) pair in the order they are tried. */
const plan = (route: RouteSnapshot): ResolvedTarget[] => {
  const out: ResolvedTarget[] = [];
  for (const t of targetOrder(route)) for (let i = 0; i <= route.maxRetries; i++) out.push(t);
  return out;
};

const begin = (target: ResolvedTarget, route: RouteSnapshot, clientSignal: AbortSignal): Try => {
  const controller = new AbortController();
  const onClientAbort = () => controller.abort(clientClosed());
  if (clientSignal.aborted) onClientAbort();
  else clientSignal.addEventListener('abort', onClientAbort, { once: true });
  const timer = setTimeout(() => controller.abort(timeoutError(route.timeoutMs)), route.timeoutMs);
  return { target, controller, timer, started: performance.now() };
};

const attemptOf = (t: Try, status: number, error?: GatewayError): Attempt => ({
  connection: t.target.connection.name,
  provider: t.target.connection.provider,
  upstreamModel: t.target.upstreamModel,
  status,
  ...(error ? { errorCode: error.errorCode } : {}),
  ms: Math.round(performance.now() - t.started),
});

const shouldFallBack = (e: GatewayError, clientSignal: AbortSignal): boolean => e.retryable && !clientSignal.aborted;

const withTarget = (t: ResolvedTarget) => ({ connection: t.connection, upstreamModel: t.upstreamModel });

/** Non-streaming: try targets in order until one answers or a non-retryable error occurs. */
export const dispatchComplete = async (req: CanonicalRequest, route: RouteSnapshot, clientSignal: AbortSignal): Promise<CompleteOutcome> => {
  const attempts: Attempt[] = [];
  let last: GatewayError = new GatewayError({ kind: 'unavailable', message: 'No upstream target is available.' });
  let lastTarget: ResolvedTarget | undefined;
  for (const target of plan(route)) {
    lastTarget = target;
    const t = begin(target, route, clientSignal);
    try {
      const adapter = target.adapter;
      if (adapter.kind === 'local') {
        const response = adapter.complete(req, withTarget(target));
        attempts.push(attemptOf(t, 200));
        return { ok: true, response, target, attempts };
      }
      const upstream = await sendUpstream(await prepareRequest(adapter, req, withTarget(target), t.controller.signal), t.controller.signal);
      const text = await upstream.text().catch((e: unknown) => {
        throw upstreamFailure(e, t.controller.signal);
      });
      if (!upstream.ok) throw adapter.parseError(upstream.status, text, upstream.headers);
      const response = adapter.parseResponse(text);
      attempts.push(attemptOf(t, upstream.status));
      return { ok: true, response, target, attempts };
    } catch (e) {
      last = upstreamFailure(e, t.controller.signal);
      attempts.push(attemptOf(t, last.status, last));
      if (!shouldFallBack(last, clientSignal)) break;
    } finally {
      clearTimeout(t.timer);
    }
  }
  return { ok: false, error: last, attempts, target: lastTarget };
};

/** Pull-based reader of an upstream body: bytes → frames → canonical events. */
const eventReader = (adapter: HttpProviderAdapter, body: ReadableStream<Uint8Array>, signal: AbortSignal) => {
  const reader = body.getReader();
  const framer = createFrameParser(adapter.framing);
  const decoder = adapter.createStreamDecoder();
  let done = false;
  const decode = (frames: UpstreamFrame[]): StreamEvent[] => {
    const out: StreamEvent[] = [];
    for (const f of frames) for (const ev of decoder.push(f)) out.push(ev);
    return out;
  };
  return async (): Promise<StreamEvent[] | null> => {
    while (!done) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (e) {
        throw upstreamFailure(e, signal);
      }
      if (chunk.done) {
        done = true;
        const tail = decode(framer.flush());
        for (const ev of decoder.end()) tail.push(ev);
        return tail;
      }
      const events = decode(framer.push(chunk.value));
      if (events.length > 0) return events;
    }
    return null;
  };
};

/**
 * Streaming: open the upstream stream and read until the first canonical event, so that errors
 * before the stream opens (HTTP errors, an error as the first event) still fall back to the next
 * target and reach the client as a plain HTTP error.
 */
export const dispatchStream = async (req: CanonicalRequest, route: RouteSnapshot, clientSignal: AbortSignal): Promise<StreamOutcome> => {
  const attempts: Attempt[] = [];
  let last: GatewayError = new GatewayError({ kind: 'unavailable', message: 'No upstream target is available.' });
  let lastTarget: ResolvedTarget | undefined;
  for (const target of plan(route)) {
    lastTarget = target;
    const t = begin(target, route, clientSignal);
    const adapter = target.adapter;
    try {
      if (adapter.kind === 'local') {
        clearTimeout(t.timer);
        attempts.push(attemptOf(t, 200));
        const events = adapter.stream(req, withTarget(target));
        let served = false;
        return {
          ok: true,
          stream: {
            target,
            attempts,
            first: events,
            next: async () => (served ? null : ((served = true), [])),
            abort: (reason) => t.controller.abort(reason),
            controller: t.controller,
          },
        };
      }
      const upstream = await sendUpstream(await prepareRequest(adapter, req, withTarget(target), t.controller.signal), t.controller.signal);
      if (!upstream.ok || !upstream.body) {
        const text = await upstream.text().catch(() => '');
        throw upstream.ok
          ? new GatewayError({ kind: 'bad_gateway', message: 'The upstream provider returned an empty stream.' })
          : adapter.parseError(upstream.status, text, upstream.headers);
      }
      const next = eventReader(adapter, upstream.body, t.controller.signal);
      let first: StreamEvent[] | null = [];
      while (first !== null && first.length === 0) first = await next();
      clearTimeout(t.timer);
      attempts.push(attemptOf(t, upstream.status));
      let ended = first === null;
      return {
        ok: true,
        stream: {
          target,
          attempts,
          first: first ?? [],
          next: async () => (ended ? null : ((await next()) ?? ((ended = true), null))),
          abort: (reason) => t.controller.abort(reason),
          controller: t.controller,
        },
      };
    } catch (e) {
      clearTimeout(t.timer);
      last = upstreamFailure(e, t.controller.signal);
      t.controller.abort(last);
      attempts.push(attemptOf(t, last.status, last));
      if (!shouldFallBack(last, clientSignal)) break;
    }
  }
  return { ok: false, error: last, attempts, target: lastTarget };
};

export type ExtraOutcome = { ok: true; response: Response; target: ResolvedTarget; attempts: Attempt[] } | DispatchFailure;

const notOffered = (endpoint: ExtraEndpoint): GatewayError =>
  new GatewayError({
    kind: 'unsupported_endpoint',
    message: `None of the providers routed for this model offers the ${endpoint} endpoint.`,
    errorCode: 'unsupported_endpoint',
    retryable: false,
  });

/**
 * Extra endpoints (embeddings, completions, images, speech, rerank): same routing, fallback and
 * time-outs as chat. JSON answers are read within the time-out; binary or streamed answers are
 * handed on as they arrive. Targets whose provider lacks the endpoint are skipped.
 */
export const dispatchExtra = async (endpoint: ExtraEndpoint, body: JsonObject, route: RouteSnapshot, clientSignal: AbortSignal): Promise<ExtraOutcome> => {
  const attempts: Attempt[] = [];
  let last: GatewayError = notOffered(endpoint);
  let lastTarget: ResolvedTarget | undefined;
  for (const target of plan(route)) {
    const adapter = target.adapter;
    const t = begin(target, route, clientSignal);
    try {
      if (adapter.kind === 'local') {
        const json = adapter.extra?.(endpoint, body, withTarget(target));
        if (!json) continue;
        lastTarget = target;
        attempts.push(attemptOf(t, 200));
        return { ok: true, response: Response.json(json), target, attempts };
      }
      const built = adapter.buildExtraRequest?.(endpoint, body, withTarget(target));
      if (!built) continue;
      lastTarget = target;
      const request = adapter.authorize ? await adapter.authorize(built, withTarget(target), tokenHttp(t.controller.signal)) : built;
      const upstream = await sendUpstream(request, t.controller.signal);
      if (!upstream.ok) throw adapter.parseError(upstream.status, await upstream.text().catch(() => ''), upstream.headers);
      attempts.push(attemptOf(t, upstream.status));
      const type = upstream.headers.get('content-type') ?? '';
      if (!type.includes('json')) return { ok: true, response: upstream, target, attempts };
      const text = await upstream.text().catch((e: unknown) => {
        throw upstreamFailure(e, t.controller.signal);
      });
      return { ok: true, response: new Response(text, { status: upstream.status, headers: { 'content-type': type } }), target, attempts };
    } catch (e) {
      last = upstreamFailure(e, t.controller.signal);
      attempts.push(attemptOf(t, last.status, last));
      if (!shouldFallBack(last, clientSignal)) break;
    } finally {
      clearTimeout(t.timer);
    }
  }
  return { ok: false, error: last, attempts, target: lastTarget };
};
