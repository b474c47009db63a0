import type { JsonObject, JsonValue } from '../canonical/types.ts';
import { GatewayError, invalidRequest } from '../core/errors.ts';
import { describeError, log } from '../core/log.ts';
import type { HostedMcp } from './hosted-mcp/prepare.ts';
import {
  type BackgroundRun,
  type Conversations,
  notStored,
  type StoredResponse,
  type StoredThread,
  storeUnavailable,
} from './conversations.ts';
import { appendToConversation, conversationParam, loadConversation } from './conversation-items.ts';

/**
 * What the request path does with server-side conversation state before a request is read and
 * after it was answered: Responses `previous_response_id` / `item_reference` / `store`, and
 * Messages `thread`. References are resolved into the full request before it is read, so every
 * upstream (translated or passed through) gets the whole conversation; nothing is ever ignored.
 */

/** Keeps what was answered. */
export interface Keeper {
  /** Responses: members set on the answer object (`store`, `previous_response_id`). */
  responseFields?: JsonObject;
  /**
   * Called once with the client-visible answer object (a Responses `response`, a Messages
   * `message`); a background response's final state comes with its run (data-plane/background.ts).
   */
  keep(answer: JsonObject, run?: BackgroundRun): Promise<void>;
  /** Responses: stores the response object as it stands (a background response queued, in progress, failed, cancelled), nothing else. */
  hold?(response: JsonObject, run: BackgroundRun): Promise<void>;
  /** Called once when the request is finished (answered or not); keep(), when called, follows in the same tick. */
  release?(): void;
}

/** What a Responses or Messages request keeps from `prepare` to its end: the endpoint's own state (pipeline Serving.state). */
export interface Stateful {
  keeper?: Keeper;
  /** Responses `mcp` tools the gateway runs itself (data-plane/hosted-mcp). */
  hosted?: HostedMcp;
  /** Responses `background: true`: the gateway runs the request and the client polls (data-plane/background.ts). */
  background?: boolean;
}

export interface Prepared extends Stateful {
  body: unknown;
}

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

const ITEM_PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' };

/** Input items as OpenAI lists them: each with a type and an id (ids the client gave are kept). */
const withIds = (items: readonly JsonValue[], suffix: string): JsonObject[] =>
  items.filter(isObject).map((item, i) => {
    const type = typeof item.type === 'string' ? item.type : 'message';
    if (typeof item.id === 'string') return { ...item, type };
    return { id: `${ITEM_PREFIX[type] ?? 'item'}_${suffix}_in${i}`, ...item, type };
  });

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * `POST /v1/responses`: `previous_response_id` prepends the stored response's input and output,
 * `item_reference` items become the stored items; `store` (default true) keeps the answer.
 */
export const prepareResponses = async (
  conv: Conversations | undefined,
  projectId: string,
  body: unknown,
  requestHex: string,
): Promise<Prepared> => {
  if (!isObject(body)) return { body };
  const prev = body.previous_response_id;
  const input = body.input;
  const refs = Array.isArray(input) && input.some((i) => isObject(i) && i.type === 'item_reference');
  if (body.store !== undefined && body.store !== null && typeof body.store !== 'boolean')
    throw invalidRequest("'store' must be a boolean.", 'store');
  if (body.background !== undefined && body.background !== null && typeof body.background !== 'boolean')
    throw invalidRequest("'background' must be a boolean.", 'background');
  const store = body.store !== false;
  const background = body.background === true;
  const conversationId = conversationParam(body.conversation);
  if (conversationId !== undefined && prev !== undefined && prev !== null) {
    throw new GatewayError({
      kind: 'invalid_request',
      message: "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.",
      param: 'conversation',
      errorCode: 'mutually_exclusive_parameters',
    });
  }
  if (background && !store)
    throw invalidRequest(
      "Background mode requires 'store' to be true: a background response is kept so that it can be polled.",
      'background',
    );
  if (!conv) {
    if (prev !== undefined && prev !== null) throw storeUnavailable('previous_response_id');
    if (refs) throw storeUnavailable('input');
    if (conversationId !== undefined) throw storeUnavailable('conversation');
    if (background) throw storeUnavailable('background');
    return { body };
  }
  const items: JsonValue[] = [];
  if (prev !== undefined && prev !== null) {
    if (typeof prev !== 'string' || prev === '')
      throw invalidRequest("'previous_response_id' must be a response id.", 'previous_response_id');
    const stored = await conv.get(projectId, prev);
    if (stored?.kind !== 'response') throw notStored('Previous response', prev, 'previous_response_id');
    items.push(...stored.input);
    if (Array.isArray(stored.response.output)) items.push(...stored.response.output);
  }
  if (conversationId !== undefined) items.push(...(await loadConversation(conv, projectId, conversationId)).items);
  const carried = items.length;
  if (typeof input === 'string') items.push({ type: 'message', role: 'user', content: input });
  else if (Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) {
      const item = input[i] as JsonValue;
      if (isObject(item) && item.type === 'item_reference') {
        const id = item.id;
        if (typeof id !== 'string' || id === '') throw invalidRequest("An item_reference needs the item's 'id'.", `input.${i}.id`);
        const found = await conv.getItem(projectId, id);
        if (!found) throw notStored('Item', id, `input.${i}.id`);
        items.push(found);
      } else items.push(item);
    }
  } else return { body }; // not a valid input: the codec says why

  const expanded: JsonObject = { ...body, input: items };
  delete expanded.previous_response_id;
  delete expanded.conversation;
  delete expanded.background;
  const previous = typeof prev === 'string' ? prev : null;
  const responseFields: JsonObject = { store, previous_response_id: previous };
  if (background) responseFields.background = true;
  if (conversationId !== undefined) responseFields.conversation = { id: conversationId };
  const storedInput = withIds(items, requestHex);
  /** The conversation gets this turn's input and the answer's output, as on OpenAI. */
  const appendTurn = async (response: JsonObject): Promise<void> => {
    if (conversationId === undefined) return;
    const output = Array.isArray(response.output) ? response.output.filter(isObject) : [];
    // The answer was given already: a conversation deleted meanwhile (or a store failure) is logged.
    await appendToConversation(conv, projectId, conversationId, [...storedInput.slice(carried), ...output]).catch((e: unknown) => {
      log.every('conversation-append', 'warn', 'appending a turn to its conversation failed', { error: describeError(e) });
    });
  };
  const record = (response: JsonObject, run?: BackgroundRun): StoredResponse | undefined => {
    const id = response.id;
    if (typeof id !== 'string') return undefined;
    const createdAt = typeof response.created_at === 'number' ? response.created_at : nowSeconds();
    return { kind: 'response', id, createdAt, response, input: storedInput, ...(run ? { background: run } : {}) };
  };
  return {
    body: expanded,
    ...(background ? { background: true } : {}),
    keeper: {
      responseFields,
      keep: async (response, run) => {
        const r = store ? record(response, run) : undefined;
        if (r) await conv.put(projectId, r);
        await appendTurn(response);
      },
      // A failed write rejects: the background response's answer depends on it.
      hold: async (response, run) => {
        const r = record(response, run);
        if (r) await conv.write(projectId, r);
      },
    },
  };
};

/**
 * A second `continue` from the same reply: Anthropic's 400 `thread_already_continued` (each reply
 * is continued at most once; the SDK recovers by replaying the whole history under a new thread).
 */
const alreadyContinued = (id: string) =>
  new GatewayError({
    kind: 'invalid_request',
    message: `Message '${id}' was already continued; each reply can be continued only once. Continue from the thread's most recent reply id.`,
    param: 'thread.previous_message_id',
    errorCode: 'thread_already_continued',
    details: { error_code: 'thread_already_continued' },
  });

/** Another request of this data plane is continuing from the same reply (Anthropic's `thread_continue_in_flight`). */
const continueInFlight = (id: string) =>
  new GatewayError({
    kind: 'invalid_request',
    message: `Another request is still continuing from message '${id}'. Wait for it and continue from its reply, or replay the conversation with thread type 'create'.`,
    param: 'thread.previous_message_id',
    errorCode: 'thread_continue_in_flight',
    details: { error_code: 'thread_continue_in_flight' },
  });

const THREADS_BETA = /^message-threads-/;

/** The client's `anthropic-beta` values the gateway consumed itself (threads are served here). */
export const consumedBeta = (value: string): boolean => THREADS_BETA.test(value.trim());

/**
 * `POST /v1/messages` with `thread`: `create` starts keeping the conversation under the reply's
 * id; `continue` prepends what is kept under `previous_message_id` (its `system` and `tools`
 * too) and keeps the longer conversation under the new reply's id. An unknown id is the 404 the
 * Anthropic SDK recovers from by replaying the whole conversation (`thread_not_found`).
 */
export const prepareThread = async (conv: Conversations | undefined, projectId: string, body: unknown): Promise<Prepared> => {
  if (!isObject(body) || body.thread === undefined || body.thread === null) return { body };
  const thread = body.thread;
  if (!isObject(thread) || (thread.type !== 'create' && thread.type !== 'continue')) {
    throw invalidRequest('\'thread\' must be {"type": "create"} or {"type": "continue", "previous_message_id": …}.', 'thread');
  }
  if (!conv) throw storeUnavailable('thread');
  if (!Array.isArray(body.messages)) return { body }; // the codec says why
  const out: JsonObject = { ...body };
  delete out.thread;
  let history: JsonObject[] = [];
  let previous: StoredThread | undefined;
  if (thread.type === 'continue') {
    const id = thread.previous_message_id;
    if (typeof id !== 'string' || id === '')
      throw invalidRequest("'thread.previous_message_id' is required with type 'continue'.", 'thread.previous_message_id');
    const stored = await conv.get(projectId, id);
    if (stored?.kind !== 'thread')
      throw notStored('Thread state for message', id, 'thread.previous_message_id', { error_code: 'thread_not_found' });
    if (stored.continued === true) throw alreadyContinued(id);
    previous = stored;
    for (const field of ['system', 'tools'] as const) {
      if (out[field] !== undefined) {
        throw invalidRequest(`'${field}' is taken from the thread on a continue; send it only with thread type 'create'.`, field);
      }
      const kept = stored[field];
      if (kept !== undefined) out[field] = kept;
    }
    history = stored.messages;
    out.messages = [...history, ...body.messages];
  }
  const messages = out.messages as JsonValue[];
  // Last, so that nothing can throw between claiming and handing the keeper (which releases) over.
  if (previous && !conv.claim(projectId, previous.id)) throw continueInFlight(previous.id);
  const claimed = previous?.id;
  return {
    body: out,
    keeper: {
      ...(claimed !== undefined ? { release: () => conv.release(projectId, claimed) } : {}),
      keep: async (message) => {
        const id = message.id;
        if (typeof id !== 'string' || !Array.isArray(message.content)) return;
        // Both writes start now (before release), so a continue that follows waits for them.
        // The reply continued from is spent: a second continue of it is refused (thread_already_continued).
        const spent = previous ? conv.put(projectId, { ...previous, continued: true }) : undefined;
        await conv.put(projectId, {
          kind: 'thread',
          id,
          createdAt: nowSeconds(),
          ...(out.system !== undefined ? { system: out.system } : {}),
          ...(out.tools !== undefined ? { tools: out.tools } : {}),
          messages: [...messages.filter(isObject), { role: 'assistant', content: message.content }],
        });
        await spent;
      },
    },
  };
};
