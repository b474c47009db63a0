import type { JsonObject, Usage } from '../canonical/types.ts';
import { asGatewayError, invalidRequest } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import type { ExtraEndpoint } from '../providers/types.ts';
import { authenticate } from './auth.ts';
import { dispatchExtra } from './dispatch.ts';
import { resolve } from './resolve.ts';
import { errorResponse, idHeaders, type RequestIds } from './respond.ts';
import { finishTrace, type InferenceDeps, noSnapshot, openTrace, parseJsonBody } from './trace.ts';

const isObject = (v: unknown): v is JsonObject => isRecord(v);

/** Usage of an OpenAI-style JSON answer (`prompt_tokens`/`completion_tokens`, or `input_tokens`). */
const usageOf = (json: JsonObject): Usage | undefined => {
  const u = json.usage;
  if (!isObject(u)) return undefined;
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const input = n(u.prompt_tokens) || n(u.input_tokens) || (u.completion_tokens === undefined ? n(u.total_tokens) : 0);
  return { inputTokens: input, outputTokens: n(u.completion_tokens) || n(u.output_tokens) };
};

/**
 * `/v1/completions`, `/v1/embeddings`, `/v1/images[/generations]`, `/v1/audio/speech`,
 * `/v1/rerank`: authenticated and routed by `model` like the chat endpoints; the OpenAI wire is
 * kept end to end. JSON answers echo the client's model id and feed usage and cost into the record.
 */
export const handleExtra = async (deps: InferenceDeps, endpoint: ExtraEndpoint, path: string, req: Request, ids: RequestIds): Promise<Response> => {
  const tr = openTrace(deps, path, req, ids);
  try {
    const snapshot = deps.snapshots.current;
    if (!snapshot) throw noSnapshot();
    const key = authenticate(req.headers, snapshot, tr.receivedAt);
    tr.key = key instanceof Promise ? await key : key;
    const body = await parseJsonBody(req, undefined, deps.bodyLimits);
    if (!isObject(body)) throw invalidRequest('The request body must be a JSON object.', null);
    tr.body = body;
    if (typeof body.model !== 'string' || body.model === '') throw invalidRequest("'model' is required and must be a non-empty string.", 'model', 'missing_required_parameter');
    tr.model = body.model;
    tr.stream = body.stream === true;
    tr.plan = resolve(snapshot, tr.key, body.model);
    const outcome = await dispatchExtra(endpoint, body, tr.plan.route, req.signal);
    if (!outcome.ok) {
      finishTrace(deps, tr, outcome.error.status, { attempts: outcome.attempts, error: outcome.error });
      return errorResponse(outcome.error, ids);
    }
    const up = outcome.response;
    const type = up.headers.get('content-type') ?? 'application/octet-stream';
    if (!type.includes('json')) {
      finishTrace(deps, tr, up.status, { attempts: outcome.attempts, response: { contentType: type } });
      return new Response(up.body, { status: up.status, headers: { 'content-type': type, ...idHeaders(ids) } });
    }
    const text = await up.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (isObject(json)) {
      if (typeof json.model === 'string') json.model = body.model;
      const usage = usageOf(json);
      finishTrace(deps, tr, up.status, { attempts: outcome.attempts, response: json, ...(usage ? { usage } : {}) });
      return new Response(JSON.stringify(json), { status: up.status, headers: { 'content-type': 'application/json', ...idHeaders(ids) } });
    }
    finishTrace(deps, tr, up.status, { attempts: outcome.attempts });
    return new Response(text, { status: up.status, headers: { 'content-type': type, ...idHeaders(ids) } });
  } catch (e) {
    const err = asGatewayError(e);
    finishTrace(deps, tr, err.status, { error: err });
    return errorResponse(err, ids);
  }
};
