import type { JsonObject, Usage } from '../canonical/types.ts';
import { invalidRequest } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import type { ExtraEndpoint } from '../providers/types.ts';
import { dispatchExtra } from './dispatch.ts';
import type { InferenceDeps } from './deps.ts';
import { type EndpointSpec, type InternalCaller, runPipeline, type Serving } from '../pipeline/index.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { idHeaders } from '../pipeline/answer.ts';
import { errorResponse } from './respond.ts';

const isObject = (v: unknown): v is JsonObject => isRecord(v);

/** Usage of an OpenAI-style JSON answer (`prompt_tokens`/`completion_tokens`, or `input_tokens`). */
const usageOf = (json: JsonObject): Usage | undefined => {
  const u = json.usage;
  if (!isObject(u)) return undefined;
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const input = n(u.prompt_tokens) || n(u.input_tokens) || (u.completion_tokens === undefined ? n(u.total_tokens) : 0);
  return { inputTokens: input, outputTokens: n(u.completion_tokens) || n(u.output_tokens) };
};

const serve = async (endpoint: ExtraEndpoint, s: Serving<JsonObject>): Promise<Response> => {
  const { ctx, request: body } = s;
  const ids = ctx.ids;
  const outcome = await dispatchExtra(endpoint, body, s.plan.route, s.signal, ctx);
  if (!outcome.ok) {
    s.finish({ status: outcome.error.status, attempts: outcome.attempts, error: outcome.error });
    return errorResponse(outcome.error, ids);
  }
  const up = outcome.response;
  const attempts = outcome.attempts;
  const type = up.headers.get('content-type') ?? 'application/octet-stream';
  if (!type.includes('json')) {
    await s.output?.answer({ kind: 'extra', json: undefined, contentType: type });
    s.finish({ status: up.status, attempts, response: { contentType: type } });
    return new Response(up.body, { status: up.status, headers: { 'content-type': type, ...idHeaders(ids) } });
  }
  const text = await up.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (s.output) {
    const view = await s.output.answer({ kind: 'extra', json, contentType: type });
    if (view.kind === 'extra') json = view.json;
  }
  if (isObject(json)) {
    if (typeof json.model === 'string') json.model = body.model as string;
    const usage = usageOf(json);
    const out = JSON.stringify(json);
    s.finish({ status: up.status, attempts, responseText: out, ...(usage ? { usage } : {}) });
    return new Response(out, { status: up.status, headers: { 'content-type': 'application/json', ...idHeaders(ids) } });
  }
  s.finish({ status: up.status, attempts });
  return new Response(text, { status: up.status, headers: { 'content-type': type, ...idHeaders(ids) } });
};

const specs = new Map<string, EndpointSpec<JsonObject>>();

/**
 * `/v1/completions`, `/v1/embeddings`, `/v1/images[/generations]`, `/v1/audio/speech`,
 * `/v1/rerank`: the same pipeline as the chat endpoints; the OpenAI wire is kept end to end. JSON
 * answers echo the client's model id and feed usage and cost into the record.
 */
export const handleExtra = (
  deps: InferenceDeps,
  endpoint: ExtraEndpoint,
  path: string,
  req: Request,
  ids: RequestIds,
  as?: InternalCaller,
): Promise<Response> => {
  let spec = specs.get(path);
  if (!spec) {
    spec = {
      path,
      read: (body) => {
        if (!isObject(body)) throw invalidRequest('The request body must be a JSON object.', null);
        if (typeof body.model !== 'string' || body.model === '')
          throw invalidRequest("'model' is required and must be a non-empty string.", 'model', 'missing_required_parameter');
        return { request: body, model: body.model, stream: body.stream === true };
      },
      serve: (s) => serve(endpoint, s),
      fail: (err, i) => errorResponse(err, i),
    };
    specs.set(path, spec);
  }
  return runPipeline(deps, spec, req, ids, as);
};
