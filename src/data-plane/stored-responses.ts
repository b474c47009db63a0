import type { JsonObject } from '../canonical/types.ts';
import { asGatewayError, invalidRequest } from '../core/errors.ts';
import { authenticate } from './auth.ts';
import { type Conversations, notStored, type StoredResponse } from './conversations.ts';
import type { InferenceDeps } from './pipeline/context.ts';
import { noSnapshot } from './pipeline/index.ts';
import { errorResponse, jsonResponse, type RequestIds } from './respond.ts';

/**
 * `GET /v1/responses/{id}`, `DELETE /v1/responses/{id}`, `GET /v1/responses/{id}/input_items`
 * (OpenAI shapes), for the caller's project only: another project's id is a 404 like an unknown one.
 */

type Op = 'get' | 'delete' | 'input_items';

const PATH = /^\/v1\/responses\/([^/]+)(\/input_items)?$/;

const storedResponse = async (conv: Conversations | undefined, projectId: string, id: string): Promise<StoredResponse> => {
  const found = conv ? await conv.get(projectId, id) : undefined;
  if (found?.kind !== 'response') throw notStored('Response', id, 'response_id');
  return found;
};

const clampLimit = (raw: string | null): number => {
  if (raw === null) return 20;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw invalidRequest("'limit' must be an integer from 1 to 100.", 'limit');
  return n;
};

/** OpenAI's list envelope over the input items, `order` desc by default, paged with `after`. */
export const inputItemsPage = (items: readonly JsonObject[], q: URLSearchParams): JsonObject => {
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidRequest("'order' must be 'asc' or 'desc'.", 'order');
  const limit = clampLimit(q.get('limit'));
  const all = order === 'asc' ? [...items] : [...items].reverse();
  const after = q.get('after');
  let start = 0;
  if (after !== null) {
    const at = all.findIndex((i) => i.id === after);
    if (at < 0) throw notStored('Item', after, 'after');
    start = at + 1;
  }
  const data = all.slice(start, start + limit);
  return {
    object: 'list',
    data,
    first_id: (data[0]?.id as string | undefined) ?? null,
    last_id: (data[data.length - 1]?.id as string | undefined) ?? null,
    has_more: start + limit < all.length,
  };
};

export const handleStoredResponse = async (deps: InferenceDeps, req: Request, ids: RequestIds): Promise<Response> => {
  try {
    const snapshot = deps.snapshots.current;
    if (!snapshot) throw noSnapshot();
    const key = await authenticate(req.headers, snapshot, Date.now());
    const url = new URL(req.url);
    const m = PATH.exec(url.pathname);
    const id = decodeURIComponent(m?.[1] ?? '');
    const op: Op = m?.[2] ? 'input_items' : req.method === 'DELETE' ? 'delete' : 'get';
    const projectId = key.project.id;
    const conv = deps.conversations;
    if (op === 'delete') {
      if (!conv || !(await conv.delete(projectId, id))) throw notStored('Response', id, 'response_id');
      return jsonResponse(200, JSON.stringify({ id, object: 'response', deleted: true }), ids);
    }
    const stored = await storedResponse(conv, projectId, id);
    return jsonResponse(200, JSON.stringify(op === 'get' ? stored.response : inputItemsPage(stored.input, url.searchParams)), ids);
  } catch (e) {
    return errorResponse(asGatewayError(e), ids);
  }
};
