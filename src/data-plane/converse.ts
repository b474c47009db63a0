/**
 * The Bedrock Converse endpoints (contract §13): `POST /model/{modelId}/converse` and
 * `/model/{modelId}/converse-stream`, the key as `Authorization: Bearer` (Bedrock API keys),
 * refusals in Bedrock's shape. A stream is produced as SSE frames by the Converse encoder (or
 * relayed from a Bedrock upstream as such) and written to the client as AWS event-stream
 * messages, one per frame (`application/vnd.amazon.eventstream`); keep-alive comments have no
 * event-stream form and are not sent.
 */
import { GatewayError } from '../core/errors.ts';
import { converseCodec } from '../formats/converse/index.ts';
import { isGatewayStream, markGatewayStream } from '../pipeline/answer.ts';
import type { RequestIds } from '../pipeline/context.ts';
import { encodeEventStreamMessage } from '../providers/eventstream.ts';
import type { InferenceDeps } from './deps.ts';
import { handleInference } from './inference.ts';
import { errorResponse } from './respond.ts';

/** One SSE frame (`event:` and `data:` lines) → one event-stream message; comments give nothing. */
const messageOf = (frame: string): Uint8Array | undefined => {
  let event: string | undefined;
  let data = '';
  for (const line of frame.split('\n')) {
    if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (event === undefined) return undefined;
  const headers: Record<string, string> = event.endsWith('Exception')
    ? { ':message-type': 'exception', ':exception-type': event, ':content-type': 'application/json' }
    : { ':message-type': 'event', ':event-type': event, ':content-type': 'application/json' };
  return encodeEventStreamMessage(headers, data);
};

/** SSE text → AWS event-stream messages, frame by frame. */
export const sseToEventStream = (): TransformStream<Uint8Array | string, Uint8Array> => {
  const decoder = new TextDecoder();
  let held = '';
  const frames = (controller: TransformStreamDefaultController<Uint8Array>): void => {
    for (let end = held.indexOf('\n\n'); end !== -1; end = held.indexOf('\n\n')) {
      const message = messageOf(held.slice(0, end));
      held = held.slice(end + 2);
      if (message) controller.enqueue(message);
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      held += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      frames(controller);
    },
    flush(controller) {
      held += decoder.decode();
      if (held !== '') held += '\n\n';
      frames(controller);
    },
  });
};

const notFound = (path: string): GatewayError =>
  new GatewayError({ kind: 'not_found', errorCode: 'unknown_endpoint', message: `Unknown endpoint: POST ${path}` });

const OPERATIONS: Record<string, boolean> = { converse: false, 'converse-stream': true };

/** `POST /model/{modelId}/{converse|converse-stream}`. */
export const handleConverse = async (deps: InferenceDeps, req: Request, ids: RequestIds): Promise<Response> => {
  const { pathname } = new URL(req.url);
  const m = /^\/model\/(.+)\/([a-z-]+)$/.exec(pathname);
  const stream = m ? OPERATIONS[m[2] ?? ''] : undefined;
  let model: string | undefined;
  try {
    model = m?.[1] !== undefined ? decodeURIComponent(m[1]) : undefined;
  } catch {
    model = undefined;
  }
  if (stream === undefined || !model) return errorResponse(notFound(pathname), ids, converseCodec);
  const res = await handleInference(deps, 'converse', req, ids, undefined, { model, stream });
  if (!stream || !isGatewayStream(res) || !res.body) return res;
  const headers = new Headers(res.headers);
  headers.set('content-type', 'application/vnd.amazon.eventstream');
  return markGatewayStream(new Response(res.body.pipeThrough(sseToEventStream()), { status: res.status, headers }));
};
