import type { CanonicalResponse, FinishReason, JsonObject, StreamEvent } from '../../canonical/types.ts';
import { asGatewayError } from '../../core/errors.ts';
import type { ClientFormatCodec, EncodeContext } from '../../formats/types.ts';
import type { InferenceServing } from '../deps.ts';
import type { CacheOutcome, RequestCache } from './key.ts';
import { decodeCached, encodeCached } from './key.ts';
import { jsonResponse } from '../../pipeline/answer.ts';
import { errorResponse, type EventSource, sseResponse, type StreamSummary } from '../respond.ts';

/**
 * Serving with the response cache (contract §11): a hit is encoded from the cached canonical
 * answer in the client's format — JSON, or SSE through the format's own stream encoder when the
 * client asked to stream — with the original usage, a fresh id and no upstream call; a miss is
 * served live and its answer kept. Every answer carries `X-Gateway-Cache`.
 */

export const CACHE_HEADER = 'x-gateway-cache';

/** How the live path is run: with the cache outcome stamped on its record, and a callback for the answer to keep. */
export type LiveServe = (s: InferenceServing, keep: ((r: CanonicalResponse) => void) | undefined) => Promise<Response>;

/** A streamed answer's final object for a keeper, when the format's encoder has none (Messages). */
export type FinalOf = (sum: StreamSummary) => JsonObject;

const FINISH = new Set<string>(['stop', 'length', 'tool_calls', 'content_filter']);

/**
 * A streamed answer as the cache keeps it, when the stream's summary holds all of it (no error, no
 * reasoning and nothing cut at the summary's bound); undefined otherwise (not cached).
 */
export const answerOfStream = (sum: StreamSummary, model: string): CanonicalResponse | undefined => {
  if (sum.error) return undefined;
  const toolCalls = sum.toolCalls.filter((c) => c !== undefined);
  const held = sum.text.length + toolCalls.reduce((n, c) => n + c.arguments.length, 0);
  if (held !== sum.outputChars) return undefined;
  const finish = sum.finishReason ?? 'stop';
  return {
    id: sum.id,
    model,
    created: Math.floor(Date.now() / 1000),
    text: sum.text,
    toolCalls,
    finishReason: FINISH.has(finish) ? (finish as FinishReason) : 'stop',
    usage: sum.usage ?? { inputTokens: 0, outputTokens: 0 },
  };
};

/** A cached answer as the canonical events of a stream, in the order a live one sends them. */
export const eventsOf = (r: CanonicalResponse): StreamEvent[] => {
  const out: StreamEvent[] = [{ type: 'start', id: r.id, model: r.model }];
  if (r.reasoning) out.push({ type: 'reasoning', text: r.reasoning });
  if (r.reasoningSignature) out.push({ type: 'reasoning_signature', signature: r.reasoningSignature });
  if (r.text !== '') out.push({ type: 'text', text: r.text });
  r.toolCalls.forEach((c, index) => {
    out.push({ type: 'tool_call_start', index, id: c.id, name: c.name });
    if (c.arguments !== '') out.push({ type: 'tool_call_delta', index, arguments: c.arguments });
  });
  out.push({ type: 'finish', reason: r.finishReason }, { type: 'usage', usage: r.usage });
  return out;
};

const replay = (events: StreamEvent[]): EventSource => ({
  first: events,
  next: () => Promise.resolve(null),
  abort: () => undefined,
});

const tagged = (res: Response, outcome: CacheOutcome): Response => {
  res.headers.set(CACHE_HEADER, outcome);
  return res;
};

/** A hit, answered from the cache. */
const serveHit = async (
  codec: ClientFormatCodec,
  s: InferenceServing,
  cached: CanonicalResponse,
  ec: EncodeContext,
  streamedFinal: FinalOf,
): Promise<Response> => {
  const { ctx } = s;
  // This request's own ids: a kept Responses answer or Messages reply is a new one.
  let r: CanonicalResponse = { ...cached, id: '' };
  if (s.request.stream) {
    const ttfbMs = Math.round(performance.now() - ctx.t0);
    ctx.observers.firstByte(ctx, ttfbMs);
    const filter = s.output;
    const canonical = codec.createStreamEncoder(ec);
    return sseResponse(replay(eventsOf(r)), canonical, ctx.ids, {
      idleTimeoutMs: s.plan.route.timeoutMs,
      keepAliveMs: s.deps.keepAliveMs,
      ...(filter ? { filter: (events, final) => filter.events(events, final) } : {}),
      onDone: (sum) => {
        const ended = sum.error ? { error: sum.error, partial: { outputChars: sum.outputChars } } : {};
        s.finish({
          status: 200,
          usage: r.usage,
          attempts: [],
          ...ended,
          response: { text: sum.text, toolCalls: sum.toolCalls, finishReason: sum.finishReason ?? null },
          ttfbMs,
          cache: 'hit',
          finishReason: r.finishReason,
        });
        if (s.state?.keeper && !sum.error) void s.state.keeper.keep(canonical.final?.() ?? streamedFinal(sum));
      },
    });
  }
  try {
    if (s.output) {
      const view = await s.output.answer({ kind: 'chat', text: r.text, toolCalls: r.toolCalls, finishReason: r.finishReason });
      if (view.kind === 'chat') r = { ...r, text: view.text, toolCalls: [...view.toolCalls] };
    }
  } catch (e) {
    const err = asGatewayError(e);
    s.finish({ status: err.status, usage: r.usage, attempts: [], error: err, cache: 'hit' });
    return errorResponse(err, ctx.ids, codec);
  }
  const encoded = codec.encodeResponse(r, ec);
  const body = JSON.stringify(encoded);
  s.finish({
    status: 200,
    usage: r.usage,
    attempts: [],
    responseText: body,
    responseModel: r.model,
    finishReason: r.finishReason,
    cache: 'hit',
  });
  if (s.state?.keeper) await s.state.keeper.keep(encoded);
  return jsonResponse(200, body, ctx.ids);
};

/** Serves a request of a project with the `response-cache` setting. */
export const serveCached = async (
  codec: ClientFormatCodec,
  s: InferenceServing,
  cache: RequestCache,
  ec: EncodeContext,
  live: LiveServe,
  streamedFinal: FinalOf,
): Promise<Response> => {
  if (cache.control.read) {
    const text = await cache.store.get(cache.key);
    const hit = text === undefined ? undefined : decodeCached(text);
    if (hit) return tagged(await serveHit(codec, s, hit, ec, streamedFinal), 'hit');
  }
  const outcome: CacheOutcome = cache.control.write ? 'miss' : 'bypass';
  const finish = s.finish;
  const stamped: InferenceServing = { ...s, finish: (o) => finish({ ...o, cache: outcome }) };
  const keep = cache.control.write ? (r: CanonicalResponse) => cache.store.set(cache.key, encodeCached(r), cache.ttlMs) : undefined;
  return tagged(await live(stamped, keep), outcome);
};
