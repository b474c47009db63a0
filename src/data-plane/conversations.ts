import type { JsonObject, JsonValue } from '../canonical/types.ts';
import { GatewayError } from '../core/errors.ts';
import { describeError, log } from '../core/log.ts';

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

export type StoredConversation = StoredResponse | StoredThread;

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

/**
 * The store as the request path uses it. A write is answered to the client before it lands (a
 * stream's last event goes out first), so reads of an id whose write is still under way wait for
 * it: a client that sends its next turn at once finds the previous one.
 */
export class Conversations {
  readonly #pending = new Map<string, Promise<void>>();
  /** Thread replies a request of this process is continuing from now. */
  readonly #claims = new Set<string>();

  /** Claims a reply for one continue at a time (this process only); false when already claimed. */
  claim(projectId: string, id: string): boolean {
    const k = `${projectId}\u0000${id}`;
    if (this.#claims.has(k)) return false;
    this.#claims.add(k);
    return true;
  }

  release(projectId: string, id: string): void {
    this.#claims.delete(`${projectId}\u0000${id}`);
  }

  constructor(readonly store: ConversationStore) {}

  async #settled(projectId: string, id: string): Promise<void> {
    const p = this.#pending.get(`${projectId}\u0000${id}`);
    if (p) await p;
  }

  async get(projectId: string, id: string): Promise<StoredConversation | undefined> {
    await this.#settled(projectId, id);
    return this.store.get(projectId, id);
  }

  async getItem(projectId: string, itemId: string): Promise<JsonObject | undefined> {
    await this.#settled(projectId, itemId);
    return this.store.getItem(projectId, itemId);
  }

  /** Starts the write; resolves when it landed. A failed write is logged (the answer was already given). */
  put(projectId: string, c: StoredConversation): Promise<void> {
    const keys = [c.id, ...(c.kind === 'response' ? itemIdsOf(c).map((i) => String(i.id)) : [])].map((id) => `${projectId}\u0000${id}`);
    const p = this.store.put(projectId, c).catch((e: unknown) => {
      log.every('conversation-store-put', 'error', 'storing a conversation failed; later references to it will be refused', { error: describeError(e) });
    });
    for (const k of keys) this.#pending.set(k, p);
    void p.finally(() => {
      for (const k of keys) if (this.#pending.get(k) === p) this.#pending.delete(k);
    });
    return p;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    await this.#settled(projectId, id);
    return this.store.delete(projectId, id);
  }
}

/** An id the gateway does not hold (or holds for another project, or expired): 404, never ignored. */
export const notStored = (what: string, id: string, param: string | null, details?: { [key: string]: string }): GatewayError =>
  new GatewayError({
    kind: 'not_found',
    message: `${what} '${id}' was not found (unknown, deleted, expired, or stored with store: false).`,
    param,
    ...(details ? { details } : {}),
  });

export const storeUnavailable = (param: string): GatewayError =>
  new GatewayError({ kind: 'invalid_request', message: 'Stored conversations are not available on this data plane.', param });
