import type { StreamEvent, ToolCall } from '../../canonical/types.ts';
import { GatewayError } from '../../core/errors.ts';
import { estimateTokens, type GuardrailRule, type Hit, mergeHits, type Prepared, prepare, redact, redactParts, scan } from '../../governance/guardrail-scan.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { bodyTexts, replaceTexts } from './guardrail-texts.ts';
import type { AnswerView, InputGuardrail, OutputFilter, OutputGuardrail } from '../pipeline/guardrails.ts';

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
  new GatewayError({ kind: 'invalid_request', errorCode: 'guardrail_blocked', message: `The ${what} was blocked by the guardrail '${rule.name}'.`, retryable: false });

const flag = (ctx: RequestContext, rule: GuardrailRule): void => {
  (ctx.flags ??= new Set()).add(rule.name);
};

/** Scans prepared texts with the rules: throws on block, records flags, returns what to redact. */
const findHits = (rules: readonly GuardrailRule[], ctx: RequestContext, prepared: Prepared, what: 'request' | 'response'): Hit[] => {
  const hits: Hit[] = [];
  for (const rule of rules) {
    if (rule.kind === 'max_input_tokens') continue;
    const found = scan(rule, prepared);
    if (found.length === 0) continue;
    if (rule.action === 'block') throw blocked(rule, what);
    if (rule.action === 'flag') flag(ctx, rule);
    else hits.push(...found);
  }
  return mergeHits(hits);
};

/**
 * Applies the rules to a set of texts (one request's or one answer's): throws on block, records
 * flags, returns the texts redacted (the same array when nothing was).
 */
const applyRules = (rules: readonly GuardrailRule[], ctx: RequestContext, texts: readonly string[], what: 'request' | 'response'): readonly string[] =>
  texts.length === 0 ? texts : redactParts(texts, findHits(rules, ctx, prepare(texts), what));

/** Applies the rules to every text of a JSON value (./guardrail-texts.ts) as one set of texts. */
const applyToJson = (rules: readonly GuardrailRule[], ctx: RequestContext, value: unknown, what: 'request' | 'response', read = bodyTexts(value)): unknown => {
  const { texts } = read;
  const plain = texts.map((t) => t.text);
  const out = applyRules(rules, ctx, plain, what);
  if (out === plain) return value;
  texts.forEach((t, i) => {
    if (t.readOnly && out[i] !== t.text) throw blocked(redactingRule(rules, plain, i), what);
  });
  return replaceTexts(value, texts, out);
};

/**
 * The redact rule that matched in text `part` (which cannot be rewritten: a PDF's text, a document
 * that is not UTF-8): the request is refused in its name rather than forwarded unredacted.
 */
const redactingRule = (rules: readonly GuardrailRule[], texts: readonly string[], part: number): GuardrailRule => {
  const prepared = prepare(texts);
  const redacting = rules.filter((r) => r.action === 'redact' && r.kind !== 'max_input_tokens');
  return redacting.find((r) => scan(r, prepared).some((h) => h.part === part)) ?? (redacting[0] as GuardrailRule);
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
    const hits = findHits(this.rules, this.ctx, prepared, 'response');
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
    const [out] = applyRules(this.rules, this.ctx, [this.pending], 'response');
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

class Filter implements OutputFilter {
  private held: HeldText | undefined;
  constructor(
    private readonly rules: readonly GuardrailRule[],
    private readonly ctx: RequestContext,
  ) {}

  answer(view: AnswerView): AnswerView {
    if (view.kind === 'extra') {
      if (view.json === undefined) return view;
      return { ...view, json: applyToJson(this.rules, this.ctx, view.json, 'response') };
    }
    const texts = [view.text, ...view.toolCalls.map((c) => c.arguments)];
    const out = applyRules(this.rules, this.ctx, texts, 'response');
    if (out === texts) return view;
    const toolCalls: ToolCall[] = view.toolCalls.map((c, i) => (out[i + 1] === c.arguments ? c : { ...c, arguments: out[i + 1] as string }));
    return { ...view, text: out[0] as string, toolCalls };
  }

  events(events: readonly StreamEvent[], final: boolean): readonly StreamEvent[] {
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
    return rules && rules.some((r) => r.kind !== 'max_input_tokens') ? new Filter(rules, ctx) : undefined;
  },
};
