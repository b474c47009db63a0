/**
 * The Gemini endpoints (contract §13): `POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse` and `:countTokens`, and the same under `/v1/models/…`. The
 * model and the method are in the path; the key comes as `x-goog-api-key`, `?key=` or
 * `Authorization: Bearer` (the first two are presented to the one door as the bearer). Every
 * answer and refusal is in Google's shape.
 */
import type { JsonObject } from '../canonical/types.ts';
import { GatewayError, invalidRequest } from '../core/errors.ts';
import { decodeGeminiRequest, geminiCodec } from '../formats/gemini/index.ts';
import { estimateTokens } from '../governance/token-bound.ts';
import { readJsonBody } from '../pipeline/body.ts';
import { jsonResponse } from '../pipeline/answer.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { withCaller } from '../pipeline/index.ts';
import { type Plan, resolve } from '../pipeline/plan.ts';
import { buildGeminiPassThrough } from '../providers/gemini/request.ts';
import type { InferenceDeps } from './deps.ts';
import { handleInference } from './inference.ts';
import { errorResponse } from './respond.ts';
import { readUpstreamText, UpstreamCall } from './upstream.ts';

/** The key as Google's SDKs send it, as the bearer the door reads; the request unchanged when it already has one. */
export const withGoogleKey = (req: Request): Request => {
  if (req.headers.has('authorization')) return req;
  const key = req.headers.get('x-goog-api-key') ?? new URL(req.url).searchParams.get('key');
  if (key === null || key === '') return req;
  const headers = new Headers(req.headers);
  headers.set('authorization', `Bearer ${key}`);
  return new Request(req, { headers });
};

const notFound = (path: string): GatewayError =>
  new GatewayError({ kind: 'not_found', errorCode: 'unknown_endpoint', message: `Unknown endpoint: POST ${path}` });

/** `{prefix}{model}:{method}` → its parts, or undefined. */
const callOf = (pathname: string, prefix: string): { model: string; method: string } | undefined => {
  let rest: string;
  try {
    rest = decodeURIComponent(pathname.slice(prefix.length));
  } catch {
    return undefined;
  }
  const at = rest.lastIndexOf(':');
  if (at <= 0) return undefined;
  return { model: rest.slice(0, at), method: rest.slice(at + 1) };
};

const COUNT_PATH = '/v1beta/models/{model}:countTokens';

/** The generateContent body a countTokens request counts (`generateContentRequest`, or its `contents`). */
const countedBody = (value: unknown): JsonObject => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidRequest('The request body must be a JSON object.');
  const body = value as JsonObject;
  const inner = body['generateContentRequest'];
  if (inner !== undefined) {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner))
      throw invalidRequest("'generateContentRequest' must be an object.", 'generateContentRequest');
    const { model: _model, ...rest } = inner;
    return rest;
  }
  for (const k of Object.keys(body)) if (k !== 'contents') throw invalidRequest(`Unknown parameter: '${k}'.`, k);
  return { contents: body['contents'] ?? null };
};

const COUNTED = ['contents', 'systemInstruction', 'tools', 'toolConfig'] as const;

/**
 * `:countTokens`: counted by the route's primary target when it is a Gemini upstream (its own
 * `countTokens`, the body as sent); otherwise estimated (about 4 characters of the counted
 * members' JSON per token) with the header `x-gateway-token-count: estimated`.
 */
const countTokens = (deps: InferenceDeps, req: Request, ids: RequestIds, model: string, raw: Request): Promise<Response> =>
  withCaller(
    deps,
    COUNT_PATH,
    req,
    ids,
    async (ctx, door) => {
      const read = await readJsonBody(req, deps.bodyLimits);
      ctx.bodyText = read.text;
      const body = countedBody(read.value);
      // Validated as the generateContent body it counts (a 400 in Google's shape otherwise).
      decodeGeminiRequest(body, { model, stream: false });
      ctx.model = model;
      let plan: Plan;
      try {
        plan = resolve(door.snapshot, door.key, model);
      } catch (e) {
        plan = resolve(await door.again(e), door.key, model);
      }
      const target = plan.route.tiers[0]?.[0];
      if (target && target.adapter.kind === 'http' && target.adapter.passThrough?.gemini) {
        const upstreamTarget = { connection: target.connection, upstreamModel: target.upstreamModel };
        const call = new UpstreamCall(target.connection, raw.signal);
        const built = buildGeminiPassThrough({ contents: body['contents'] ?? null }, upstreamTarget, false, 'countTokens');
        const whole = body['systemInstruction'] !== undefined || body['tools'] !== undefined;
        const sent = whole
          ? { ...built, body: JSON.stringify({ generateContentRequest: { model: `models/${target.upstreamModel}`, ...body } }) }
          : built;
        const res = await call.send(await call.prepare(sent, target.adapter, upstreamTarget));
        const text = await readUpstreamText(res, raw.signal);
        if (res.ok) return jsonResponse(200, text, ids);
        throw target.adapter.parseError(res.status, call.scrub(text), res.headers);
      }
      let chars = 0;
      for (const k of COUNTED) if (body[k] !== undefined) chars += JSON.stringify(body[k]).length;
      return jsonResponse(200, JSON.stringify({ totalTokens: Math.max(1, estimateTokens(chars)) }), ids, {
        'x-gateway-token-count': 'estimated',
      });
    },
    (e) => errorResponse(e, ids, geminiCodec),
  );

/** One request under `/v1beta/models/` or `/v1/models/` (`prefix`). */
export const handleGemini = (deps: InferenceDeps, prefix: string, req: Request, ids: RequestIds): Promise<Response> | Response => {
  const url = new URL(req.url);
  const call = callOf(url.pathname, prefix);
  if (!call || call.model === '') return errorResponse(notFound(url.pathname), ids, geminiCodec);
  const authed = withGoogleKey(req);
  switch (call.method) {
    case 'generateContent':
      return handleInference(deps, 'gemini', authed, ids, undefined, { model: call.model, stream: false });
    case 'streamGenerateContent':
      if (url.searchParams.get('alt') !== 'sse')
        return errorResponse(
          invalidRequest('streamGenerateContent is served as server-sent events only: add ?alt=sse (as the Google SDKs do).', 'alt'),
          ids,
          geminiCodec,
        );
      return handleInference(deps, 'gemini', authed, ids, undefined, { model: call.model, stream: true });
    case 'countTokens':
      return countTokens(deps, authed, ids, call.model, req);
    default:
      return errorResponse(notFound(url.pathname), ids, geminiCodec);
  }
};
