import type { GatewayError } from '../core/errors.ts';
import { describeError, log } from '../core/log.ts';
import type { RecordEntry } from '../core/records.ts';
import type { Attempt, Outcome, RequestContext } from './context.ts';
import type { Settlement } from './settle.ts';

/**
 * The one place a request is observed. The pipeline reports each stage of a request once, as an
 * event, to every observer that implements it; tracing (telemetry/trace-observer.ts), metrics
 * (telemetry/metrics.ts) and the request records (records-observer.ts) are observers, nothing is
 * wired into the stages by hand. An MCP call (src/mcp) reports the same events for its call:
 *
 *   start(ctx)                          ctx from openContext(endpoint, ids, deps.observers), ctx.mcp set, ctx.key once known
 *   attemptStart(ctx, view)             the call to the MCP server: view.target = { connection: { name: serverId, provider: 'mcp' }, upstreamModel: tool }
 *   attemptEnd(ctx, view, attempt, e)   its end (e: the failure, undefined when it answered)
 *   finish → record                     pipeline/index.ts `finish(deps, ctx, outcome)`: settle, then both events
 *
 * Order per request: start, then per upstream attempt attemptStart and attemptEnd (fallbacks and
 * retries in the order tried), firstByte (streams), finish, record (when any observer takes
 * records). Cost: an event no observer implements is a loop over an empty list, and no event
 * builds an object of its own — each passes what the request path holds already (the context,
 * the attempt's try, the Attempt pushed for the record, the settlement). An observer must not
 * block; one that throws is logged (once per 10 s) and the request goes on.
 */

/** The upstream an attempt goes to, as observers see it (a ResolvedTarget is one). */
export interface AttemptTarget {
  readonly connection: { readonly name: string; readonly provider: string };
  readonly upstreamModel: string;
}

/** One attempt in flight: its target, and its upstream call once sent (the URL gives `server.address`). */
export interface AttemptView {
  readonly target: AttemptTarget;
  readonly call?: { readonly url: string | undefined };
}

export interface RequestObserver {
  /** Names the observer in logs. */
  readonly name: string;
  /** The request arrived (ids and headers known; caller and model not yet). */
  start?(ctx: RequestContext): void;
  /** An upstream attempt begins. May set ctx.upstreamHeaders (sent with this attempt's requests). */
  attemptStart?(ctx: RequestContext, view: AttemptView): void;
  /** An upstream attempt ended: answered (`error` undefined) or failed. */
  attemptEnd?(ctx: RequestContext, view: AttemptView, attempt: Attempt, error: GatewayError | undefined): void;
  /** A stream's first byte is about to be sent (`ms` since arrival). */
  firstByte?(ctx: RequestContext, ms: number): void;
  /** The request ended and was settled (once). */
  finish?(ctx: RequestContext, outcome: Outcome, settlement: Settlement): void;
  /** The request's record, built once when any observer implements this event. */
  record?(ctx: RequestContext, entry: RecordEntry): void;
  /** Flushes what it holds (at shutdown). */
  shutdown?(): Promise<void>;
}

type Fn<A extends unknown[]> = (...args: A) => void;

const guarded = <A extends unknown[]>(name: string, event: string, f: Fn<A>): Fn<A> => {
  const tag = `observer-${name}-${event}`;
  return (...args: A) => {
    try {
      f(...args);
    } catch (e) {
      log.every(tag, 'error', 'a request observer failed', { observer: name, event, error: describeError(e) });
    }
  };
};

/** The observers of a data plane, by event (fixed at start). */
export class Observers {
  readonly #start: Fn<[RequestContext]>[] = [];
  readonly #attemptStart: Fn<[RequestContext, AttemptView]>[] = [];
  readonly #attemptEnd: Fn<[RequestContext, AttemptView, Attempt, GatewayError | undefined]>[] = [];
  readonly #firstByte: Fn<[RequestContext, number]>[] = [];
  readonly #finish: Fn<[RequestContext, Outcome, Settlement]>[] = [];
  readonly #record: Fn<[RequestContext, RecordEntry]>[] = [];
  readonly list: readonly RequestObserver[];
  /** Whether any observer takes attempts (dispatch reports them only then). */
  readonly wantsAttempts: boolean;
  /** Whether any observer takes the record (the record entry is built only then). */
  readonly wantsRecord: boolean;

  constructor(list: readonly RequestObserver[]) {
    this.list = list;
    for (const o of list) {
      if (o.start) this.#start.push(guarded(o.name, 'start', o.start.bind(o)));
      if (o.attemptStart) this.#attemptStart.push(guarded(o.name, 'attemptStart', o.attemptStart.bind(o)));
      if (o.attemptEnd) this.#attemptEnd.push(guarded(o.name, 'attemptEnd', o.attemptEnd.bind(o)));
      if (o.firstByte) this.#firstByte.push(guarded(o.name, 'firstByte', o.firstByte.bind(o)));
      if (o.finish) this.#finish.push(guarded(o.name, 'finish', o.finish.bind(o)));
      if (o.record) this.#record.push(guarded(o.name, 'record', o.record.bind(o)));
    }
    this.wantsAttempts = this.#attemptStart.length + this.#attemptEnd.length > 0;
    this.wantsRecord = this.#record.length > 0;
  }

  start(ctx: RequestContext): void {
    for (const f of this.#start) f(ctx);
  }
  attemptStart(ctx: RequestContext, view: AttemptView): void {
    for (const f of this.#attemptStart) f(ctx, view);
  }
  attemptEnd(ctx: RequestContext, view: AttemptView, attempt: Attempt, error: GatewayError | undefined): void {
    for (const f of this.#attemptEnd) f(ctx, view, attempt, error);
  }
  firstByte(ctx: RequestContext, ms: number): void {
    for (const f of this.#firstByte) f(ctx, ms);
  }
  finish(ctx: RequestContext, outcome: Outcome, settlement: Settlement): void {
    for (const f of this.#finish) f(ctx, outcome, settlement);
  }
  record(ctx: RequestContext, entry: RecordEntry): void {
    for (const f of this.#record) f(ctx, entry);
  }
  async shutdown(): Promise<void> {
    await Promise.all(
      this.list.map((o) =>
        o
          .shutdown?.()
          .catch((e: unknown) => log.error('a request observer failed to shut down', { observer: o.name, error: describeError(e) })),
      ),
    );
  }
}

export const NO_OBSERVERS = new Observers([]);
