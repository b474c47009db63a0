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

const KEEPALIVE = ': keep-alive\n\n';

export interface SseOptions {
  /** Upstream silence after which the stream fails with a time-out. */
  idleTimeoutMs: number;
  /** Downstream silence after which a keep-alive comment is sent. */
  keepAliveMs: number;
  onDone(summary: StreamSummary): void;
}

/** One open stream as the shared watchdog sees it. */
interface Watched {
  lastUpstream: number;
  lastWrite: number;
  idleTimeoutMs: number;
  keepAliveMs: number;
  idle(): void;
  keepAlive(): void;
}

/**
 * One watchdog for every open stream (a timer per stream costs more than the checks): sends
 * keep-alive comments on quiet streams and fails streams whose upstream went silent. Runs only
 * while streams are open.
 */
const WATCH_MS = 50;
const watched = new Set<Watched>();
let watchdog: ReturnType<typeof setInterval> | undefined;
const watch = (): void => {
  if (watched.size === 0) {
    clearInterval(watchdog);
    watchdog = undefined;
    return;
  }
  const now = Date.now();
  for (const w of watched) {
    if (now - w.lastUpstream > w.idleTimeoutMs) w.idle();
    else if (now - w.lastWrite >= w.keepAliveMs) w.keepAlive();
  }
};
const startWatching = (w: Watched): void => {
  watched.add(w);
  if (!watchdog) {
    watchdog = setInterval(watch, WATCH_MS);
    watchdog.unref?.();
  }
};

/** Bun's direct stream: writes go to the socket without a queue; lib.dom's typing lacks the variant. */
type DirectSource = {
  type: 'direct';
  pull(controller: ReadableStreamDirectController): void | PromiseLike<void>;
  cancel?(reason?: unknown): void;
};
const directStream = (source: DirectSource): ReadableStream<Uint8Array> => new ReadableStream(source as unknown as UnderlyingDefaultSource<Uint8Array>);

/**
 * Streams canonical events to the client as SSE in its format. Never stalls a quiet stream
 * (keep-alive comments), fails an idle upstream with a time-out event, and cancels the upstream
 * request when the client goes away. Text is written straight to the socket (a direct stream: no
 * queue, no TextEncoder, no pull per chunk).
 */
export const sseResponse = (open: OpenStream, encoder: StreamEncoder, ids: RequestIds, opts: SseOptions): Response => {
  const obs = observer(256 * 1024);
  let finished = false;
  let sink: ReadableStreamDirectController | undefined;

  const now = Date.now();
  const w: Watched = {
    lastUpstream: now,
    lastWrite: now,
    idleTimeoutMs: opts.idleTimeoutMs,
    keepAliveMs: opts.keepAliveMs,
    idle: () => open.abort(timeoutError(opts.idleTimeoutMs)),
    keepAlive: () => {
      if (sink && !finished) write(KEEPALIVE);
    },
  };
  const write = (text: string): void => {
    if (!sink) return;
    w.lastWrite = Date.now();
    try {
      sink.write(text);
      sink.flush();
    } catch {
      // The client is gone; the read loop or cancel() reports the outcome.
    }
  };
  const finish = (error?: GatewayError): void => {
    if (finished) return;
    finished = true;
    watched.delete(w);
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

  const stream = directStream({
    type: 'direct',
    async pull(controller) {
      sink = controller;
      startWatching(w);
      try {
        const head = encode(open.first);
        if (head) write(head);
        for (;;) {
          const events = await open.next();
          if (finished) return;
          w.lastUpstream = Date.now();
          if (events === null) {
            const tail = encoder.end();
            if (tail) write(tail);
            finish();
            controller.close();
            return;
          }
          const out = encode(events);
          if (out) write(out);
        }
      } catch (e) {
        if (finished) return;
        const err = asGatewayError(e);
        write(encoder.error(err));
        finish(err);
        try {
          controller.close();
        } catch {
          // The client is already gone.
        }
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
