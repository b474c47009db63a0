import { MAX_CONVERSATION_ID, PROTOCOL, type ProtocolInput, type ProtocolOutput, protocolPath } from '../api/dataplane.ts';
import { connectError } from '../core/errors.ts';
import type { ConversationStore } from '../core/conversation-store.ts';
import type { ControlDeps } from './deps.ts';
import { answer, authenticate, body, fail, planeOf, valid } from './dataplane-protocol.ts';

/**
 * Stored Responses and Messages threads for separate data planes (contract §2 and §5): the store
 * is the management plane's (the same ConversationStore the embedded data plane uses), so what a
 * customer's data plane stored is usable through any other data plane serving the same project.
 *
 * Request and response schemas: src/api/dataplane.ts.
 *
 * - `GetConversation` `{projectId, id}` → `{conversation}` (null when not held)
 * - `GetConversationItem` `{projectId, itemId}` → `{item}` (null when not held)
 * - `PutConversation` `{projectId, conversation}` → `{}`
 * - `DeleteConversation` `{projectId, id}` → `{deleted}`
 *
 * `projectId` is the project's row id (what the data plane's snapshot names projects by); it must
 * be a project the calling data plane serves (its workspace's project or one attached to a project
 * gateway hosted on it), else `permission_denied`.
 */

const REFUSALS: Record<string, string> = {
  projectId: `projectId: a non-empty string (max ${MAX_CONVERSATION_ID})`,
  id: `id: a non-empty string (max ${MAX_CONVERSATION_ID})`,
  itemId: `itemId: a non-empty string (max ${MAX_CONVERSATION_ID})`,
  conversation:
    'conversation: a stored response {kind: "response", id, createdAt, response, input} or thread {kind: "thread", id, createdAt, messages}',
};

type ConversationCall = 'GetConversation' | 'GetConversationItem' | 'PutConversation' | 'DeleteConversation';

export const conversationRoutes = (deps: ControlDeps, store: ConversationStore): Record<string, (req: Request) => Promise<Response>> => {
  /** Authenticates, validates the request against the call's schema and checks the project is served by the calling data plane. */
  const handle =
    <N extends ConversationCall>(name: N, op: (input: ProtocolInput<N>) => Promise<ProtocolOutput<N>>) =>
    async (req: Request): Promise<Response> => {
      try {
        const a = await authenticate(deps, req);
        if (a instanceof Response) return a;
        const input: ProtocolInput<N> = valid(PROTOCOL[name].input, await body(req), REFUSALS);
        const plane = await planeOf(deps, a);
        if (!plane.projectUuids.includes(input.projectId))
          throw connectError('permission_denied', 'the project is not served by this data plane', 'projectId');
        return answer<N>(await op(input));
      } catch (e) {
        return fail(e);
      }
    };
  return {
    [protocolPath('GetConversation')]: handle('GetConversation', async (b) => ({
      conversation: (await store.get(b.projectId, b.id)) ?? null,
    })),
    [protocolPath('GetConversationItem')]: handle('GetConversationItem', async (b) => ({
      item: (await store.getItem(b.projectId, b.itemId)) ?? null,
    })),
    [protocolPath('PutConversation')]: handle('PutConversation', async (b) => {
      await store.put(b.projectId, b.conversation);
      return {};
    }),
    [protocolPath('DeleteConversation')]: handle('DeleteConversation', async (b) => ({ deleted: await store.delete(b.projectId, b.id) })),
  };
};
