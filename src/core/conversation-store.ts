import type { JsonObject, JsonValue } from '../canonical/types.ts';

/**
 * Conversation state that clients keep on the server (contract §2, "Stateful client features"):
 * stored Responses (`previous_response_id`, `item_reference`, GET/DELETE /v1/responses/{id}) and
 * Messages threads (`thread: {type: "continue", previous_message_id}`).
 *
 * The data plane only sees this interface. The embedded data plane implements it over the
 * management plane's database (src/conversations/); a data plane running as its own process will
 * implement it over the management plane's API, so that what one data plane of a customer stored
 * is usable through any other: the store is the management plane's, never the data plane's.
 * Everything is scoped by the project's row id: another project's key never sees it.
 */

/** A stored Responses answer: the response object as answered and its (expanded) input items. */
export interface StoredResponse {
  kind: 'response';
  id: string;
  /** Unix seconds. */
  createdAt: number;
  response: JsonObject;
  /** Every input item the response was generated from (earlier turns included), each with an `id`. */
  input: JsonObject[];
  /** A response created with `background: true` (data-plane/background.ts): who runs it, and its streamed events. */
  background?: BackgroundRun;
}

/**
 * The run of a background response. The worker renews `leaseUntil` while it runs; a reader that
 * finds the response still queued or in progress past it marks it failed (the worker is gone: its
 * data plane restarted or was lost), so nothing waits for an answer that will never come.
 */
export interface BackgroundRun {
  /** The worker's process (random per process start). */
  owner: string;
  /** Epoch ms; 0 once the run finished. */
  leaseUntil: number;
  /** A streamed run's events so far (each with its `sequence_number`), for `GET …?stream=true&starting_after=N`. */
  events?: JsonObject[];
  /** Set by a cancel through another data plane: the worker aborts at its next heartbeat. */
  cancelRequested?: boolean;
}

/** An OpenAI conversation object (`POST /v1/conversations`) and its items, oldest first, each with an `id`. */
export interface StoredConversationObject {
  kind: 'conversation';
  id: string;
  createdAt: number;
  metadata: JsonObject;
  items: JsonObject[];
}

/** A Messages thread as of one reply: what a `continue` from that reply's id prepends. */
export interface StoredThread {
  kind: 'thread';
  id: string;
  createdAt: number;
  system?: JsonValue;
  tools?: JsonValue;
  /** The whole conversation, the reply (as an assistant message) last. */
  messages: JsonObject[];
  /** A later turn continued from this reply (each reply is continued at most once, as on Anthropic). */
  continued?: boolean;
}

export type StoredConversation = StoredResponse | StoredThread | StoredConversationObject;

export interface ConversationStore {
  get(projectId: string, id: string): Promise<StoredConversation | undefined>;
  /** One item (input or output) of a stored response, by its item id. */
  getItem(projectId: string, itemId: string): Promise<JsonObject | undefined>;
  /** Stores (or replaces) a conversation; for a response, its input and output items are indexed by id. */
  put(projectId: string, conversation: StoredConversation): Promise<void>;
  /** Deletes a conversation and the items it introduced; false when there was none. */
  delete(projectId: string, id: string): Promise<boolean>;
}

/** The item ids a stored response makes referable (input and output items that carry an id). */
export const itemIdsOf = (c: StoredResponse): JsonObject[] => {
  const out: JsonObject[] = [];
  const output = c.response.output;
  for (const item of [...c.input, ...(Array.isArray(output) ? output : [])]) {
    if (item !== null && typeof item === 'object' && !Array.isArray(item) && typeof item.id === 'string') out.push(item);
  }
  return out;
};
