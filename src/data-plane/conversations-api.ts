import type { JsonObject } from '../canonical/types.ts';
import { GatewayError, invalidRequest } from '../core/errors.ts';
import {
  appendToConversation,
  conversationItems,
  conversationMetadata,
  conversationObject,
  loadConversation,
  newConversationId,
} from './conversation-items.ts';
import { type Conversations, notStored, storeUnavailable } from './conversations.ts';
import type { InferenceDeps } from './deps.ts';
import { withCaller } from '../pipeline/index.ts';
import { readJsonBody } from '../pipeline/body.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { jsonResponse } from '../pipeline/answer.ts';
import { errorResponse } from './respond.ts';
import { inputItemsPage } from './stored-responses.ts';

/**
 * OpenAI's Conversations API (issue 26 defect 7), per project, over the stored-conversations
 * store (so any data plane of the customer serves it, under GATEWAY_RESPONSE_RETENTION):
 *
 *   POST /v1/conversations                                create ({items, metadata})
 *   GET | POST | DELETE /v1/conversations/{id}            retrieve, update metadata, delete
 *   GET | POST /v1/conversations/{id}/items               list (order, after, limit), add ({items})
 *   GET | DELETE /v1/conversations/{id}/items/{item_id}   retrieve, delete (answers the conversation)
 *
 * Another project's conversation is a 404 like an unknown one.
 */

const PATH = /^\/v1\/conversations(?:\/([^/]+)(?:\/items(?:\/([^/]+))?)?)?$/;

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

const bodyOf = async (deps: InferenceDeps, req: Request): Promise<JsonObject> => {
  const read = await readJsonBody(req, deps.bodyLimits);
  if (!isObject(read.value)) throw invalidRequest('The request body must be a JSON object.', null);
  return read.value;
};

const methodNotAllowed = (req: Request): GatewayError =>
  new GatewayError({
    kind: 'invalid_request',
    status: 405,
    errorCode: 'method_not_allowed',
    message: `Method ${req.method} is not allowed on ${new URL(req.url).pathname}.`,
  });

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

const route = async (deps: InferenceDeps, conv: Conversations, projectId: string, req: Request): Promise<JsonObject> => {
  const url = new URL(req.url);
  const m = PATH.exec(url.pathname);
  if (!m) throw notStored('Conversation', url.pathname, null);
  const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
  const itemsPath = url.pathname.includes('/items');
  const itemId = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
  const method = req.method;
  if (id === undefined) {
    if (method !== 'POST') throw methodNotAllowed(req);
    const body = await bodyOf(deps, req);
    const c = {
      kind: 'conversation' as const,
      id: newConversationId(),
      createdAt: nowSeconds(),
      metadata: conversationMetadata(body.metadata),
      items: conversationItems(body.items),
    };
    await conv.put(projectId, c);
    return conversationObject(c);
  }
  if (!itemsPath) {
    if (method === 'GET') return conversationObject(await loadConversation(conv, projectId, id, null));
    if (method === 'DELETE') {
      await loadConversation(conv, projectId, id, null);
      await conv.delete(projectId, id);
      return { id, object: 'conversation.deleted', deleted: true };
    }
    if (method !== 'POST') throw methodNotAllowed(req);
    const body = await bodyOf(deps, req);
    if (body.metadata === undefined) throw invalidRequest("'metadata' is required.", 'metadata');
    const c = await loadConversation(conv, projectId, id, null);
    const next = { ...c, metadata: conversationMetadata(body.metadata) };
    await conv.put(projectId, next);
    return conversationObject(next);
  }
  if (itemId === undefined) {
    if (method === 'GET') return inputItemsPage((await loadConversation(conv, projectId, id, null)).items, url.searchParams);
    if (method !== 'POST') throw methodNotAllowed(req);
    const body = await bodyOf(deps, req);
    if (!Array.isArray(body.items)) throw invalidRequest("'items' is required (an array of items).", 'items');
    const added = await appendToConversation(conv, projectId, id, conversationItems(body.items));
    return {
      object: 'list',
      data: added,
      first_id: (added[0]?.id as string | undefined) ?? null,
      last_id: (added.at(-1)?.id as string | undefined) ?? null,
      has_more: false,
    };
  }
  const c = await loadConversation(conv, projectId, id, null);
  const at = c.items.findIndex((i) => i.id === itemId);
  if (at < 0) throw notStored('Item', itemId, null);
  if (method === 'GET') return c.items[at] as JsonObject;
  if (method !== 'DELETE') throw methodNotAllowed(req);
  await conv.put(projectId, { ...c, items: c.items.filter((_, i) => i !== at) });
  return conversationObject(c);
};

/** The endpoint as records name it: `/v1/conversations`, `/v1/conversations/{id}`, `…/items`, `…/items/{item_id}`. */
const pathOf = (pathname: string): string => {
  const m = PATH.exec(pathname);
  if (!m?.[1]) return '/v1/conversations';
  return m[2] !== undefined
    ? '/v1/conversations/{id}/items/{item_id}'
    : pathname.includes('/items')
      ? '/v1/conversations/{id}/items'
      : '/v1/conversations/{id}';
};

export const handleConversations = (deps: InferenceDeps, req: Request, ids: RequestIds): Promise<Response> =>
  withCaller(
    deps,
    pathOf(new URL(req.url).pathname),
    req,
    ids,
    async (_ctx, door) => {
      const conv = deps.conversations;
      if (!conv) throw storeUnavailable('conversation');
      return jsonResponse(200, JSON.stringify(await route(deps, conv, door.key.project.id, req)), ids);
    },
    (e) => errorResponse(e, ids),
  );
