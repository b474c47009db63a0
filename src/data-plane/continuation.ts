import type { CanonicalRequest, StreamEvent, Usage } from '../canonical/types.ts';
import { asGatewayError, type GatewayError } from '../core/errors.ts';
import type { Attempt, RequestContext } from '../pipeline/context.ts';
import { streamedUsage } from '../pipeline/settle.ts';
import type { ResolvedTarget, RouteSnapshot } from '../propagation/snapshot.ts';
import { dispatchStream, type OpenStream } from './dispatch.ts';

/**
 * Mid-stream fallback (contract §14, project setting `mid-stream-fallback`): a stream that breaks
 * after the client received part of the answer is continued by the route's next target, in the
 * same client stream. The continuation gets the original request plus an assistant message with
 * the text streamed so far (an Anthropic-family upstream takes it as a prefill and continues it;
 * an OpenAI-family one as the last assistant turn); its events join the client's stream without a
 * second `start` (one message, one id, content indexes continuing, one finish and usage at the end),
 * and its usage events carry the sum of every attempt's usage (a broken attempt's as settlement
 * would charge it: what it reported, its output raised to what it streamed). The whole stream goes
 * through the client format's encoder and the output guardrails as one answer.
 *
 * Only text is continued: a break after a tool call began fails the stream with the format's error
 * event, as a break does without the setting; so does a client abort, a client that stopped
 * reading, a shutdown, or the lack of a target not tried yet. Only wrapped when the setting is on,
 * so the hot path of other projects is the bare OpenStream.
 */

/** Errors that end a stream from the client's or the gateway's side: never continued. */
const FINAL = new Set(['client_closed', 'client_stalled', 'gateway_shutdown']);

const addUsage = (a: Usage, b: Usage): Usage => {
  const sum: Usage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  const cached = (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  const written = (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0);
  const reasoning = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  if (cached > 0) sum.cachedInputTokens = cached;
  if (written > 0) sum.cacheWriteTokens = written;
  if (reasoning > 0) sum.reasoningTokens = reasoning;
  return sum;
};

/** Targets of the route (its own, then the global fallback) not tried yet by this request. */
const untried = (route: RouteSnapshot, attempts: readonly Attempt[]): ResolvedTarget[] => {
  const tried = (t: ResolvedTarget) => attempts.some((a) => a.connection === t.connection.name && a.upstreamModel === t.upstreamModel);
  const out: ResolvedTarget[] = [];
  for (const t of [...route.tiers.flat(), ...route.fallback])
    if (!tried(t) && !out.some((o) => o.connection.name === t.connection.name && o.upstreamModel === t.upstreamModel)) out.push(t);
  return out;
};

/** The route narrowed to the targets a continuation may go to, tried in that order, once each. */
const restOf = (route: RouteSnapshot, targets: ResolvedTarget[]): RouteSnapshot => ({
  ...route,
  tiers: targets.map((t) => [t]),
  maxRetries: 0,
  fallback: [],
  strategy: 'ordered',
});

/** The original request plus the text so far as an assistant prefix to continue. */
export const continuationRequest = (req: CanonicalRequest, text: string): CanonicalRequest => {
  // Anthropic refuses a prefill ending in whitespace; the continuation writes it again if it belongs.
  const prefix = text.trimEnd();
  if (prefix === '') return { ...req, stream: true };
  return { ...req, stream: true, messages: [...req.messages, { role: 'assistant', content: [{ type: 'text', text: prefix }] }] };
};

/** Whether a stream that failed with `e` may be continued by another target. */
const breakable = (e: GatewayError, client: AbortSignal, stopped: boolean): boolean =>
  !stopped && !client.aborted && e.status !== 499 && !FINAL.has(e.errorCode);

/**
 * The open stream `first`, continued by the route's untried targets when it breaks. `attempts` is
 * the stream's own list: continuations add theirs to it (the broken attempt gets the error code of
 * the break), so the request record counts them all.
 */
export const continuable = (
  first: OpenStream,
  req: CanonicalRequest,
  route: RouteSnapshot,
  client: AbortSignal,
  ctx: RequestContext,
): OpenStream & { continued(): boolean } => {
  let current = first;
  let text = '';
  /** Output characters of the current attempt (text, reasoning, tool-call arguments), for its charge. */
  let chars = 0;
  let reported: Usage | undefined;
  /** The charged usage of the attempts that broke (undefined until one did). */
  let base: Usage | undefined;
  let toolCall = false;
  let stopped = false;
  let continuations = 0;
  /**
   * Whether the summed usage is still to be told: a continuation that reports none is charged the
   * broken attempts' at its end. Never as an event at the join itself: any non-text event there
   * would make the output guardrails release the text they hold, and miss a word across the join.
   */
  let owed = false;
  /**
   * Whitespace the client already got but the prefix left out: a continuation that writes it
   * again (" three" after "one two ") has its leading whitespace dropped, so the join is not doubled.
   */
  let dropLeadingSpace = false;

  /** Notes what the client is about to get; rewrites a continuation's start and usage. */
  const seen = (events: readonly StreamEvent[], joining: boolean): StreamEvent[] => {
    const out: StreamEvent[] = [];
    for (const ev of events) {
      switch (ev.type) {
        case 'start':
          if (ev.usage) reported = ev.usage;
          // A continuation's start is dropped (its counts come with its next usage event, summed).
          if (!joining) out.push(ev);
          continue;
        case 'usage':
          reported = ev.usage;
          owed = false;
          out.push(base ? { type: 'usage', usage: addUsage(base, ev.usage) } : ev);
          continue;
        case 'text': {
          const written = dropLeadingSpace ? ev.text.trimStart() : ev.text;
          if (written === '') continue;
          dropLeadingSpace = false;
          text += written;
          chars += ev.text.length;
          out.push(written === ev.text ? ev : { ...ev, text: written });
          continue;
        }
        case 'reasoning':
          chars += ev.text.length;
          break;
        case 'tool_call_start':
          toolCall = true;
          break;
        case 'tool_call_delta':
          chars += ev.arguments.length;
          break;
        default:
          break;
      }
      out.push(ev);
    }
    return out;
  };

  const resume = async (e: unknown): Promise<StreamEvent[]> => {
    const err = asGatewayError(e);
    const attempts = first.attempts;
    if (toolCall || !breakable(err, client, stopped)) throw err;
    const targets = untried(route, attempts);
    if (targets.length === 0) throw err;
    // The broken attempt: marked with its break, charged what it produced.
    const i = attempts.length - 1;
    const last = attempts[i];
    if (last) attempts[i] = { ...last, errorCode: err.errorCode };
    const charged = streamedUsage(ctx, reported, chars);
    base = base ? addUsage(base, charged) : charged;
    const next = await dispatchStream(continuationRequest(req, text), restOf(route, targets), client, undefined, ctx);
    for (const a of next.ok ? next.stream.attempts : next.attempts) attempts.push(a);
    if (!next.ok) throw err;
    current = next.stream;
    continuations++;
    chars = 0;
    reported = undefined;
    owed = true;
    dropLeadingSpace = text.trimEnd() !== text;
    return seen(next.stream.first, true);
  };

  return {
    target: first.target,
    attempts: first.attempts,
    first: seen(first.first, false),
    controller: first.controller,
    async next() {
      try {
        const events = await current.next();
        if (events !== null) return seen(events, true);
        if (!owed || !base) return null;
        // The stream's end: the reader answers null again on the next call.
        owed = false;
        return [{ type: 'usage', usage: reported ? addUsage(base, reported) : base }];
      } catch (e) {
        return resume(e);
      }
    },
    abort(reason) {
      if (FINAL.has(reason.errorCode) || reason.status === 499) stopped = true;
      current.abort(reason);
    },
    continued: () => continuations > 0,
  };
};
