import { GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import { idHeaders } from '../pipeline/answer.ts';
import type { RequestIds } from '../pipeline/context.ts';

/**
 * A2A's JSON-RPC shapes as the gateway reads and answers them (contract §12): the methods of both
 * generations, the text parts of a message or an answer (what guardrails read), the ids a result
 * names (task, context), and the gateway's refusals as JSON-RPC error objects.
 */

/** v1.0 names (as `@a2a-js/sdk` 1.3 sends them) and their v0.3 spellings. */
export const STREAMING_METHODS: ReadonlySet<string> = new Set([
  'SendStreamingMessage',
  'SubscribeToTask',
  'message/stream',
  'tasks/resubscribe',
]);
export const SEND_METHODS: ReadonlySet<string> = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream']);

export interface RpcRequest {
  id: string | number | null;
  method: string;
  params: Record<string, unknown>;
}

/** A JSON-RPC request, or the -32600 refusal naming what is wrong. */
export const rpcRequestOf = (v: unknown): RpcRequest => {
  if (!isRecord(v) || v.jsonrpc !== '2.0' || typeof v.method !== 'string' || v.method === '')
    throw rpcRefusal(400, -32600, "Invalid Request: a JSON-RPC 2.0 request object with a 'method' is expected.");
  const id = typeof v.id === 'string' || typeof v.id === 'number' ? v.id : null;
  return { id, method: v.method, params: isRecord(v.params) ? v.params : {} };
};

/** A refusal that carries its JSON-RPC code. */
export const rpcRefusal = (status: number, code: number, message: string, errorCode?: string): GatewayError =>
  new GatewayError({
    kind: status === 404 ? 'not_found' : status === 401 ? 'authentication' : status >= 500 ? 'unavailable' : 'invalid_request',
    status,
    message,
    ...(errorCode ? { errorCode } : {}),
    details: { jsonrpcCode: code },
  });

/** The JSON-RPC error code a gateway error is answered with. */
export const rpcCodeOf = (e: GatewayError): number => {
  const given = e.details?.jsonrpcCode;
  if (typeof given === 'number') return given;
  if (e.status === 400 && e.errorCode === 'invalid_json') return -32700;
  if (e.status === 400) return -32602;
  return -32603;
};

export const rpcErrorBody = (id: RpcRequest['id'], e: GatewayError): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: { code: rpcCodeOf(e), message: e.message, data: { type: e.type, code: e.errorCode } },
  });

/** The headers of a refusal in either binding: the request's ids, the bearer challenge on a 401, Retry-After when known. */
export const errorHeaders = (e: GatewayError, ids: RequestIds, extra?: Record<string, string>): Record<string, string> => ({
  'content-type': 'application/json',
  ...idHeaders(ids),
  ...(e.status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
  ...(e.retryAfterSeconds !== undefined ? { 'retry-after': String(e.retryAfterSeconds) } : {}),
  ...extra,
});

export const rpcErrorResponse = (id: RpcRequest['id'], e: GatewayError, ids: RequestIds, extra?: Record<string, string>): Response =>
  new Response(rpcErrorBody(id, e), { status: e.status, headers: errorHeaders(e, ids, extra) });

/** The text parts under a value (a message, a task, an event): `{text}` objects inside `parts` arrays, in order. */
export const textParts = (v: unknown, out: Record<string, unknown>[] = [], depth = 0): Record<string, unknown>[] => {
  if (depth > 32) return out;
  if (Array.isArray(v)) for (const x of v) textParts(x, out, depth + 1);
  else if (isRecord(v))
    for (const [k, x] of Object.entries(v)) {
      if (k === 'parts' && Array.isArray(x)) {
        for (const p of x) if (isRecord(p) && typeof p.text === 'string') out.push(p);
      } else if (typeof x === 'object' && x !== null) textParts(x, out, depth + 1);
    }
  return out;
};

/** The task and context a result (or event) names. */
export const idsOfResult = (v: unknown): { taskId?: string; contextId?: string } => {
  if (!isRecord(v)) return {};
  const inner = [v, v.task, v.message, v.statusUpdate, v.artifactUpdate, v.status].filter(isRecord);
  let taskId: string | undefined;
  let contextId: string | undefined;
  for (const o of inner) {
    if (!taskId && typeof o.taskId === 'string') taskId = o.taskId;
    // A task: v0.3 says `kind: 'task'`; v1.0 wraps it (`{task}`) in send answers and gives it bare to GetTask/CancelTask.
    const isTask = o.kind === 'task' || o === v.task || (o === v && typeof o.contextId === 'string' && isRecord(o.status));
    if (!taskId && isTask && typeof o.id === 'string') taskId = o.id;
    if (!contextId && typeof o.contextId === 'string') contextId = o.contextId;
  }
  return { ...(taskId ? { taskId } : {}), ...(contextId ? { contextId } : {}) };
};

/** The agent failing a call: it timed out, could not be reached, answered garbage, or broke off its stream. */
export const upstreamFailure = (agentId: string, kind: 'timeout' | 'network' | 'garbage' | 'broken', detail = ''): GatewayError =>
  kind === 'timeout'
    ? new GatewayError({
        kind: 'timeout',
        status: 504,
        errorCode: 'upstream_timeout',
        message: `A2A agent '${agentId}' did not answer in time.`,
      })
    : kind === 'garbage'
      ? new GatewayError({
          kind: 'bad_gateway',
          message: `A2A agent '${agentId}' answered something that is not a JSON-RPC response${detail}.`,
        })
      : new GatewayError({
          kind: 'upstream_error',
          status: 502,
          errorCode: 'a2a_upstream_error',
          message:
            kind === 'broken'
              ? `A2A agent '${agentId}' broke off its stream${detail}.`
              : `A2A agent '${agentId}' could not be reached${detail}.`,
        });
