import type { RequestIds } from './context.ts';

/** The answers every endpoint gives alike: its ids as headers, a JSON body, a stream the listener must not time out. */

export const idHeaders = (ids: RequestIds): Record<string, string> =>
  ids.clientRequestId === undefined
    ? { 'x-request-id': ids.requestId }
    : { 'x-request-id': ids.requestId, 'x-client-request-id': ids.clientRequestId };

export const jsonResponse = (status: number, body: string, ids: RequestIds, extra?: Record<string, string>): Response =>
  new Response(body, { status, headers: { 'content-type': 'application/json', ...idHeaders(ids), ...extra } });

/** Responses written by sseResponse (data-plane/respond.ts) or marked (they re-arm the connection's idle time-out when they end). */
const gatewayStreams = new WeakSet<Response>();
export const isGatewayStream = (res: Response): boolean => gatewayStreams.has(res);
/** Marks a stream written elsewhere (the MCP gateway's) as one that calls `ids.streamEnded` itself when it ends. */
export const markGatewayStream = (res: Response): Response => {
  gatewayStreams.add(res);
  return res;
};
