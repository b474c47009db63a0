import { ApiError, type ManagementClient } from '../../api/client.ts';
import type { ProtocolInput, ProtocolName, ProtocolOutput } from '../../api/dataplane.ts';
import type { JsonObject } from '../../canonical/types.ts';
import { GatewayError } from '../../core/errors.ts';
import { describeError, log } from '../../core/log.ts';
import type { ConversationStore, StoredConversation } from '../conversations.ts';

/**
 * The ConversationStore of a separate data plane: the management plane's store, reached over the
 * data plane protocol (`/dataplane.v1.DataplaneService/{Get,Put,Delete}Conversation`,
 * `GetConversationItem`, src/api/dataplane.ts) through the management client, as the service
 * account. Nothing is kept locally, so a response stored through one data plane of a customer is
 * usable through any other serving its project.
 *
 * Each call has a short deadline (CONVERSATION_CALL_TIMEOUT_MS). When the management plane cannot
 * be reached, or answers with an error, the request that needed the conversation fails with 503
 * `conversation_store_unavailable` in the client's format; nothing is guessed or dropped silently.
 */

export const CONVERSATION_CALL_TIMEOUT_MS = 5_000;

type ConversationCall = Extract<ProtocolName, 'GetConversation' | 'GetConversationItem' | 'PutConversation' | 'DeleteConversation'>;

/** What the store needs of the management client (client.ts `ManagementClient`). */
export type ProtocolClient = Pick<ManagementClient, 'protocol'>;

export const conversationStoreUnavailable = (): GatewayError =>
  new GatewayError({
    kind: 'unavailable',
    errorCode: 'conversation_store_unavailable',
    message: 'Stored conversations are temporarily unavailable (the management plane cannot be reached); try again shortly.',
  });

export class RemoteConversationStore implements ConversationStore {
  constructor(
    private readonly client: ProtocolClient,
    private readonly timeoutMs = CONVERSATION_CALL_TIMEOUT_MS,
  ) {}

  async #call<N extends ConversationCall>(name: N, input: ProtocolInput<N>): Promise<ProtocolOutput<N>> {
    try {
      return await this.client.protocol(name, input, { timeoutMs: this.timeoutMs, attempts: 1 });
    } catch (e) {
      if (e instanceof ApiError && e.status !== 0)
        log.every(
          'conversation-store-refused',
          'warn',
          'the management plane refused a stored-conversation call',
          { op: name, status: e.status, code: e.code },
          30_000,
        );
      else
        log.every(
          'conversation-store-unreachable',
          'warn',
          'the management plane is unreachable for stored conversations',
          { op: name, error: describeError(e) },
          30_000,
        );
      throw conversationStoreUnavailable();
    }
  }

  async get(projectId: string, id: string): Promise<StoredConversation | undefined> {
    return (await this.#call('GetConversation', { projectId, id })).conversation ?? undefined;
  }

  async getItem(projectId: string, itemId: string): Promise<JsonObject | undefined> {
    return (await this.#call('GetConversationItem', { projectId, itemId })).item ?? undefined;
  }

  async put(projectId: string, conversation: StoredConversation): Promise<void> {
    await this.#call('PutConversation', { projectId, conversation });
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return (await this.#call('DeleteConversation', { projectId, id })).deleted;
  }
}
