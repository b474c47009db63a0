import type { StreamEvent, ToolCall } from '../../canonical/types.ts';
import { GatewayError } from '../../core/errors.ts';
import { costPerChar, type Evaluation, evaluatePrepared } from '../../governance/evaluate.ts';
import { type GuardrailRule, type Hit, prepare, redact, redactParts } from '../../governance/guardrail-scan.ts';
import { estimateTokens } from '../../governance/token-bound.ts';
import { evaluateBounded, INLINE_BUDGET, ScanTimeout } from '../../governance/scan-pool.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import { bodyTexts, replaceTexts } from './guardrail-texts.ts';
import type { AnswerView, InputGuardrail, OutputFilter, OutputGuardrail } from '../../pipeline/guardrails.ts';

/**
 * Guardrails (contract §3.2) on every inference endpoint, from the project's snapshot.
 *
 * Input: every text of the client's body (./guardrail-texts.ts: message text, instructions, system
 * and developer text, prompts, inputs, tool-call arguments, tool results, documents — text, base64
 * text and PDF text — in all three client formats; not structural fields such as `model`, `role`,
 * ids, tool schemas or image data) is scanned, normalised, each alone and all of them as one text
 * (governance/guardrail-scan.ts); a `block` match refuses the request (400 `guardrail_blocked`,
 * before anything is admitted or sent upstream), `redact` replaces the match in the original text
 * with `[REDACTED:<type>]` (a match spanning two strings: each piece; inside a base64 text document:
 * re-encoded), `flag` records the guardrail's name on the request record. A redaction inside a PDF's
 * text (which the gateway cannot rewrite) refuses the request in the redact rule's name. A guardrail
 * with `documents: "refuse"` refuses a request carrying a document the gateway cannot read.
 * `max_input_tokens` estimates the content's tokens (characters / 4, documents' text included).
 *
 * Output: whole answers (text and tool-call arguments as one set of texts) are scanned before they
 * are sent. Streams are scanned as they flow: per channel (text, reasoning, each tool call's
 * arguments) the last HOLD characters are held back until more arrives (or the channel changes or
 * the stream ends), so a match split across upstream chunks is caught before the client sees any of it.
 */

/** Text held back in a stream (the longest match caught across chunks). */
export const HOLD = 256;

export const blocked = (rule: GuardrailRule, what: 'request' | 'response'): GatewayError =>
  new GatewayError({
    kind: 'invalid_request',
    errorCode: 'guardrail_blocked',
    message: `The ${what} was blocked by the guardrail '${rule.name}'.`,
    retryable: false,
  });

const flag = (ctx: RequestContext, rule: GuardrailRule): void => {
  ctx.flags ??= new Set();
  ctx.flags.add(rule.name);
};

/** What an evaluation means for the request: throws on block, records flags, returns what to redact. */
const verdict = (rules: readonly GuardrailRule[], ctx: RequestContext, e: Evaluation, what: 'request' | 'response'): Hit[] => {
  if (e.blocked !== undefined) throw blocked(rules[e.blocked] as GuardrailRule, what);
  for (const i of e.flagged) flag(ctx, rules[i] as GuardrailRule);
  return e.hits;
};

/** An evaluation past the scan thread's time bound refuses what it was checking (fail closed). */
const unchecked = (e: unknown, what: 'request' | 'response'): never => {
  if (e instanceof ScanTimeout)
    throw new GatewayError({
      kind: 'invalid_request',
      errorCode: 'guardrail_blocked',
      message: `The ${what} was blocked: its guardrails could not be checked within ${e.timeoutMs} ms.`,
      retryable: false,
    });
  throw e;
};

/**
 * Checks a set of texts (one request's or one answer's) against the rules: throws on block, records
 * flags, returns the spans to redact. A promise when the texts were too large to check on the event
 * loop (governance/scan-pool.ts).
 */
const checkTexts = (
  rules: readonly GuardrailRule[],
  ctx: RequestContext,
  texts: readonly string[],
  what: 'request' | 'response',
): Hit[] | Promise<Hit[]> => {
  if (texts.length === 0) return [];
  const e = evaluateBounded(rules, texts);
  if (e instanceof Promise)
    return e.then(
      (v) => verdict(rules, ctx, v, what),
      (err) => unchecked(err, what),
    );
  return verdict(rules, ctx, e, what);
};

/** `checkTexts`, then the texts redacted (the same array when nothing was). */
const applyRules = (
  rules: readonly GuardrailRule[],
  ctx: RequestContext,
  texts: readonly string[],
  what: 'request' | 'response',
): readonly string[] | Promise<readonly string[]> => {
  const hits = checkTexts(rules, ctx, texts, what);
  return hits instanceof Promise ? hits.then((h) => redactParts(texts, h)) : redactParts(texts, hits);
};

/**
 * The redact rule a hit came from, by its label (a regex rule's name, or the PII type): a hit in a
 * text that cannot be rewritten (a PDF's text, a document that is not UTF-8) refuses the request in
 * that rule's name rather than forwarding it unredacted.
 */
const redactingRule = (rules: readonly GuardrailRule[], hit: Hit): GuardrailRule => {
  const redacting = rules.filter((r) => r.action === 'redact' && r.kind !== 'max_input_tokens');
  const byLabel = redacting.find((r) => (r.kind === 'regex' ? r.name === hit.label : r.piiTypes.some((t) => t === hit.label)));
  return byLabel ?? (redacting[0] as GuardrailRule);
};

/** Applies the rules to every text of a JSON value (./guardrail-texts.ts) as one set of texts (a promise when checked off the event loop). */
const applyToJson = (
  rules: readonly GuardrailRule[],
  ctx: RequestContext,
  value: unknown,
  what: 'request' | 'response',
  read = bodyTexts(value),
): unknown | Promise<unknown> => {
  const { texts } = read;
  const plain = texts.map((t) => t.text);
  const apply = (hits: Hit[]): unknown => {
    if (hits.length === 0) return value;
    for (const h of hits) if (texts[h.part]?.readOnly) throw blocked(redactingRule(rules, h), what);
    return replaceTexts(value, texts, redactParts(plain, hits));
  };
  const hits = checkTexts(rules, ctx, plain, what);
  return hits instanceof Promise ? hits.then(apply) : apply(hits);
};

export const inputGuardrail: InputGuardrail = {
  name: 'guardrails',
  inspect(ctx, body) {
    const rules = ctx.key?.project.guardrails.input;
    if (!rules || rules.length === 0) return undefined;
    const read = bodyTexts(body);
    const refuse = rules.find((r) => r.documents === 'refuse');
    if (refuse && read.opaque.length > 0) throw blocked(refuse, 'request');
    const chars = read.texts.reduce((n, t) => n + t.text.length, 0);
    for (const rule of rules) {
      if (rule.kind !== 'max_input_tokens' || rule.maxTokens === undefined) continue;
      if (estimateTokens(chars) <= rule.maxTokens) continue;
      if (rule.action === 'flag') flag(ctx, rule);
      else throw blocked(rule, 'request');
    }
    const out = applyToJson(rules, ctx, body, 'request', read);
    if (out instanceof Promise) return out.then((o) => (o === body ? undefined : o));
    return out === body ? undefined : out;
  },
};

/** The stream event carrying a piece of a channel's text. */
type Piece = (text: string) => StreamEvent;

/** One stream channel (text, reasoning, one tool call's arguments): scans pending text with the held-back tail. */
class HeldText {
  private pending = '';
  constructor(
    private readonly rules: readonly GuardrailRule[],
    private readonly ctx: RequestContext,
    readonly channel: string,
    readonly piece: Piece,
  ) {}

  /** Adds text; returns what can be sent now (everything but the last HOLD normalised characters). */
  push(delta: string): string {
    this.pending += delta;
    const prepared = prepare([this.pending]);
    const hits = verdict(this.rules, this.ctx, evaluatePrepared(this.rules, prepared), 'response');
    const n = prepared.parts[0];
    const keep = n ? n.text.length - HOLD : 0;
    if (!n || keep <= 0) return '';
    let safe = n.starts ? (n.starts[keep] as number) : keep;
    for (const h of hits) if (h.end > safe && h.start < safe) safe = h.start;
    const c = this.pending.charCodeAt(safe - 1);
    if (c >= 0xd800 && c <= 0xdbff) safe--;
    if (safe <= 0) return '';
    const out = redact(
      this.pending.slice(0, safe),
      hits.filter((h) => h.end <= safe),
    );
    this.pending = this.pending.slice(safe);
    return out;
  }

  flush(): string {
    if (this.pending === '') return '';
    const [out] = redactParts(
      [this.pending],
      verdict(this.rules, this.ctx, evaluatePrepared(this.rules, prepare([this.pending])), 'response'),
    );
    this.pending = '';
    return out ?? '';
  }
}

const channelOf = (ev: StreamEvent): { channel: string; text: string; piece: Piece } | undefined => {
  if (ev.type === 'text') return { channel: 'text', text: ev.text, piece: (text) => ({ type: 'text', text }) };
  if (ev.type === 'reasoning') return { channel: 'reasoning', text: ev.text, piece: (text) => ({ type: 'reasoning', text }) };
  if (ev.type === 'tool_call_delta') {
    const { index } = ev;
    return { channel: `tool:${index}`, text: ev.arguments, piece: (args) => ({ type: 'tool_call_delta', index, arguments: args }) };
  }
  return undefined;
};

/** The next turn of the event loop: a long stream batch is checked in slices with turns between them. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A slice of `text` of at most `n` units that does not end inside a surrogate pair. */
const sliceEnd = (text: string, from: number, n: number): number => {
  let end = Math.min(text.length, from + n);
  const c = text.charCodeAt(end - 1);
  if (end < text.length && c >= 0xd800 && c <= 0xdbff) end--;
  return end;
};

class Filter implements OutputFilter {
  private held: HeldText | undefined;
  /** Stream text checked per turn of the event loop: a window's worst-case cost stays within the inline budget. */
  private readonly slice: number;
  constructor(
    private readonly rules: readonly GuardrailRule[],
    private readonly ctx: RequestContext,
  ) {
    this.slice = Math.max(HOLD, Math.floor(INLINE_BUDGET / costPerChar(rules)) - HOLD);
  }

  answer(view: AnswerView): AnswerView | Promise<AnswerView> {
    if (view.kind === 'extra') {
      if (view.json === undefined) return view;
      const json = applyToJson(this.rules, this.ctx, view.json, 'response');
      return json instanceof Promise ? json.then((j) => ({ ...view, json: j })) : { ...view, json };
    }
    const texts = [view.text, ...view.toolCalls.map((c) => c.arguments)];
    const apply = (out: readonly string[]): AnswerView => {
      if (out === texts) return view;
      const toolCalls: ToolCall[] = view.toolCalls.map((c, i) =>
        out[i + 1] === c.arguments ? c : { ...c, arguments: out[i + 1] as string },
      );
      return { ...view, text: out[0] as string, toolCalls };
    };
    const out = applyRules(this.rules, this.ctx, texts, 'response');
    return out instanceof Promise ? out.then(apply) : apply(out);
  }

  events(events: readonly StreamEvent[], final: boolean): readonly StreamEvent[] | Promise<readonly StreamEvent[]> {
    let chars = 0;
    for (const ev of events) chars += channelOf(ev)?.text.length ?? 0;
    return chars <= this.slice ? this.check(events, final) : this.paced(events, final);
  }

  /** A batch with more text than one slice: each channel's text in slices, a turn of the event loop between them. */
  private async paced(events: readonly StreamEvent[], final: boolean): Promise<readonly StreamEvent[]> {
    const out: StreamEvent[] = [];
    for (const ev of events) {
      const ch = channelOf(ev);
      if (!ch || ch.text.length <= this.slice) {
        out.push(...this.check([ev], false));
        continue;
      }
      for (let from = 0; from < ch.text.length; ) {
        const end = sliceEnd(ch.text, from, this.slice);
        out.push(...this.check([ch.piece(ch.text.slice(from, end))], false));
        from = end;
        await nextTurn();
      }
    }
    if (final) out.push(...this.check([], true));
    return out;
  }

  private check(events: readonly StreamEvent[], final: boolean): StreamEvent[] {
    const out: StreamEvent[] = [];
    const release = (): void => {
      if (!this.held) return;
      const t = this.held.flush();
      if (t) out.push(this.held.piece(t));
      this.held = undefined;
    };
    for (const ev of events) {
      const ch = channelOf(ev);
      if (!ch) {
        if (ev.type !== 'start') release();
        out.push(ev);
        continue;
      }
      if (this.held && this.held.channel !== ch.channel) release();
      this.held ??= new HeldText(this.rules, this.ctx, ch.channel, ch.piece);
      const t = this.held.push(ch.text);
      if (t) out.push(this.held.piece(t));
    }
    if (final) release();
    return out;
  }
}

export const outputGuardrail: OutputGuardrail = {
  name: 'guardrails',
  open(ctx) {
    const rules = ctx.key?.project.guardrails.output;
    return rules?.some((r) => r.kind !== 'max_input_tokens') ? new Filter(rules, ctx) : undefined;
  },
};
