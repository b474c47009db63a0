import type { JsonObject } from '../canonical/types.ts';
import { invalidRequest } from '../core/errors.ts';
import type { KeySnapshot } from '../propagation/snapshot.ts';
import { CANCELLED } from './background-runs.ts';
import { isTerminal, localSource, storeSource, tailResponse, workerLost } from './background.ts';
import { type Conversations, notStored, type StoredResponse } from './conversations.ts';
import type { InferenceDeps } from './deps.ts';
import { withCaller } from '../pipeline/index.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { jsonResponse } from '../pipeline/answer.ts';
import { errorResponse } from './respond.ts';

/**
 * `GET /v1/responses/{id}` (`?stream=true&starting_after=N` for a streamed background response),
 * `DELETE /v1/responses/{id}`, `GET /v1/responses/{id}/input_items`, `POST /v1/responses/{id}/cancel`
 * (OpenAI shapes), for the caller's project only: another project's id is a 404 like an unknown one.
 */

type Op = 'get' | 'delete' | 'input_items' | 'cancel';

const PATH = /^\/v1\/responses\/([^/]+)(\/input_items|\/cancel)?$/;

/**
 * A background response still queued or in progress whose worker is gone (its lease ran out, or it
 * was this process's and is no longer running) is marked failed, once, by whoever reads it.
 */
const settleLost = async (conv: Conversations, projectId: string, stored: StoredResponse): Promise<StoredResponse> => {
  const run = stored.background;
  if (!run || run.leaseUntil === 0 || isTerminal(stored.response)) return stored;
  if (conv.runs.get(projectId, stored.id)) return stored;
  if (run.owner !== conv.runs.owner && run.leaseUntil > Date.now()) return stored;
  const failed: StoredResponse = {
    ...stored,
    response: { ...stored.response, status: 'failed', error: workerLost() },
    background: { ...run, leaseUntil: 0 },
  };
  await conv.write(projectId, failed);
  return failed;
};

const storedResponse = async (conv: Conversations | undefined, projectId: string, id: string): Promise<StoredResponse> => {
  const found = conv ? await conv.get(projectId, id) : undefined;
  if (!conv || found?.kind !== 'response') throw notStored('Response', id, 'response_id');
  return settleLost(conv, projectId, found);
};

/** OpenAI's answers: only background responses are cancelled; a finished one is a 400, a cancelled one is answered again. */
const cancel = async (conv: Conversations, projectId: string, id: string): Promise<StoredResponse> => {
  const stored = await storedResponse(conv, projectId, id);
  const run = stored.background;
  if (!run) throw invalidRequest('Only responses created with background=true can be cancelled.', 'response_id');
  const status = String(stored.response.status);
  if (status === 'cancelled') return stored;
  if (isTerminal(stored.response)) throw invalidRequest(`Cannot cancel a ${status} response.`, 'response_id');
  const job = conv.runs.get(projectId, id);
  if (job) {
    job.controller.abort(CANCELLED);
    await job.stored;
    return storedResponse(conv, projectId, id);
  }
  // Another data plane runs it: it sees the request at its next heartbeat and aborts.
  const cancelled: StoredResponse = {
    ...stored,
    response: { ...stored.response, status: 'cancelled' },
    background: { ...run, cancelRequested: true },
  };
  await conv.write(projectId, cancelled);
  return cancelled;
};

/** `starting_after`: a sequence number (absent: from the first event). */
const startingAfter = (raw: string | null): number => {
  if (raw === null || raw === '') return -1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < -1) throw invalidRequest("'starting_after' must be an event's sequence number.", 'starting_after');
  return n;
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

/** The endpoint as records name it: `/v1/responses/{id}` and its sub-paths. */
const pathOf = (m: RegExpExecArray | null): string => `/v1/responses/{id}${m?.[2] ?? ''}`;

export const handleStoredResponse = (deps: InferenceDeps, req: Request, ids: RequestIds): Promise<Response> => {
  const url = new URL(req.url);
  const m = PATH.exec(url.pathname);
  return withCaller(
    deps,
    pathOf(m),
    req,
    ids,
    (_ctx, door) => serveStored(deps, door.key, req, url, m, ids),
    (e) => errorResponse(e, ids),
  );
};

const serveStored = async (
  deps: InferenceDeps,
  key: KeySnapshot,
  req: Request,
  url: URL,
  m: RegExpExecArray | null,
  ids: RequestIds,
): Promise<Response> => {
  const id = decodeURIComponent(m?.[1] ?? '');
  const op: Op = m?.[2] === '/input_items' ? 'input_items' : m?.[2] === '/cancel' ? 'cancel' : req.method === 'DELETE' ? 'delete' : 'get';
  const projectId = key.project.id;
  const conv = deps.conversations;
  if (op === 'delete') {
    const found = conv ? await conv.get(projectId, id) : undefined;
    if (!conv || found?.kind !== 'response' || !(await conv.delete(projectId, id))) throw notStored('Response', id, 'response_id');
    return jsonResponse(200, JSON.stringify({ id, object: 'response', deleted: true }), ids);
  }
  if (op === 'cancel') {
    if (!conv) throw notStored('Response', id, 'response_id');
    return jsonResponse(200, JSON.stringify((await cancel(conv, projectId, id)).response), ids);
  }
  const stored = await storedResponse(conv, projectId, id);
  if (op === 'get' && url.searchParams.get('stream') === 'true' && conv) {
    if (!stored.background?.events) throw invalidRequest('Only background responses created with stream: true can be streamed.', 'stream');
    const after = startingAfter(url.searchParams.get('starting_after'));
    const job = conv.runs.get(projectId, id);
    const source = job
      ? localSource(job)
      : storeSource(async () => {
          const found = await conv.get(projectId, id);
          return found?.kind === 'response' ? settleLost(conv, projectId, found) : undefined;
        });
    return tailResponse(source, after, ids, ids.streamEnded, deps.keepAliveMs);
  }
  return jsonResponse(200, JSON.stringify(op === 'get' ? stored.response : inputItemsPage(stored.input, url.searchParams)), ids);
};
