import type { JsonObject } from '../canonical/types.ts';
import { invalidRequest } from '../core/errors.ts';
import { messagesCodec } from '../formats/messages/index.ts';
import { estimateTokens } from '../governance/token-bound.ts';
import type { ResolvedTarget } from '../propagation/snapshot.ts';
import { readJsonBody } from '../pipeline/body.ts';
import type { InferenceDeps } from './deps.ts';
import { withCaller } from '../pipeline/index.ts';
import { type Plan, resolve } from '../pipeline/plan.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { jsonResponse } from '../pipeline/answer.ts';
import { errorResponse } from './respond.ts';
import { readUpstreamText, UpstreamCall } from './upstream.ts';

/**
 * `POST /v1/messages/count_tokens` (Anthropic shape) and `POST /v1/responses/input_tokens` (OpenAI
 * shape). The route's primary target counts when its API can (Anthropic's count_tokens for a
 * Messages body to an Anthropic-family upstream; OpenAI's /v1/responses/input_tokens for an
 * OpenAI upstream); otherwise the answer is an estimate (about 4 characters of the request's JSON
 * per token), flagged with `estimated: true` and the header `x-gateway-token-count: estimated`.
 */

type Kind = 'messages' | 'responses';

const COUNTED_FIELDS: Record<Kind, readonly string[]> = {
  messages: ['system', 'messages', 'tools', 'tool_choice', 'thinking'],
  responses: ['instructions', 'input', 'tools', 'tool_choice', 'text', 'reasoning'],
};

/** The estimate of the counted fields' JSON (governance/token-bound.ts), at least 1. */
export const estimateBodyTokens = (body: JsonObject, kind: Kind): number => {
  let chars = 0;
  for (const f of COUNTED_FIELDS[kind]) if (body[f] !== undefined) chars += JSON.stringify(body[f]).length;
  return Math.max(1, estimateTokens(chars));
};

const answer = (kind: Kind, tokens: number): JsonObject =>
  kind === 'messages'
    ? { input_tokens: tokens, estimated: true }
    : { object: 'response.input_tokens', input_tokens: tokens, estimated: true };

/** The upstream request that counts `body` at `target`, when its API has a counting endpoint. */
const countingRequest = (kind: Kind, target: ResolvedTarget, body: JsonObject) => {
  const adapter = target.adapter;
  if (adapter.kind !== 'http' || !adapter.passThrough) return undefined;
  const upstreamTarget = { connection: target.connection, upstreamModel: target.upstreamModel };
  const messages = adapter.passThrough.messages;
  const chat = adapter.passThrough.chat;
  if (kind === 'messages' && messages && adapter.id === 'anthropic') {
    const { stream: _stream, ...rest } = body;
    const built = messages.build(rest, upstreamTarget, false);
    if (!built) return undefined;
    // The pass-through supplies a default max_tokens, which count_tokens does not take.
    const { max_tokens: _default, ...counted } = JSON.parse(built.body) as JsonObject;
    return { ...built, url: built.url.replace(/\/v1\/messages$/, '/v1/messages/count_tokens'), body: JSON.stringify(counted) };
  }
  if (kind === 'responses' && adapter.id === 'openai' && chat) {
    const { stream: _stream, store: _store, max_output_tokens: _max, ...rest } = body;
    const built = chat.build(rest, upstreamTarget, false);
    return built && { ...built, url: built.url.replace(/\/chat\/completions$/, '/responses/input_tokens') };
  }
  return undefined;
};

const PATHS: Record<Kind, string> = { messages: '/v1/messages/count_tokens', responses: '/v1/responses/input_tokens' };

export const handleCountTokens = (deps: InferenceDeps, kind: Kind, req: Request, ids: RequestIds): Promise<Response> =>
  withCaller(
    deps,
    PATHS[kind],
    req,
    ids,
    async (ctx, door) => {
      const read = await readJsonBody(req, deps.bodyLimits);
      ctx.bodyText = read.text;
      const value = read.value;
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw invalidRequest('The request body must be a JSON object.');
      const body = value as JsonObject;
      if (typeof body.model !== 'string' || body.model === '') throw invalidRequest("'model' is required.", 'model');
      ctx.model = body.model;
      let plan: Plan;
      try {
        plan = resolve(door.snapshot, door.key, body.model);
      } catch (e) {
        plan = resolve(await door.again(e), door.key, body.model);
      }
      const target = plan.route.tiers[0]?.[0];
      const upstream = target && countingRequest(kind, target, body);
      if (target && upstream && target.adapter.kind === 'http') {
        const call = new UpstreamCall(target.connection, req.signal);
        const res = await call.send(
          await call.prepare(upstream, target.adapter, { connection: target.connection, upstreamModel: target.upstreamModel }),
        );
        const text = await readUpstreamText(res, req.signal);
        if (res.ok) return jsonResponse(200, text, ids);
        // An upstream without the endpoint (404) is estimated; any other refusal is the client's answer.
        if (res.status !== 404) throw target.adapter.parseError(res.status, call.scrub(text), res.headers);
      }
      return jsonResponse(200, JSON.stringify(answer(kind, estimateBodyTokens(body, kind))), ids, { 'x-gateway-token-count': 'estimated' });
    },
    (e) => errorResponse(e, ids, kind === 'messages' ? messagesCodec : undefined),
  );
