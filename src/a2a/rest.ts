import { GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import type { A2aCall, Binding } from './binding.ts';
import { restUrlOf } from './card.ts';
import { errorHeaders } from './rpc.ts';
import type { A2aAgentConfig } from './config.ts';

/**
 * A2A's HTTP+JSON binding as `@a2a-js/sdk` 1.3 speaks it (contract §12), served at
 * `/a2a/{agentId}/v1/…` (the gateway card's HTTP+JSON URL is `/a2a/{agentId}/v1`) and relayed to
 * the same operation under the agent's own HTTP+JSON URL: `POST /message:send`,
 * `POST /message:stream` (SSE), `GET /tasks`, `GET /tasks/{id}`, `POST /tasks/{id}:cancel`,
 * `GET|POST /tasks/{id}:subscribe` (SSE). Refusals are the binding's error body
 * (`{error: {code, status, message, details}}`, as the SDK's `restHandler` answers).
 */

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

const restError = (e: GatewayError): string =>
  JSON.stringify({
    error: {
      code: e.status,
      status: e.connectCode.toUpperCase(),
      message: e.message,
      details: [{ '@type': ERROR_INFO, reason: e.errorCode, domain: 'gateway', metadata: { type: e.type } }],
    },
  });

const notAnOperation = (verb: string, path: string): GatewayError =>
  new GatewayError({
    kind: 'not_found',
    message: `'${verb} /v1${path}' is not an A2A HTTP+JSON operation the gateway relays (message:send, message:stream, tasks, tasks/{id}, tasks/{id}:cancel, tasks/{id}:subscribe).`,
  });

const TASK = /^\/tasks\/([^/:]+)(:cancel|:subscribe)?$/;

/** The operation a verb and path (after `/a2a/{agentId}/v1`) name. */
const operationOf = (verb: string, path: string): { method: string; taskId?: string; stream: boolean } => {
  if (verb === 'POST' && path === '/message:send') return { method: 'SendMessage', stream: false };
  if (verb === 'POST' && path === '/message:stream') return { method: 'SendStreamingMessage', stream: true };
  if (verb === 'GET' && path === '/tasks') return { method: 'ListTasks', stream: false };
  const m = TASK.exec(path);
  if (m?.[1]) {
    const taskId = decodeURIComponent(m[1]);
    if (verb === 'GET' && !m[2]) return { method: 'GetTask', taskId, stream: false };
    if (verb === 'POST' && m[2] === ':cancel') return { method: 'CancelTask', taskId, stream: false };
    if (m[2] === ':subscribe') return { method: 'SubscribeToTask', taskId, stream: true };
  }
  throw notAnOperation(verb, path);
};

/** The HTTP+JSON binding for one request; `path` is what follows `/a2a/{agentId}/v1`. */
export const restBinding = (verb: 'GET' | 'POST', path: string, search: string): Binding & { hasBody: boolean } => {
  // Only message:send and message:stream carry a body (the SDK sends cancel and subscribe without one).
  const sends = verb === 'POST' && (path === '/message:send' || path === '/message:stream');
  return {
    hasBody: sends,
    decode(value): A2aCall {
      const op = operationOf(verb, path);
      if (value !== undefined && !isRecord(value))
        throw new GatewayError({ kind: 'invalid_request', message: 'The request body must be a JSON object.' });
      if (op.method === 'SendMessage' || op.method === 'SendStreamingMessage') {
        if (!isRecord(value?.message))
          throw new GatewayError({ kind: 'invalid_request', message: "The request has no 'message'.", param: 'message' });
      }
      return { method: op.method, params: { ...(value ?? {}), ...(op.taskId ? { id: op.taskId } : {}) }, stream: op.stream };
    },
    bodyText: (call) => (sends ? JSON.stringify(call.params) : ''),
    upstream(agent: A2aAgentConfig, call) {
      const base = restUrlOf(agent);
      return {
        url: base ? `${base.replace(/\/+$/, '')}${path}${search}` : undefined,
        verb,
        body: sends ? JSON.stringify(call.params) : undefined,
      };
    },
    answer(v, status) {
      if (!isRecord(v)) return undefined;
      if (status >= 400) return isRecord(v.error) ? {} : undefined;
      return { result: v };
    },
    eventResult: (v) => v,
    errorEvent: (e) => `event: error\ndata: ${restError(e)}\n\n`,
    errorResponse: (e, ids, extra) => new Response(restError(e), { status: e.status, headers: errorHeaders(e, ids, extra) }),
  };
};
