import { Sweep } from '../core/sweep.ts';
import type { StreamEvent, ToolCall, Usage } from '../canonical/types.ts';
import { asGatewayError, GatewayError, toInferenceBody } from '../core/errors.ts';
import type { ClientFormatCodec, StreamEncoder } from '../formats/types.ts';
import { idHeaders, jsonResponse, markGatewayStream } from '../pipeline/answer.ts';
import type { RequestIds } from '../pipeline/context.ts';
import type { OpenStream } from './dispatch.ts';
import { clientClosed, timeoutError } from './upstream.ts';

export const errorResponse = (error: GatewayError, ids: RequestIds, codec?: ClientFormatCodec): Response => {
  const body = codec ? codec.encodeError(error) : toInferenceBody(error);
  const extra: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) extra['retry-after'] = String(error.retryAfterSeconds);
  return jsonResponse(error.status === 499 ? 400 : error.status, JSON.stringify(body), ids, extra);
};

/** What a finished stream reports for its record. */
export interface StreamSummary {
  /** The upstream's id from the stream's start. */
  id: string;
  usage: Usage | undefined;
  text: string;
  toolCalls: ToolCall[];
  finishReason: string | undefined;
  error: GatewayError | undefined;
  /** UTF-16 code units of text, reasoning and tool-call arguments streamed (not capped like `text`). */
  outputChars: number;
  /** ms from request receipt to the first byte sent. */
  firstByteAt: number;
}

/** Accumulates what went by, bounded, for the request record. */
const observer = (maxText: number) => {
  const s: StreamSummary = {
    id: '',
    usage: undefined,
    text: '',
    toolCalls: [],
    finishReason: undefined,
    error: undefined,
    outputChars: 0,
    firstByteAt: 0,
  };
  return {
    summary: s,
    see(ev: StreamEvent): void {
      switch (ev.type) {
        case 'start':
          s.id = ev.id;
          if (ev.usage) s.usage = ev.usage;
          break;
        case 'usage':
          s.usage = ev.usage;
          break;
        case 'text':
          s.outputChars += ev.text.length;
          if (s.text.length < maxText) s.text += ev.text;
          break;
        case 'reasoning':
          s.outputChars += ev.text.length;
          break;
        case 'tool_call_start':
          s.toolCalls[ev.index] = { id: ev.id, name: ev.name, arguments: '' };
          break;
        case 'tool_call_delta': {
          s.outputChars += ev.arguments.length;
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
  /** A client that reads nothing for this long has its stream ended (default: streamStallMs()). */
  stallTimeoutMs?: number;
  /**
   * Output guardrails: sees each batch of events before it is written and returns what is written
   * instead (redacted, or with text held back until the next batch); called once more with
   * `final` before the end. Throws (or rejects) to end the stream with the format's error event;
   * a promise while a long batch is checked over several turns of the event loop.
   */
  filter?(events: readonly StreamEvent[], final: boolean): readonly StreamEvent[] | Promise<readonly StreamEvent[]>;
  onDone(summary: StreamSummary): void;
}

/** One open stream as the shared watchdog sees it. */
interface Watched {
  lastUpstream: number;
  lastWrite: number;
  /** Date.now() when the client's socket stopped draining; 0 while it reads. */
  stalledSince: number;
  idleTimeoutMs: number;
  keepAliveMs: number;
  stallTimeoutMs: number;
  idle(): void;
  keepAlive(): void;
  stalled(): void;
  /** Ends the stream from the gateway's side with an error event (shutdown). */
  cut(error: GatewayError): void;
}

/** Listener-wide default for SseOptions.stallTimeoutMs (GATEWAY_STREAM_STALL_TIMEOUT). */
let defaultStallMs = 60_000;
export const setStreamStallTimeout = (ms: number): void => {
  defaultStallMs = ms;
};

export const clientStalled = (ms: number): GatewayError =>
  new GatewayError({
    kind: 'invalid_request',
    status: 499,
    message: `The client read nothing for ${ms} ms; the stream was ended.`,
    errorCode: 'client_stalled',
    retryable: false,
  });

export const gatewayShutdown = (): GatewayError =>
  new GatewayError({
    kind: 'unavailable',
    message: 'The gateway is shutting down; the stream was ended before it finished.',
    errorCode: 'gateway_shutdown',
    retryable: false,
  });

/**
 * One watchdog for every open stream (a timer per stream costs more than the checks): sends
 * keep-alive comments on quiet streams and fails streams whose upstream went silent. Runs only
 * while streams are open.
 */
const WATCH_MS = 50;
const watched = new Sweep<Watched>(
  WATCH_MS,
  (w, now) => {
    // While the client is not reading, the upstream is not read either: that is not upstream idleness.
    if (w.stalledSince !== 0) {
      if (now - w.stalledSince > w.stallTimeoutMs) w.stalled();
    } else if (now - w.lastUpstream > w.idleTimeoutMs) w.idle();
    else if (now - w.lastWrite >= w.keepAliveMs) w.keepAlive();
    return false;
  },
  Date.now,
);
const startWatching = (w: Watched): void => watched.add(w);

/** Number of streams being written now. */
export const openStreamCount = (): number => watched.size;

/** Ends every open stream with `error` as the format's error event (used at the shutdown deadline). */
export const cutOpenStreams = (error: GatewayError): number => {
  const all = watched.items();
  for (const w of all) w.cut(error);
  return all.length;
};

/** Bun's direct stream: writes go to the socket without a queue; lib.dom's typing lacks the variant. */
type DirectSource = {
  type: 'direct';
  pull(controller: ReadableStreamDirectController): void | PromiseLike<void>;
  cancel?(reason?: unknown): void;
};
const directStream = (source: DirectSource): ReadableStream<Uint8Array> =>
  new ReadableStream(source as unknown as UnderlyingDefaultSource<Uint8Array>);

/**
 * Streams canonical events to the client as SSE in its format. Never stalls a quiet stream
 * (keep-alive comments), fails an idle upstream with a time-out event, and cancels the upstream
 * request when the client goes away. Text is written straight to the socket (a direct stream: no
 * queue, no TextEncoder, no pull per chunk). Backpressure: when the socket stops draining, a write
 * returns a promise and the upstream is not read until it resolves; a client that reads nothing for
 * the stall time-out has its stream ended and its upstream request cancelled.
 */
/** What sseResponse reads events from: an upstream stream, or a cached answer's events (cache/serve.ts). */
export type EventSource = Pick<OpenStream, 'first' | 'next' | 'abort' | 'takeRelay'>;

export const sseResponse = (open: EventSource, encoder: StreamEncoder, ids: RequestIds, opts: SseOptions): Response => {
  const obs = observer(256 * 1024);
  let finished = false;
  let sink: ReadableStreamDirectController | undefined;

  const now = Date.now();
  const w: Watched = {
    lastUpstream: now,
    lastWrite: now,
    stalledSince: 0,
    idleTimeoutMs: opts.idleTimeoutMs,
    keepAliveMs: opts.keepAliveMs,
    stallTimeoutMs: opts.stallTimeoutMs ?? defaultStallMs,
    idle: () => open.abort(timeoutError(opts.idleTimeoutMs)),
    keepAlive: () => {
      if (sink && !finished) void write(KEEPALIVE);
    },
    stalled: () => {
      // Nothing more is written: the client is not reading what it already has.
      const err = clientStalled(w.stallTimeoutMs);
      open.abort(err);
      finish(err);
      close();
    },
    cut: (error) => {
      if (finished) return;
      void write(encoder.error(error));
      open.abort(error);
      finish(error);
      close();
    },
  };
  /** Writes and flushes; returns a promise while the client's socket is not draining. */
  const write = (text: string): Promise<unknown> | undefined => {
    if (!sink) return undefined;
    w.lastWrite = Date.now();
    try {
      const written = sink.write(text);
      const flushed = sink.flush();
      if (flushed instanceof Promise) return flushed;
      return written instanceof Promise ? written : undefined;
    } catch {
      // The client is gone; the read loop or cancel() reports the outcome.
      return undefined;
    }
  };
  /** Waits for the socket to drain; the watchdog ends the stream if that takes too long. */
  const drain = async (pending: Promise<unknown> | undefined): Promise<void> => {
    if (!pending) return;
    w.stalledSince = Date.now();
    await pending;
    w.stalledSince = 0;
    w.lastUpstream = Date.now();
  };
  const close = (): void => {
    try {
      sink?.close();
    } catch {
      // The client is already gone.
    }
    ids.streamEnded?.();
  };
  const finish = (error?: GatewayError): void => {
    if (finished) return;
    finished = true;
    watched.delete(w);
    obs.summary.error = error;
    opts.onDone(obs.summary);
  };
  const encodeEvents = (events: readonly StreamEvent[]): string => {
    let out = '';
    for (const ev of events) {
      obs.see(ev);
      out += encoder.push(ev);
    }
    return open.takeRelay ? out + open.takeRelay() : out;
  };
  const encode = (batch: readonly StreamEvent[], final = false): string | Promise<string> => {
    if (!opts.filter) return encodeEvents(batch);
    const events = opts.filter(batch, final);
    return events instanceof Promise ? events.then(encodeEvents) : encodeEvents(events);
  };

  const stream = directStream({
    type: 'direct',
    async pull(controller) {
      sink = controller;
      startWatching(w);
      try {
        const encodedHead = encode(open.first);
        const head = encodedHead instanceof Promise ? await encodedHead : encodedHead;
        if (head) await drain(write(head));
        // Per chunk: drain() only when the socket did not take the write (no promise otherwise).
        let pending: Promise<unknown> | undefined;
        for (;;) {
          if (finished) return;
          const events = await open.next();
          if (finished) return;
          w.lastUpstream = Date.now();
          if (events === null) {
            const held = opts.filter ? await encode([], true) : '';
            if (held) write(held);
            const tail = encoder.end();
            if (tail) write(tail);
            finish();
            close();
            return;
          }
          const encoded = encode(events);
          const out = encoded instanceof Promise ? await encoded : encoded;
          if (out) {
            pending = write(out);
            if (pending !== undefined) await drain(pending);
          }
        }
      } catch (e) {
        if (finished) return;
        const err = asGatewayError(e);
        write(encoder.error(err));
        finish(err);
        close();
      }
    },
    cancel() {
      open.abort(clientClosed());
      finish(clientClosed());
      ids.streamEnded?.();
    },
  });
  const res = new Response(stream, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...idHeaders(ids),
    },
  });
  markGatewayStream(res);
  return res;
};
