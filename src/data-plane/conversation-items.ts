import type { JsonObject, JsonValue } from '../canonical/types.ts';
import { invalidRequest } from '../core/errors.ts';
import { type Conversations, notStored, type StoredConversationObject } from './conversations.ts';

/**
 * OpenAI conversation objects (issue 26 defect 7) over the stored-conversations store: what
 * Responses `conversation` and the Conversations API (conversations-api.ts) share. A conversation
 * is one row (kind `conversation`) holding its items, oldest first, under the same retention as
 * stored responses; every write renews it.
 */

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The most items one create call adds (OpenAI's limit). */
export const MAX_ITEMS_PER_CALL = 20;

const randomHex = (): string => crypto.randomUUID().replace(/-/g, '');

const ITEM_PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' };

/** Responses `conversation`: a `conv_…` id or `{id}`; undefined when absent. */
export const conversationParam = (v: JsonValue | undefined): string | undefined => {
  if (v === undefined || v === null) return undefined;
  const id = isObject(v) ? v.id : v;
  if (typeof id !== 'string' || id === '') throw invalidRequest('\'conversation\' must be a conversation id or {"id": …}.', 'conversation');
  return id;
};

/** An item as a conversation lists it: an id, a type, and a message's text as content parts. */
export const conversationItem = (item: JsonValue, param: string): JsonObject => {
  if (!isObject(item)) throw invalidRequest('Each item must be an object.', param);
  const type = typeof item.type === 'string' ? item.type : 'message';
  if (type === 'item_reference')
    throw invalidRequest('Item references cannot be added to a conversation; add the item itself.', `${param}.type`);
  const out: JsonObject = {
    id: typeof item.id === 'string' && item.id !== '' ? item.id : `${ITEM_PREFIX[type] ?? 'item'}_${randomHex()}`,
    ...item,
    type,
  };
  if (type !== 'message') return out;
  const role = item.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') {
    throw invalidRequest("A message item needs a 'role' of user, assistant, system or developer.", `${param}.role`);
  }
  if (typeof item.content === 'string') out.content = [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: item.content }];
  else if (!Array.isArray(item.content))
    throw invalidRequest("A message item needs 'content' (a string or content parts).", `${param}.content`);
  out.status ??= 'completed';
  return out;
};

/** Items a call adds (`items`: at most MAX_ITEMS_PER_CALL). */
export const conversationItems = (v: JsonValue | undefined, param = 'items'): JsonObject[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidRequest(`'${param}' must be an array of items.`, param);
  if (v.length > MAX_ITEMS_PER_CALL) throw invalidRequest(`At most ${MAX_ITEMS_PER_CALL} items can be added at once.`, param);
  return v.map((item, i) => conversationItem(item, `${param}.${i}`));
};

/** The caller's conversation, or the 404 naming `param`. */
export const loadConversation = async (
  conv: Conversations,
  projectId: string,
  id: string,
  param: string | null = 'conversation',
): Promise<StoredConversationObject> => {
  const found = await conv.get(projectId, id);
  if (found?.kind !== 'conversation') throw notStored('Conversation', id, param);
  return found;
};

/** Appends items (each given an id when it has none) and stores the conversation; returns the items as added. */
export const appendToConversation = async (
  conv: Conversations,
  projectId: string,
  id: string,
  items: readonly JsonObject[],
): Promise<JsonObject[]> => {
  const c = await loadConversation(conv, projectId, id);
  const held = new Set(c.items.map((i) => i.id));
  const added = items.map((item, i) => conversationItem(item, `items.${i}`)).filter((item) => !held.has(item.id));
  await conv.put(projectId, { ...c, items: [...c.items, ...added] });
  return added;
};

/** OpenAI's conversation object. */
export const conversationObject = (c: StoredConversationObject): JsonObject => ({
  id: c.id,
  object: 'conversation',
  created_at: c.createdAt,
  metadata: c.metadata,
});

/** `metadata`: at most 16 string values (keys up to 64 characters, values up to 512), as on OpenAI. */
export const conversationMetadata = (v: JsonValue | undefined): JsonObject => {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw invalidRequest("'metadata' must be an object of strings.", 'metadata');
  const entries = Object.entries(v);
  if (entries.length > 16) throw invalidRequest("'metadata' takes at most 16 keys.", 'metadata');
  for (const [k, val] of entries) {
    if (k.length > 64) throw invalidRequest('Metadata keys are at most 64 characters.', `metadata.${k}`);
    if (typeof val !== 'string' || val.length > 512)
      throw invalidRequest('Metadata values are strings of at most 512 characters.', `metadata.${k}`);
  }
  return v;
};

export const newConversationId = (): string => `conv_${randomHex()}${randomHex().slice(0, 16)}`;
