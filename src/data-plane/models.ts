/**
 * `GET /v1/models/{id}` (OpenAI `models.retrieve`): one model of the key's routable models, the
 * same object `GET /v1/models` lists, or a 404 `model_not_found` in OpenAI's error shape. It
 * shares the `/v1/models/*` route with the Gemini methods (`POST …/{model}:{method}`).
 */
import { GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import { withCaller } from '../pipeline/index.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { jsonResponse } from '../pipeline/answer.ts';
import type { InferenceDeps } from './deps.ts';
import { errorResponse } from './respond.ts';

const PREFIX = '/v1/models/';

/** The model id of the path (the SDK percent-encodes it: `a%2Fb` is `a/b`); undefined when not decodable. */
const idOf = (req: Request): string | undefined => {
  const raw = new URL(req.url).pathname.slice(PREFIX.length);
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
};

/** The entry of `id` in a serialised model list, serialised (the list is small and this is no hot path). */
const entryOf = (listJson: string, id: string): string | undefined => {
  const list: unknown = JSON.parse(listJson);
  const data = isRecord(list) ? list['data'] : undefined;
  const entry = Array.isArray(data) ? data.find((e) => isRecord(e) && e['id'] === id) : undefined;
  return entry === undefined ? undefined : JSON.stringify(entry);
};

const notFound = (id: string): GatewayError =>
  new GatewayError({
    kind: 'model_not_found',
    message: `The model '${id}' does not exist or this key cannot use it (GET /v1/models lists those it can).`,
    param: 'model',
  });

export const handleModel = (deps: InferenceDeps, req: Request, ids: RequestIds): Promise<Response> =>
  withCaller(
    deps,
    '/v1/models/{id}',
    req,
    ids,
    async (_ctx, door) => {
      const id = idOf(req) ?? '';
      const entry = id === '' ? undefined : entryOf(door.key.project.modelListJson, id);
      if (entry === undefined) throw notFound(id);
      return jsonResponse(200, entry, ids);
    },
    (e) => errorResponse(e, ids),
  );
