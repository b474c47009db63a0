import type { StreamEvent, ToolCall } from '../canonical/types.ts';
import type { RequestContext } from './context.ts';

/** A complete answer as output guardrails see it; a filter returns it (possibly redacted). */
export type AnswerView =
  | { kind: 'chat'; text: string; toolCalls: readonly ToolCall[]; finishReason: string | null }
  /** Extra endpoints: the parsed JSON answer, or undefined for binary/streamed answers. */
  | { kind: 'extra'; json: unknown; contentType: string };

/**
 * Input guardrails: look at the client's parsed body after the route is resolved and before
 * admission (a blocked request consumes no rate limit or budget and never reaches the upstream).
 * Throw the GatewayError the client gets to refuse; return a new body to replace it (redaction),
 * or undefined to leave it as is — or a promise of either (the rejection refuses), when the check
 * runs off the event loop.
 */
export interface InputGuardrail {
  readonly name: string;
  inspect(ctx: RequestContext, body: unknown): unknown | Promise<unknown>;
}

/**
 * One request's output filter. `answer` sees a whole non-streamed answer before any byte of it is
 * sent; `events` sees each batch of stream events before it is written, and once more with
 * `final` at the end (to release text it held back). Both return what is sent instead (redacted)
 * and throw the GatewayError that withholds the answer or ends the stream (what was already sent
 * stays sent). Either may answer with a promise when its check runs off the event loop or is paced
 * over several turns of it.
 */
export interface OutputFilter {
  answer(view: AnswerView): AnswerView | Promise<AnswerView>;
  events(events: readonly StreamEvent[], final: boolean): readonly StreamEvent[] | Promise<readonly StreamEvent[]>;
}

/**
 * Output guardrails: `open` gives the filter for one request, or undefined when nothing applies to
 * it. Filters read canonical content, so a request with a filter never takes the same-format
 * pass-through: its answer goes through the canonical path.
 */
export interface OutputGuardrail {
  readonly name: string;
  open(ctx: RequestContext): OutputFilter | undefined;
}

/** The request's output filter: the guardrails' filters chained, or undefined when none applies. */
export const openOutput = (guardrails: readonly OutputGuardrail[], ctx: RequestContext): OutputFilter | undefined => {
  const filters: OutputFilter[] = [];
  for (const g of guardrails) {
    const f = g.open(ctx);
    if (f) filters.push(f);
  }
  if (filters.length <= 1) return filters[0];
  return {
    answer: (view) =>
      filters.reduce<AnswerView | Promise<AnswerView>>((v, f) => (v instanceof Promise ? v.then((x) => f.answer(x)) : f.answer(v)), view),
    events: (events, final) =>
      filters.reduce<readonly StreamEvent[] | Promise<readonly StreamEvent[]>>(
        (evs, f) => (evs instanceof Promise ? evs.then((x) => f.events(x, final)) : f.events(evs, final)),
        events,
      ),
  };
};

export interface Inspected {
  body: unknown;
  changed: boolean;
}

/** Runs the input guardrails; returns the body to use (replaced when one redacted it), a promise once one answers with one. */
export const inspectInput = (
  guardrails: readonly InputGuardrail[],
  ctx: RequestContext,
  body: unknown,
  from = 0,
  changed = false,
): Inspected | Promise<Inspected> => {
  let current = body;
  for (let i = from; i < guardrails.length; i++) {
    const g = guardrails[i] as InputGuardrail;
    const next = g.inspect(ctx, current);
    if (next instanceof Promise)
      return next.then((n) =>
        n === undefined ? inspectInput(guardrails, ctx, current, i + 1, changed) : inspectInput(guardrails, ctx, n, i + 1, true),
      );
    if (next !== undefined) {
      current = next;
      changed = true;
    }
  }
  return { body: current, changed };
};
