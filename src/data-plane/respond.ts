import type { StreamEvent, ToolCall, Usage } from '../canonical/types.ts';
import { asGatewayError, type GatewayError, toInferenceBody } from '../core/errors.ts';
import type { ClientFormatCodec, StreamEncoder } from '../formats/types.ts';
import type { OpenStream } from './dispatch.ts';
import { clientClosed, timeoutError } from './upstream.ts';

/** Identity of one inference request, for headers and records. */
export interface RequestIds {
  requestId: string;
  clientRequestId: string | undefined;
}

export const idHeaders = (ids: RequestIds): Record<string, string> =>
  ids.clientRequestId === undefined
    ? { 'x-request-id': ids.requestId }
    : { 'x-request-id': ids.requestId, 'x-client-request-id': ids.clientRequestId };

export const jsonResponse = (status: number, body: string, ids: RequestIds, extra?: Record<string, string>): Response =>
  new Response(body, { status, headers: { 'content-type': 'application/json', ...idHeaders(ids), ...extra } });

export const errorResponse = (error: GatewayError, ids: RequestIds, codec?: ClientFormatCodec): Response => {
  const body = codec ? codec.encodeError(error) : toInferenceBody(error);
  const extra: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) extra['retry-after'] = String(error.retryAfterSeconds);
  return jsonResponse(error.status === 499 ? 400 : error.status, JSON.stringify(body), ids, extra);
};

/** What a finished stream reports for its record. */
export interface StreamSummary {
  usage: Usage | undefined;
  text: string;
  toolCalls: ToolCall[];
  finishReason: string | undefined;
  error: GatewayError | undefined;
  /** ms from request receipt to the first byte sent. */
  firstByteAt: number;
}

/** Accumulates what went by, bounded, for the request record. */
const observer = (maxText: number) => {
  const s: StreamSummary = { usage: undefined, text: '', toolCalls: [], finishReason: undefined, error: undefined, firstByteAt: 0 };
  return {
    summary: s,
    see(ev: StreamEvent): void {
      switch (ev.type) {
        case 'start':
          if (ev.usage) s.usage = ev.usage;
          break;
        case 'usage':
          s.usage = ev.usage;
          break;
        case 'text':
          if (s.text.length < maxText) s.text += ev.text;
          break;
        case 'tool_call_start':
          s.toolCalls[ev.index] = { id: ev.id, name: ev.name, arguments: '' };
          break;
        case 'tool_call_delta': {
          const call = s.toolCalls[ev.index];
          if (call && call.arguments.length < maxText) call.arguments += ev.arguments;
          break;
        }
        case 'finish':
          s.finishReason = ev.reason;
          break;
        default:
          break;
      }
    },
  };
};

const KEEPALIVE = new TextEncoder().encode(': keep-alive\n\n');

export interface SseOptions {
  /** Upstream silence after which the stream fails with a time-out. */
  idleTimeoutMs: number;
  /** Downstream silence after which a keep-alive comment is sent. */
  keepAliveMs: number;
  onDone(summary: StreamSummary): void;
}

/**
 * Streams canonical events to the client as SSE in its format. Never stalls a quiet stream
 * (keep-alive comments), fails an idle upstream with a time-out event, and cancels the upstream
 * request when the client goes away.
 */
export const sseResponse = (open: OpenStream, encoder: StreamEncoder, ids: RequestIds, opts: SseOptions): Response => {
  const bytes = new TextEncoder();
  const obs = observer(256 * 1024);
  let lastUpstream = Date.now();
  let lastWrite = Date.now();
  let finished = false;
  let watchdog: ReturnType<typeof setInterval> | undefined;

  const finish = (error?: GatewayError): void => {
    if (finished) return;
    finished = true;
    if (watchdog) clearInterval(watchdog);
    obs.summary.error = error;
    opts.onDone(obs.summary);
  };
  const encode = (events: readonly StreamEvent[]): string => {
    let out = '';
    for (const ev of events) {
      obs.see(ev);
      out += encoder.push(ev);
    }
    return out;
  };

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (chunk: Uint8Array) => {
        lastWrite = Date.now();
        controller.enqueue(chunk);
      };
      const head = encode(open.first);
      if (head) write(bytes.encode(head));
      const tick = Math.max(50, Math.min(opts.keepAliveMs, opts.idleTimeoutMs) / 3);
      watchdog = setInterval(() => {
        if (finished) return;
        const now = Date.now();
        if (now - lastUpstream > opts.idleTimeoutMs) open.abort(timeoutError(opts.idleTimeoutMs));
        else if (now - lastWrite >= opts.keepAliveMs) {
          try {
            write(KEEPALIVE);
          } catch {
            // The stream is closing; the pull loop reports the outcome.
          }
        }
      }, tick);
    },
    async pull(controller) {
      try {
        // Loop until something is sent: a pull that enqueues nothing is not called again.
        for (;;) {
          const events = await open.next();
          lastUpstream = Date.now();
          if (events === null) {
            const tail = encoder.end();
            if (tail) controller.enqueue(bytes.encode(tail));
            finish();
            controller.close();
            return;
          }
          const out = encode(events);
          if (out) {
            lastWrite = Date.now();
            controller.enqueue(bytes.encode(out));
            return;
          }
        }
      } catch (e) {
        if (finished) return;
        const err = asGatewayError(e);
        try {
          controller.enqueue(bytes.encode(encoder.error(err)));
          controller.close();
        } catch {
          // The client is already gone.
        }
        finish(err);
      }
    },
    cancel() {
      open.abort(clientClosed());
      finish(clientClosed());
    },
  });
  return new Response(stream, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...idHeaders(ids),
    },
  });
};
