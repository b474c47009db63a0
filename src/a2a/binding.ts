import type { GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import type { RequestIds } from '../pipeline/context.ts';
import type { A2aAgentConfig } from './config.ts';
import { type RpcRequest, rpcErrorBody, rpcErrorResponse, rpcRequestOf, STREAMING_METHODS } from './rpc.ts';

/**
 * What the A2A door (serve.ts) needs of a protocol binding (contract §12): the call it carries
 * (a method name and its params, binding-neutral), the request that goes to the agent's interface
 * of that binding, where the result sits in an answer and in a streamed event, and the gateway's
 * refusals in the binding's own error shape. JSON-RPC is here; HTTP+JSON is rest.ts.
 */

/** One call, whatever the binding: A2A's method name (v1.0 or v0.3) and its params (the message's text parts are read there). */
export interface A2aCall {
  method: string;
  params: Record<string, unknown>;
  stream: boolean;
}

/** The request to the agent: its URL (undefined when the agent has no interface of the binding), verb and body. */
export interface UpstreamRequest {
  url: string | undefined;
  verb: 'GET' | 'POST';
  body: string | undefined;
}

export interface Binding {
  /** Reads the call out of the request body; a refusal in the binding's shape when it is not one. */
  decode(value: unknown): A2aCall;
  /** The body the record keeps (after the input guardrails rewrote the params). */
  bodyText(call: A2aCall): string;
  upstream(agent: A2aAgentConfig, call: A2aCall): UpstreamRequest;
  /** An answer's result (what the output guardrails read), `{}` for an error answer relayed as it is, undefined for garbage. */
  answer(value: unknown, status: number): { result?: unknown } | undefined;
  /** The result inside a streamed event's data. */
  eventResult(value: Record<string, unknown>): unknown;
  /** The SSE event that ends a stream with a gateway error. */
  errorEvent(e: GatewayError): string;
  errorResponse(e: GatewayError, ids: RequestIds, extra?: Record<string, string>): Response;
}

/** The JSON-RPC binding: `POST /a2a/{agentId}`, one JSON-RPC request, the agent's JSON-RPC URL. */
export const jsonRpcBinding = (): Binding => {
  let id: RpcRequest['id'] = null;
  return {
    decode(value) {
      const rpc = rpcRequestOf(value);
      id = rpc.id;
      return { method: rpc.method, params: rpc.params, stream: STREAMING_METHODS.has(rpc.method) };
    },
    bodyText: (call) => JSON.stringify({ jsonrpc: '2.0', id, method: call.method, params: call.params }),
    upstream(agent, call) {
      return { url: agent.rpcUrl, verb: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id, method: call.method, params: call.params }) };
    },
    answer: (v) =>
      isRecord(v) && v.jsonrpc === '2.0' && ('result' in v || isRecord(v.error)) ? ('result' in v ? { result: v.result } : {}) : undefined,
    eventResult: (v) => v.result,
    errorEvent: (e) => `data: ${rpcErrorBody(id, e)}\n\n`,
    errorResponse: (e, ids, extra) => rpcErrorResponse(id, e, ids, extra),
  };
};
