import { Sweep } from '../core/sweep.ts';
import type { CanonicalRequest, CanonicalResponse, ClientFormat, JsonObject, StreamEvent } from '../canonical/types.ts';
import { GatewayError, invalidRequest } from '../core/errors.ts';
import { Bench, rankedPlan } from './breaker-events.ts';
import type { ResolvedTarget, RouteSnapshot } from '../propagation/snapshot.ts';
import type { ExtraEndpoint, HttpProviderAdapter, PassThrough, UpstreamHttpRequest } from '../providers/types.ts';
import { Relay, sseReader } from './relay.ts';
import { eventReader } from './event-reader.ts';
import { spliceFirstModel } from './splice-model.ts';
import { finalCollector } from './relay-final.ts';
import type { Attempt, RequestContext } from '../pipeline/context.ts';
import type { NativeAnswer } from './responses-native.ts';
import { targetOrder } from '../pipeline/plan.ts';
import { clientClosed, prepareRequest, readUpstreamText, timeoutError, UpstreamCall } from './upstream.ts';

export type DispatchFailure = { ok: false; error: GatewayError; attempts: Attempt[]; target: ResolvedTarget | undefined };

/**
 * Same format in, same format out: the client's body as sent (validated), its format and model.
 * A target whose adapter speaks that format natively gets the body with the model spliced in,
 * and its answer is relayed with the model spliced back; other targets get the canonical request.
 */
export interface PassThroughRequest {
  format: ClientFormat;
  body: JsonObject;
  clientModel: string;
  /** Chat streams: the client asked for the usage chunk (it is always requested upstream). */
  includeUsage: boolean;
  /** Responses: how the upstream's answer becomes the client's (ids and fields beyond the model). */
  answer?: NativeAnswer;
  /** A keeper waits for the answer: relayed streams build the final answer object (OpenStream.relayFinal). */
  keepFinal?: boolean;
}

export type CompleteOutcome =
  | {
      ok: true;
      response: CanonicalResponse;
      target: ResolvedTarget;
      attempts: Attempt[] /** The upstream's JSON answer with the client's model, when passed through. */;
      relayText?: string;
    }
  | DispatchFailure;

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
  /**
   * Pass-through streams: the upstream's own frames (model spliced) read since the last call; the
   * events are then only observed (usage, finish, errors), not encoded.
   */
  takeRelay?(): string;
  /** Pass-through streams: whether the upstream already sent its own terminal `[DONE]`. */
  relayDone?(): boolean;
  /** Pass-through streams with keepFinal: the final answer object as the client got it. */
  relayFinal?(): JsonObject | undefined;
}

export type StreamOutcome = { ok: true; stream: OpenStream } | DispatchFailure;

interface Try {
  target: ResolvedTarget;
  controller: AbortController;
  /** The client's request signal: the sweep aborts the attempt once it fires. */
  client: AbortSignal;
  /** Sends this try's requests and scrubs its credentials out of whatever fails. */
  call: UpstreamCall;
  /** performance.now() after which the attempt is aborted with a time-out. */
  deadline: number;
  timeoutMs: number;
  started: number;
}

/**
 * Attempt time-outs and client aborts: one shared sweep over the attempts in flight instead of a
 * timer per attempt and a listener on the client's signal (each costs more than the check).
 * Precision is the sweep period: time-outs are seconds, and a client gone while its attempt is in
 * flight has the upstream request cancelled within SWEEP_MS (an open stream's is cancelled at once
 * by the response's cancel).
 */
const SWEEP_MS = 25;
const armed = new Sweep<Try>(SWEEP_MS, (t, now) => {
  if (t.client.aborted) t.controller.abort(clientClosed());
  else if (now >= t.deadline) t.controller.abort(timeoutError(t.timeoutMs));
  else return false;
  return true;
});
const arm = (t: Try): void => armed.add(t);
const disarm = (t: Try): void => armed.delete(t);

/**
 * Every (target, retry) pair in the order they are tried. Routes without a weighted choice always
 * give the same list, computed once per (immutable) route snapshot.
 */
const fixedPlans = new WeakMap<RouteSnapshot, ResolvedTarget[]>();
const plan = (route: RouteSnapshot): ResolvedTarget[] => {
  const cached = fixedPlans.get(route);
  if (cached) return cached;
  const out: ResolvedTarget[] = [];
  for (const t of targetOrder(route)) for (let i = 0; i <= route.maxRetries; i++) out.push(t);
  // The project's global fallback (contract §3.2): after every target of the route failed retryably.
  for (const t of route.fallback ?? []) out.push(t);
  if (route.tiers.every((tier) => tier.length <= 1)) fixedPlans.set(route, out);
  return out;
};

const begin = (target: ResolvedTarget, route: RouteSnapshot, clientSignal: AbortSignal): Try => {
  const controller = new AbortController();
  if (clientSignal.aborted) controller.abort(clientClosed());
  const started = performance.now();
  const t: Try = {
    target,
    controller,
    client: clientSignal,
    call: new UpstreamCall(target.connection, controller.signal),
    deadline: started + route.timeoutMs,
    timeoutMs: route.timeoutMs,
    started,
  };
  arm(t);
  return t;
};

const attemptOf = (t: Try, status: number, error?: GatewayError): Attempt => {
  const { connection: c, upstreamModel } = t.target;
  const ms = Math.round(performance.now() - t.started);
  return error
    ? { connection: c.name, provider: c.provider, upstreamModel, status, errorCode: error.errorCode, ms }
    : { connection: c.name, provider: c.provider, upstreamModel, status, ms };
};

const shouldFallBack = (e: GatewayError, clientSignal: AbortSignal): boolean => e.retryable && !clientSignal.aborted;

const withTarget = (t: ResolvedTarget) => ({ connection: t.connection, upstreamModel: t.upstreamModel });

type Success<T> = { ok: true; value: T; target: ResolvedTarget; attempts: Attempt[] };

/**
 * The one failover loop: tries (target, retry) pairs in order until a step succeeds or fails with
 * a non-retryable error. A step returns undefined when its target cannot serve the request at all
 * (skipped, not counted). Each try has its own time-out, cleared when the step returns.
 */
const failover = async <T>(
  route: RouteSnapshot,
  clientSignal: AbortSignal,
  none: () => GatewayError,
  step: (target: ResolvedTarget, t: Try) => Promise<{ value: T; status: number } | undefined>,
  ctx: RequestContext | undefined,
): Promise<Success<T> | DispatchFailure> => {
  const attempts: Attempt[] = [];
  let last: GatewayError | undefined;
  let lastTarget: ResolvedTarget | undefined;
  // The attempts are reported only to observers that take them (no closure per attempt otherwise).
  const watch = ctx?.observers.wantsAttempts ? ctx : undefined;
  // The project's circuit breakers (contract §14): a target whose breaker is open is not tried.
  const bench = route.breaker !== undefined && ctx?.breakers ? new Bench(ctx.breakers, route.breaker, ctx) : undefined;
  const order = route.strategy !== 'ordered' && ctx?.breakers ? rankedPlan(route, ctx.breakers) : plan(route);
  for (const target of order) {
    const go = bench ? bench.admit(target) : true;
    if (go !== true && (go === false || !(await go))) continue;
    const t = begin(target, route, clientSignal);
    if (watch) t.call.beforeFirstSend = () => reportStart(watch, t);
    try {
      const r = await step(target, t);
      if (!r) {
        bench?.released(target);
        continue;
      }
      const a = attemptOf(t, r.status);
      attempts.push(a);
      bench?.succeeded(target, a.ms);
      if (watch) reportEnd(watch, t, a, undefined);
      return { ok: true, value: r.value, target, attempts };
    } catch (e) {
      lastTarget = target;
      last = t.call.fail(e);
      t.controller.abort(last);
      const a = attemptOf(t, last.status, last);
      attempts.push(a);
      bench?.failed(target, last, clientSignal.aborted);
      if (watch) reportEnd(watch, t, a, last);
      if (!shouldFallBack(last, clientSignal)) break;
    } finally {
      disarm(t);
    }
  }
  // Every target the request could go to is benched: fail fast, saying when to come back.
  const benched = attempts.length === 0 ? bench?.error(route.model) : undefined;
  if (benched) return { ok: false, error: benched, attempts, target: undefined };
  return { ok: false, error: last ?? none(), attempts, target: lastTarget };
};

/** An attempt's start, reported when its first upstream request goes out (or at its end, for a target that sends none). */
const reportStart = (ctx: RequestContext, t: Try): void => {
  t.call.beforeFirstSend = undefined;
  ctx.upstreamHeaders = undefined;
  ctx.observers.attemptStart(ctx, t);
  t.call.headers = ctx.upstreamHeaders;
};

const reportEnd = (ctx: RequestContext, t: Try, a: Attempt, error: GatewayError | undefined): void => {
  if (t.call.beforeFirstSend) reportStart(ctx, t);
  ctx.observers.attemptEnd(ctx, t, a, error);
};

const noTarget = (): GatewayError => new GatewayError({ kind: 'unavailable', message: 'No upstream target is available.' });

/** The request's native-only feature as the 400 it is when no target speaks the client's format natively. */
const nativeOnlyError = (req: CanonicalRequest): (() => GatewayError) => {
  const n = req.nativeOnly;
  if (!n) return noTarget;
  return () =>
    invalidRequest(
      `${n.message} Only an upstream that speaks this API natively (Chat Completions: openai and OpenAI-compatible providers without field quirks; Responses: openai, azure-openai; Messages: anthropic; Gemini: gemini; Converse: bedrock; Cohere: cohere) serves it, and none of the model's targets could.`,
      n.param,
    );
};

/** The target's native pass-through for the request, when the client's format is its own. */
const nativeOf = (adapter: HttpProviderAdapter, pass: PassThroughRequest | undefined): PassThrough | undefined =>
  pass ? adapter.passThrough?.[pass.format] : undefined;

/** Non-streaming: try targets in order until one answers or a non-retryable error occurs. */
export const dispatchComplete = async (
  req: CanonicalRequest,
  route: RouteSnapshot,
  clientSignal: AbortSignal,
  pass?: PassThroughRequest,
  ctx?: RequestContext,
): Promise<CompleteOutcome> => {
  const r = await failover<{ response: CanonicalResponse; relayText?: string }>(
    route,
    clientSignal,
    nativeOnlyError(req),
    async (target, t) => {
      const adapter = target.adapter;
      // A feature only the client's own API has: targets that would translate are skipped.
      if (adapter.kind === 'local')
        return req.nativeOnly ? undefined : { value: { response: adapter.complete(req, withTarget(target)) }, status: 200 };
      const signal = t.controller.signal;
      const native = nativeOf(adapter, pass);
      // The resolved target is the UpstreamTarget (connection, upstreamModel) the adapters read.
      const direct = native && pass ? native.build(pass.body, target, false, req) : undefined;
      if (!direct && req.nativeOnly) return undefined;
      const built = direct ? t.call.prepare(direct, adapter, target) : prepareRequest(adapter, req, target, t.call);
      const upstream = await t.call.send(built instanceof Promise ? await built : built);
      if (route.strategy === 'headroom') ctx?.breakers?.headroom.note(target, upstream.headers);
      const text = await readUpstreamText(upstream, signal);
      if (!upstream.ok) throw adapter.parseError(upstream.status, t.call.scrub(text), upstream.headers);
      // Parsed either way: it validates the answer and gives usage and finish for the record.
      const response = direct && native?.parseResponse ? native.parseResponse(text) : adapter.parseResponse(text);
      if (!direct || !pass) return { value: { response }, status: upstream.status };
      return {
        value: { response, relayText: pass.answer ? pass.answer.json(text) : spliceFirstModel(text, pass.clientModel) },
        status: upstream.status,
      };
    },
    ctx,
  );
  return r.ok
    ? {
        ok: true,
        response: r.value.response,
        ...(r.value.relayText !== undefined ? { relayText: r.value.relayText } : {}),
        target: r.target,
        attempts: r.attempts,
      }
    : r;
};

/**
 * Streaming: open the upstream stream and read until the first canonical event, so that errors
 * before the stream opens (HTTP errors, an error as the first event) still fall back to the next
 * target and reach the client as a plain HTTP error.
 */
export const dispatchStream = async (
  req: CanonicalRequest,
  route: RouteSnapshot,
  clientSignal: AbortSignal,
  pass?: PassThroughRequest,
  ctx?: RequestContext,
): Promise<StreamOutcome> => {
  type Opened = Omit<OpenStream, 'attempts' | 'target'>;
  const r = await failover<Opened>(
    route,
    clientSignal,
    nativeOnlyError(req),
    async (target, t) => {
      const adapter = target.adapter;
      const abort = (reason: GatewayError) => t.controller.abort(reason);
      if (adapter.kind === 'local') {
        if (req.nativeOnly) return undefined;
        let served = false;
        const next = async () => {
          if (served) return null;
          served = true;
          return [];
        };
        return { value: { first: adapter.stream(req, withTarget(target)), next, abort, controller: t.controller }, status: 200 };
      }
      const signal = t.controller.signal;
      const native = nativeOf(adapter, pass);
      const direct: UpstreamHttpRequest | undefined = native && pass ? native.build(pass.body, withTarget(target), true, req) : undefined;
      if (!direct && req.nativeOnly) return undefined;
      const collector = direct && pass?.keepFinal ? finalCollector(pass.format) : undefined;
      const splice = direct ? pass?.answer?.splicer() : undefined;
      const relay =
        direct && pass
          ? new Relay(pass.format, target.upstreamModel, pass.clientModel, pass.includeUsage, {
              ...(splice ? { splice } : {}),
              ...(collector ? { collector } : {}),
            })
          : undefined;
      const decoder = direct && native?.createStreamDecoder ? native.createStreamDecoder() : adapter.createStreamDecoder();
      const upstream = await t.call.send(
        direct ? await t.call.prepare(direct, adapter, withTarget(target)) : await prepareRequest(adapter, req, withTarget(target), t.call),
      );
      if (route.strategy === 'headroom') ctx?.breakers?.headroom.note(target, upstream.headers);
      if (!upstream.ok)
        throw adapter.parseError(upstream.status, t.call.scrub(await readUpstreamText(upstream, signal).catch(() => '')), upstream.headers);
      if (!upstream.body) throw new GatewayError({ kind: 'bad_gateway', message: 'The upstream provider returned an empty stream.' });
      // Errors after the stream opened (in-stream error events, cuts) leave mapped by the attempt;
      // before, failover() maps them. The reader returns null again once it ended.
      let opened = false;
      const fail = (e: unknown): unknown => (opened ? t.call.fail(e) : e);
      const read =
        adapter.framing === 'sse'
          ? sseReader(decoder, upstream.body, signal, relay, fail)
          : eventReader(adapter, decoder, upstream.body, signal, relay, fail);
      let first: StreamEvent[] | null = [];
      while (first !== null && first.length === 0) first = await read();
      opened = true;
      const next = read;
      const relayed = relay
        ? { takeRelay: () => relay.take(), relayDone: () => relay.done, ...(collector ? { relayFinal: () => collector.final() } : {}) }
        : {};
      return { value: { first: first ?? [], next, abort, controller: t.controller, ...relayed }, status: upstream.status };
    },
    ctx,
  );
  return r.ok ? { ok: true, stream: { ...r.value, target: r.target, attempts: r.attempts } } : r;
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
export const dispatchExtra = async (
  endpoint: ExtraEndpoint,
  body: JsonObject,
  route: RouteSnapshot,
  clientSignal: AbortSignal,
  ctx?: RequestContext,
): Promise<ExtraOutcome> => {
  const r = await failover(
    route,
    clientSignal,
    () => notOffered(endpoint),
    async (target, t) => {
      const adapter = target.adapter;
      if (adapter.kind === 'local') {
        const json = adapter.extra?.(endpoint, body, withTarget(target));
        return json ? { value: Response.json(json), status: 200 } : undefined;
      }
      const built = adapter.buildExtraRequest?.(endpoint, body, withTarget(target));
      if (!built) return undefined;
      const signal = t.controller.signal;
      const upstream = await t.call.send(await t.call.prepare(built, adapter, withTarget(target)));
      if (route.strategy === 'headroom') ctx?.breakers?.headroom.note(target, upstream.headers);
      if (!upstream.ok)
        throw adapter.parseError(upstream.status, t.call.scrub(await readUpstreamText(upstream, signal).catch(() => '')), upstream.headers);
      const type = upstream.headers.get('content-type') ?? '';
      if (!type.includes('json')) return { value: upstream, status: upstream.status };
      const text = await readUpstreamText(upstream, signal);
      return { value: new Response(text, { status: upstream.status, headers: { 'content-type': type } }), status: upstream.status };
    },
    ctx,
  );
  return r.ok ? { ok: true, response: r.value, target: r.target, attempts: r.attempts } : r;
};
