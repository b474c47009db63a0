import type { JsonObject } from '../canonical/types.ts';
import { connectError } from '../core/errors.ts';
import type { ConversationStore, StoredConversation } from '../core/conversation-store.ts';
import type { ControlDeps } from './deps.ts';
import { authenticate, body, fail, json, planeOf } from './dataplane-protocol.ts';

/**
 * Stored Responses and Messages threads for separate data planes (contract §2 and §5): the store
 * is the management plane's (the same ConversationStore the embedded data plane uses), so what a
 * customer's data plane stored is usable through any other data plane serving the same project.
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

const PREFIX = '/dataplane.v1.DataplaneService';
const MAX_ID = 256;

const text = (b: Record<string, unknown>, field: string): string => {
  const v = b[field];
  if (typeof v !== 'string' || v === '' || v.length > MAX_ID) throw connectError('invalid_argument', `${field}: a non-empty string (max ${MAX_ID})`, field);
  return v;
};

const conversationOf = (v: unknown): StoredConversation => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw connectError('invalid_argument', 'conversation: an object', 'conversation');
  const c = v as JsonObject;
  if ((c.kind !== 'response' && c.kind !== 'thread') || typeof c.id !== 'string' || c.id === '' || c.id.length > MAX_ID || typeof c.createdAt !== 'number')
    throw connectError('invalid_argument', 'conversation: kind (response or thread), id and createdAt are required', 'conversation');
  if (c.kind === 'response' && (typeof c.response !== 'object' || c.response === null || !Array.isArray(c.input)))
    throw connectError('invalid_argument', 'conversation: a response needs response and input', 'conversation');
  if (c.kind === 'thread' && !Array.isArray(c.messages)) throw connectError('invalid_argument', 'conversation: a thread needs messages', 'conversation');
  return c as unknown as StoredConversation;
};

type Op = (store: ConversationStore, projectId: string, b: Record<string, unknown>) => Promise<unknown>;

export const conversationRoutes = (deps: ControlDeps, store: ConversationStore): Record<string, (req: Request) => Promise<Response>> => {
  const handle =
    (op: Op) =>
    async (req: Request): Promise<Response> => {
      try {
        const a = await authenticate(deps, req);
        if (a instanceof Response) return a;
        const b = await body(req);
        const projectId = text(b, 'projectId');
        const plane = await planeOf(deps, a);
        if (!plane.projectUuids.includes(projectId)) throw connectError('permission_denied', 'the project is not served by this data plane', 'projectId');
        return json(200, await op(store, projectId, b));
      } catch (e) {
        return fail(e);
      }
    };
  return {
    [`${PREFIX}/GetConversation`]: handle(async (s, p, b) => ({ conversation: (await s.get(p, text(b, 'id'))) ?? null })),
    [`${PREFIX}/GetConversationItem`]: handle(async (s, p, b) => ({ item: (await s.getItem(p, text(b, 'itemId'))) ?? null })),
    [`${PREFIX}/PutConversation`]: handle(async (s, p, b) => {
      await s.put(p, conversationOf(b.conversation));
      return {};
    }),
    [`${PREFIX}/DeleteConversation`]: handle(async (s, p, b) => ({ deleted: await s.delete(p, text(b, 'id')) })),
  };
};
