import type { CanonicalRequest, ClientFormat } from '../canonical/types.ts';
import { asGatewayError } from '../core/errors.ts';
import { codecFor } from '../formats/registry.ts';
import type { ClientFormatCodec } from '../formats/types.ts';
import { authenticate } from './auth.ts';
import { dispatchComplete, dispatchStream } from './dispatch.ts';
import { RawJson } from './records.ts';
import { type Plan, resolve } from './resolve.ts';
import { errorResponse, jsonResponse, type RequestIds, sseResponse, type StreamSummary } from './respond.ts';
import { finishTrace, type InferenceDeps, noSnapshot, openTrace, parseJsonBody, type Trace } from './trace.ts';

export type { InferenceDeps } from './trace.ts';

const ENDPOINT: Record<ClientFormat, string> = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' };

const complete = async (deps: InferenceDeps, tr: Trace, codec: ClientFormatCodec, creq: CanonicalRequest, plan: Plan, signal: AbortSignal): Promise<Response> => {
  const outcome = await dispatchComplete(creq, plan.route, signal);
  if (!outcome.ok) {
    finishTrace(deps, tr, outcome.error.status, { attempts: outcome.attempts, error: outcome.error });
    return errorResponse(outcome.error, tr.ids, codec);
  }
  const body = JSON.stringify(codec.encodeResponse(outcome.response, { model: creq.model, requestId: tr.ids.requestId, includeUsage: creq.includeUsage }));
  finishTrace(deps, tr, 200, { usage: outcome.response.usage, attempts: outcome.attempts, response: new RawJson(body) });
  return jsonResponse(200, body, tr.ids);
};

const stream = async (deps: InferenceDeps, tr: Trace, codec: ClientFormatCodec, creq: CanonicalRequest, plan: Plan, signal: AbortSignal): Promise<Response> => {
  const outcome = await dispatchStream(creq, plan.route, signal);
  if (!outcome.ok) {
    finishTrace(deps, tr, outcome.error.status, { attempts: outcome.attempts, error: outcome.error });
    return errorResponse(outcome.error, tr.ids, codec);
  }
  const encoder = codec.createStreamEncoder({ model: creq.model, requestId: tr.ids.requestId, includeUsage: creq.includeUsage });
  const ttfbMs = Math.round(performance.now() - tr.t0);
  return sseResponse(outcome.stream, encoder, tr.ids, {
    idleTimeoutMs: plan.route.timeoutMs,
    keepAliveMs: deps.keepAliveMs,
    onDone: (s: StreamSummary) => {
      const response = { text: s.text, toolCalls: s.toolCalls.filter(Boolean), finishReason: s.finishReason ?? null };
      finishTrace(deps, tr, 200, { usage: s.usage, attempts: outcome.stream.attempts, ...(s.error ? { error: s.error } : {}), response, ttfbMs });
    },
  });
};

/** One inference request in any of the three client formats, end to end. */
export const handleInference = async (deps: InferenceDeps, format: ClientFormat, req: Request, ids: RequestIds): Promise<Response> => {
  const codec = codecFor(format);
  const tr = openTrace(deps, ENDPOINT[format], req, ids);
  try {
    const snapshot = deps.snapshots.current;
    if (!snapshot) throw noSnapshot();
    const key = authenticate(req.headers, snapshot, tr.receivedAt);
    tr.key = key instanceof Promise ? await key : key;
    tr.body = await parseJsonBody(req, tr, deps.bodyLimits);
    const creq = codec.decodeRequest(tr.body);
    tr.model = creq.model;
    tr.stream = creq.stream;
    tr.plan = resolve(snapshot, tr.key, creq.model);
    return creq.stream ? await stream(deps, tr, codec, creq, tr.plan, req.signal) : await complete(deps, tr, codec, creq, tr.plan, req.signal);
  } catch (e) {
    const err = asGatewayError(e);
    finishTrace(deps, tr, err.status, { error: err });
    return errorResponse(err, ids, codec);
  }
};

/** `GET /v1/models`: the key's routable models, serialised once per snapshot revision. */
export const handleModels = async (deps: InferenceDeps, req: Request, ids: RequestIds): Promise<Response> => {
  try {
    const snapshot = deps.snapshots.current;
    if (!snapshot) throw noSnapshot();
    const key = await authenticate(req.headers, snapshot, Date.now());
    return jsonResponse(200, key.project.modelListJson, ids);
  } catch (e) {
    return errorResponse(asGatewayError(e), ids);
  }
};
