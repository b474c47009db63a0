import type { JsonObject } from '../../canonical/types.ts';
import { GatewayError } from '../../core/errors.ts';
import { describeError, log } from '../../core/log.ts';
import type { ConversationStore, StoredConversation } from '../conversations.ts';

/**
 * The ConversationStore of a separate data plane: the management plane's store, reached over the
 * data plane protocol (`/dataplane.v1.DataplaneService/{Get,Put,Delete}Conversation`,
 * `GetConversationItem`) with the service account's JWT. Nothing is kept locally, so a response
 * stored through one data plane of a customer is usable through any other serving its project.
 *
 * Each call has a short deadline (CONVERSATION_CALL_TIMEOUT_MS). When the management plane cannot
 * be reached, or answers with an error, the request that needed the conversation fails with 503
 * `conversation_store_unavailable` in the client's format; nothing is guessed or dropped silently.
 */

export const CONVERSATION_CALL_TIMEOUT_MS = 5_000;

export type ProtocolCall = (path: string, body: string, timeoutMs: number) => Promise<Response>;

const PREFIX = '/dataplane.v1.DataplaneService';

export const conversationStoreUnavailable = (): GatewayError =>
  new GatewayError({
    kind: 'unavailable',
    errorCode: 'conversation_store_unavailable',
    message: 'Stored conversations are temporarily unavailable (the management plane cannot be reached); try again shortly.',
  });

export class RemoteConversationStore implements ConversationStore {
  constructor(
    private readonly call: ProtocolCall,
    private readonly timeoutMs = CONVERSATION_CALL_TIMEOUT_MS,
  ) {}

  async #post(op: string, payload: JsonObject): Promise<JsonObject> {
    let res: Response;
    try {
      res = await this.call(`${PREFIX}/${op}`, JSON.stringify(payload), this.timeoutMs);
    } catch (e) {
      log.every('conversation-store-unreachable', 'warn', 'the management plane is unreachable for stored conversations', { op, error: describeError(e) }, 30_000);
      throw conversationStoreUnavailable();
    }
    const text = await res.text().catch(() => '');
    if (res.status !== 200) {
      log.every('conversation-store-refused', 'warn', 'the management plane refused a stored-conversation call', { op, status: res.status }, 30_000);
      throw conversationStoreUnavailable();
    }
    try {
      const v: unknown = JSON.parse(text);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as JsonObject;
    } catch {
      // falls through
    }
    throw conversationStoreUnavailable();
  }

  async get(projectId: string, id: string): Promise<StoredConversation | undefined> {
    const r = await this.#post('GetConversation', { projectId, id });
    const c = r.conversation;
    return c !== null && typeof c === 'object' && !Array.isArray(c) ? (c as unknown as StoredConversation) : undefined;
  }

  async getItem(projectId: string, itemId: string): Promise<JsonObject | undefined> {
    const r = await this.#post('GetConversationItem', { projectId, itemId });
    const item = r.item;
    return item !== null && typeof item === 'object' && !Array.isArray(item) ? item : undefined;
  }

  async put(projectId: string, conversation: StoredConversation): Promise<void> {
    await this.#post('PutConversation', { projectId, conversation: conversation as unknown as JsonObject });
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    const r = await this.#post('DeleteConversation', { projectId, id });
    return r.deleted === true;
  }
}
