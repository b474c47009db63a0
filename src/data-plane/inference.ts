import type { CanonicalRequest, CanonicalResponse, ClientFormat, JsonObject } from '../canonical/types.ts';
import { answerOfStream, type LiveServe, serveCached } from './cache/serve.ts';
import { requestCache } from './cache/key.ts';
import { asGatewayError } from '../core/errors.ts';
import { codecFor } from '../formats/registry.ts';
import { argumentsObject } from '../formats/shared.ts';
import { messageId } from '../formats/messages/response.ts';
import type { ClientFormatCodec, EncodeContext, StreamEncoder, UrlRequest } from '../formats/types.ts';
import { GEMINI_ANSWER } from './native-answers.ts';
import { dispatchComplete, dispatchStream, type OpenStream, type PassThroughRequest } from './dispatch.ts';
import { type InternalCaller, runPipeline, withCaller } from '../pipeline/index.ts';
import type { InferenceDeps, InferenceServing, InferenceSpec } from './deps.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { jsonResponse } from '../pipeline/answer.ts';
import { errorResponse, sseResponse, type StreamSummary } from './respond.ts';
import { continuable } from './continuation.ts';
import { nativeAnswer, nativeResponsesBody } from './responses-native.ts';
import { prepareHosted } from './hosted-mcp/prepare.ts';
import { serveHosted } from './hosted-mcp/run.ts';
import { type Prepared, prepareResponses, prepareThread, type Stateful } from './stateful.ts';
import { serveBackground } from './background.ts';

/** What the pipeline reads of a decoded request: the route key, streaming, and the output cap and temperature whatever member the format names them by. */
const readOf = (creq: CanonicalRequest) => ({
  request: creq,
  model: creq.model,
  stream: creq.stream,
  maxOutputTokens: creq.maxTokens,
  temperature: creq.temperature,
});

const ENDPOINT: Record<ClientFormat, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  gemini: '/v1beta/models/{model}:generateContent',
  converse: '/model/{modelId}/converse',
  cohere: '/v2/chat',
};

/**
 * The client's body for a same-format upstream (chat, messages, responses), while no output
 * guardrail needs the canonical content. The body was validated by the codec already. Responses
 * bodies get what responses-native.ts describes (`store: false`, the gateway's ids and fields).
 */
const passThroughOf = (format: ClientFormat, s: InferenceServing, body: unknown): PassThroughRequest | undefined => {
  if (s.output !== undefined || body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  // Mid-stream fallback: a continued stream is framed by one encoder from its first event (continuation.ts).
  if (s.request.stream && continues(s)) return undefined;
  const base = {
    format,
    clientModel: s.request.model,
    includeUsage: s.request.includeUsage,
    ...(s.state?.keeper ? { keepFinal: true } : {}),
  };
  if (format === 'gemini') return { ...base, body: body as JsonObject, answer: GEMINI_ANSWER(s.request.model) };
  if (format !== 'responses') return { ...base, body: body as JsonObject };
  const answer = nativeAnswer(s.request, `resp_${s.ctx.ids.requestId.replace(/-/g, '')}`, s.state?.keeper?.responseFields);
  return { ...base, body: nativeResponsesBody(body as JsonObject, s.state?.keeper, s.plan.catalog), answer };
};

/**
 * Whether the request's stream may be continued by another target (project setting
 * `mid-stream-fallback`, a route with more than one target, no feature only a native upstream serves).
 */
const continues = (s: InferenceServing): boolean => {
  const route = s.plan.route;
  return route.midStreamFallback && s.request.nativeOnly === undefined && route.tiers.flat().length + route.fallback.length > 1;
};

/**
 * A relayed stream's encoder: the upstream's frames are written as they came (OpenStream.takeRelay),
 * so events only feed the record; the end adds `[DONE]` to a chat stream whose upstream sent none,
 * and errors are the client format's own error event, as on the translated path.
 */
const relayEncoder = (format: ClientFormat, open: OpenStream, inner: StreamEncoder): StreamEncoder => ({
  push: () => '',
  end: () => (format === 'chat' && !open.relayDone?.() ? 'data: [DONE]\n\n' : ''),
  error: (e) => inner.error(e),
});

/** Receives the answer for the response cache (a miss of a project with the `response-cache` setting). */
type KeepAnswer = ((r: CanonicalResponse) => void) | undefined;

const complete = async (
  codec: ClientFormatCodec,
  s: InferenceServing,
  pass: PassThroughRequest | undefined,
  cache?: KeepAnswer,
): Promise<Response> => {
  const { ctx, request: creq } = s;
  const outcome = await dispatchComplete(creq, s.plan.route, s.signal, pass, ctx);
  if (!outcome.ok) {
    s.finish({ status: outcome.error.status, attempts: outcome.attempts, error: outcome.error });
    return errorResponse(outcome.error, ctx.ids, codec);
  }
  let r = outcome.response;
  try {
    if (s.output) {
      const view = await s.output.answer({ kind: 'chat', text: r.text, toolCalls: r.toolCalls, finishReason: r.finishReason });
      if (view.kind === 'chat' && (view.text !== r.text || view.toolCalls !== r.toolCalls))
        r = { ...r, text: view.text, toolCalls: [...view.toolCalls] };
    }
  } catch (e) {
    const err = asGatewayError(e);
    s.finish({ status: err.status, usage: r.usage, attempts: outcome.attempts, error: err });
    return errorResponse(err, ctx.ids, codec);
  }
  const body = outcome.relayText ?? JSON.stringify(codec.encodeResponse(r, encodeContext(s)));
  s.finish({
    status: 200,
    usage: r.usage,
    attempts: outcome.attempts,
    responseText: body,
    responseId: r.id,
    responseModel: r.model,
    finishReason: r.finishReason,
  });
  cache?.(r);
  // Kept before answering: the client's next turn may follow at once.
  if (s.state?.keeper) await s.state.keeper.keep(JSON.parse(body) as JsonObject);
  return jsonResponse(200, body, ctx.ids);
};

const stream = async (
  codec: ClientFormatCodec,
  s: InferenceServing,
  pass: PassThroughRequest | undefined,
  cache?: KeepAnswer,
): Promise<Response> => {
  const { ctx, request: creq, deps } = s;
  const outcome = await dispatchStream(creq, s.plan.route, s.signal, pass, ctx);
  if (!outcome.ok) {
    s.finish({ status: outcome.error.status, attempts: outcome.attempts, error: outcome.error });
    return errorResponse(outcome.error, ctx.ids, codec);
  }
  const open = !outcome.stream.takeRelay && continues(s) ? continuable(outcome.stream, creq, s.plan.route, s.signal, ctx) : undefined;
  const canonical = codec.createStreamEncoder(encodeContext(s));
  const encoder = outcome.stream.takeRelay ? relayEncoder(codec.id, outcome.stream, canonical) : canonical;
  const ttfbMs = Math.round(performance.now() - ctx.t0);
  ctx.observers.firstByte(ctx, ttfbMs);
  const filter = s.output;
  return sseResponse(open ?? outcome.stream, encoder, ctx.ids, {
    idleTimeoutMs: s.plan.route.timeoutMs,
    keepAliveMs: deps.keepAliveMs,
    ...(filter ? { filter: (events, final) => filter.events(events, final) } : {}),
    onDone: (sum: StreamSummary) => {
      const response = {
        text: sum.text,
        toolCalls: sum.toolCalls.filter(Boolean),
        finishReason: sum.finishReason ?? null,
        // A continued stream's record body lists its attempts (the broken ones with the error code of the break).
        ...(open?.continued() ? { attempts: outcome.stream.attempts } : {}),
      };
      const ended = sum.error ? { error: sum.error, partial: { outputChars: sum.outputChars } } : {};
      s.finish({
        status: 200,
        usage: sum.usage,
        attempts: outcome.stream.attempts,
        ...ended,
        response,
        ttfbMs,
        responseId: sum.id,
        ...(sum.finishReason ? { finishReason: sum.finishReason } : {}),
      });
      if (s.state?.keeper && !sum.error)
        void s.state.keeper.keep(outcome.stream.relayFinal?.() ?? canonical.final?.() ?? streamedMessage(sum, encodeContext(s)));
      if (cache) {
        const answer = answerOfStream(sum, s.request.model);
        if (answer) cache(answer);
      }
    },
  });
};

const encodeContext = (s: InferenceServing): EncodeContext => ({
  model: s.request.model,
  requestId: s.ctx.ids.requestId,
  includeUsage: s.request.includeUsage,
  receivedAt: s.ctx.receivedAt,
  ...(s.state?.keeper?.responseFields ? { responseFields: s.state.keeper.responseFields } : {}),
});

/** A streamed Messages answer as its final message, when it was translated (a relayed stream keeps every block: relay-final.ts). */
const streamedMessage = (sum: StreamSummary, ctx: EncodeContext): JsonObject => {
  const content: JsonObject[] = [];
  if (sum.text !== '') content.push({ type: 'text', text: sum.text });
  for (const call of sum.toolCalls)
    if (call) content.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsObject(call.arguments) });
  return { id: messageId(sum.id, ctx), type: 'message', role: 'assistant', content };
};

const projectOf = (ctx: { key?: { project: { id: string } } }): string => ctx.key?.project.id ?? '';

/** The client's output-limit member per format. */
const MAX_FIELDS: Record<ClientFormat, readonly string[]> = {
  chat: ['max_completion_tokens', 'max_tokens'],
  messages: ['max_tokens'],
  responses: ['max_output_tokens'],
  gemini: [],
  converse: [],
  cohere: ['max_tokens'],
};

/** Gemini and Converse: the output limit is a member of a member. */
const MAX_NESTED: Partial<Record<ClientFormat, readonly [string, string]>> = {
  gemini: ['generationConfig', 'maxOutputTokens'],
  converse: ['inferenceConfig', 'maxTokens'],
};

/**
 * A requested output limit above the catalog's `maxOutputTokens` is clamped to it (the upstream
 * would refuse it), in the canonical request and in a body passed through; the catalog value is
 * also the default for upstreams that require one (Anthropic), unless the connection sets its own.
 */
const clampOutput = (format: ClientFormat, s: InferenceServing): void => {
  const max = s.plan.catalog.maxOutputTokens;
  if (!(max > 0)) return;
  s.request.outputLimit = max;
  if (s.request.maxTokens !== undefined && s.request.maxTokens > max) s.request.maxTokens = max;
  const body = s.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const b = body as JsonObject;
  const nested = MAX_NESTED[format];
  if (nested) {
    const [outer, inner] = nested;
    const o = b[outer];
    if (o !== null && typeof o === 'object' && !Array.isArray(o) && typeof o[inner] === 'number' && o[inner] > max)
      s.body = { ...b, [outer]: { ...o, [inner]: max } };
    return;
  }
  const over = MAX_FIELDS[format].filter((f) => typeof b[f] === 'number' && (b[f] as number) > max);
  if (over.length === 0) return;
  const out: JsonObject = { ...b };
  for (const f of over) out[f] = max;
  s.body = out;
};

/** A prepared body and the endpoint's state (stored conversation state, hosted MCP tools, background). */
const stateOf = ({ body, ...state }: Prepared): { body: unknown; state: Stateful } => ({ body, state });

const specs = new Map<ClientFormat, InferenceSpec>();
const specFor = (format: ClientFormat): InferenceSpec => {
  let spec = specs.get(format);
  if (!spec) {
    const codec = codecFor(format);
    spec = {
      path: ENDPOINT[format],
      ...(format === 'responses'
        ? {
            prepare: async (body, ctx, deps) =>
              stateOf(
                prepareHosted(
                  await prepareResponses(deps.conversations, projectOf(ctx), body, ctx.ids.requestId.replace(/-/g, '')),
                  ctx.key,
                  ctx.headers,
                  deps.snapshots.current,
                ),
              ),
          }
        : format === 'messages'
          ? { prepare: async (body, ctx, deps) => stateOf(await prepareThread(deps.conversations, projectOf(ctx), body)) }
          : {}),
      read: (body) => {
        const creq = codec.decodeRequest(body);
        return readOf(creq);
      },
      serve: (s) => {
        clampOutput(format, s);
        // Translated requests asking for reasoning are refused for a model that does not reason (providers/reasoning.ts).
        s.request.modelReasons = s.plan.catalog.capabilities.includes('reasoning');
        const beta = s.ctx.headers?.get('anthropic-beta');
        if (beta)
          s.request.anthropicBeta = beta
            .split(',')
            .map((b) => b.trim())
            .filter((b) => b !== '');
        const run = (r: InferenceServing): Promise<Response> => {
          // The gateway's own MCP tools: served through the canonical path, round after round (hosted-mcp/run.ts); never cached.
          if (r.state?.hosted) return serveHosted(codec, r, r.state.hosted, encodeContext(r));
          const pass = passThroughOf(format, r, r.body);
          // The response cache: one property read for projects without the setting.
          if (r.ctx.key?.project.responseCache) {
            const cache = requestCache(r.deps.responseCache, r.ctx.key, format, r.request.model, r.body, r.ctx.headers);
            if (cache) {
              const live: LiveServe = (c, keep) => (c.request.stream ? stream(codec, c, pass, keep) : complete(codec, c, pass, keep));
              return serveCached(codec, r, cache, encodeContext(r), live, (sum) => streamedMessage(sum, encodeContext(r)));
            }
          }
          return r.request.stream ? stream(codec, r, pass) : complete(codec, r, pass);
        };
        // Responses `background: true`: answered at once, run by the gateway (background.ts).
        return s.state?.background ? serveBackground(s, run) : run(s);
      },
      fail: (err, ids) => errorResponse(err, ids, codec),
      release: (state) => state.keeper?.release?.(),
    };
    specs.set(format, spec);
  }
  return spec;
};

/**
 * One inference request in any client format, end to end. `url`: the model and streaming as the
 * path gives them (Gemini, Converse), for a spec of this request's own.
 */
export const handleInference = (
  deps: InferenceDeps,
  format: ClientFormat,
  req: Request,
  ids: RequestIds,
  as?: InternalCaller,
  url?: UrlRequest,
): Promise<Response> => runPipeline(deps, url ? withUrl(format, url) : specFor(format), req, ids, as);

/** The format's spec reading the model and streaming from the URL (Gemini, Converse). */
const withUrl = (format: ClientFormat, url: UrlRequest): InferenceSpec => {
  const codec = codecFor(format);
  return {
    ...specFor(format),
    read: (body) => {
      const creq = codec.decodeRequest(body, url);
      return readOf(creq);
    },
  };
};

/** `GET /v1/models`: the key's routable models, serialised once per snapshot revision. */
export const handleModels = (deps: InferenceDeps, req: Request, ids: RequestIds): Promise<Response> =>
  withCaller(
    deps,
    '/v1/models',
    req,
    ids,
    async (_ctx, door) => jsonResponse(200, door.key.project.modelListJson, ids),
    (e) => errorResponse(e, ids),
  );
