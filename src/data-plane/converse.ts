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
import { createSseParser } from '../providers/framing.ts';
import type { UpstreamFrame } from '../providers/types.ts';
import { errorResponse } from './respond.ts';

/** One SSE frame → one event-stream message; a frame without an event name gives nothing. */
const messageOf = (frame: UpstreamFrame): Uint8Array | undefined => {
  const event = frame.event;
  if (event === undefined) return undefined;
  const headers: Record<string, string> = event.endsWith('Exception')
    ? { ':message-type': 'exception', ':exception-type': event, ':content-type': 'application/json' }
    : { ':message-type': 'event', ':event-type': event, ':content-type': 'application/json' };
  return encodeEventStreamMessage(headers, frame.data);
};

/** SSE text → AWS event-stream messages, frame by frame (the one SSE parser: providers/framing.ts). */
export const sseToEventStream = (): TransformStream<Uint8Array | string, Uint8Array> => {
  const parser = createSseParser();
  const emit = (frames: readonly UpstreamFrame[], controller: TransformStreamDefaultController<Uint8Array>): void => {
    for (const f of frames) {
      const message = messageOf(f);
      if (message) controller.enqueue(message);
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      emit(parser.push(chunk), controller);
    },
    flush(controller) {
      emit(parser.flush(), controller);
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
