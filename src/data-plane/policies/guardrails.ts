import type { StreamEvent, ToolCall } from '../../canonical/types.ts';
import { GatewayError } from '../../core/errors.ts';
import { estimateTokens, findMatches, type GuardrailRule, type Match, redact } from '../../governance/guardrail-scan.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { AnswerView, InputGuardrail, OutputFilter, OutputGuardrail } from '../pipeline/guardrails.ts';

/**
 * Guardrails (contract §3.2) on every inference endpoint, from the project's snapshot.
 *
 * Input: every content string of the client's body (message text, instructions, prompts, inputs —
 * not structural fields such as `model`, `role`, ids, tool schemas or base64 data) is scanned; a
 * `block` match refuses the request (400 `guardrail_blocked`, before anything is admitted or sent
 * upstream), `redact` replaces the match with `[REDACTED:<type>]`, `flag` records the guardrail's
 * name on the request record. `max_input_tokens` estimates the content's tokens (characters / 4).
 *
 * Output: whole answers are scanned before they are sent. Streams are scanned as they flow: the
 * last HOLD characters of text are held back until more text arrives (or the stream ends), so a
 * match split across upstream chunks is caught and redacted before the client sees any of it.
 */

/** Text held back in a stream (the longest match caught across chunks). */
export const HOLD = 256;

const STRUCTURAL = new Set([
  'model', 'role', 'type', 'id', 'name', 'tool_call_id', 'call_id', 'tool_use_id', 'previous_response_id', 'voice',
  'response_format', 'encoding_format', 'size', 'quality', 'style', 'user', 'url', 'image_url', 'data', 'media_type',
  'format', 'service_tier', 'tool_choice', 'stop', 'metadata', 'signature', 'stream_options', 'modalities', 'reasoning',
  'cache_control', 'tools', 'functions', 'b64_json', 'object', 'embedding', 'finish_reason', 'stop_reason', 'status',
]);

export const blocked = (rule: GuardrailRule, what: 'request' | 'response'): GatewayError =>
  new GatewayError({ kind: 'invalid_request', errorCode: 'guardrail_blocked', message: `The ${what} was blocked by the guardrail '${rule.name}'.`, retryable: false });

const flag = (ctx: RequestContext, rule: GuardrailRule): void => {
  (ctx.flags ??= new Set()).add(rule.name);
};

/** Applies the rules to one text: throws on block, records flags, returns the redacted text. */
const applyRules = (rules: readonly GuardrailRule[], ctx: RequestContext, text: string, what: 'request' | 'response'): string => {
  let out = text;
  for (const rule of rules) {
    if (rule.kind === 'max_input_tokens') continue;
    const matches = findMatches(rule, out);
    if (matches.length === 0) continue;
    if (rule.action === 'block') throw blocked(rule, what);
    if (rule.action === 'flag') flag(ctx, rule);
    else out = redact(out, matches);
  }
  return out;
};

/** The value with every content string passed through `fn`; the same object when nothing changed. */
const mapStrings = (value: unknown, fn: (s: string) => string, depth = 0): unknown => {
  if (typeof value === 'string') return fn(value);
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((v, i) => {
      const n = mapStrings(v, fn, depth + 1);
      if (n !== v) (copy ??= [...value])[i] = n;
    });
    return copy ?? value;
  }
  const o = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const k of Object.keys(o)) {
    if (STRUCTURAL.has(k)) continue;
    const n = mapStrings(o[k], fn, depth + 1);
    if (n !== o[k]) (copy ??= { ...o })[k] = n;
  }
  return copy ?? o;
};

const contentChars = (value: unknown): number => {
  let n = 0;
  mapStrings(value, (s) => {
    n += s.length;
    return s;
  });
  return n;
};

export const inputGuardrail: InputGuardrail = {
  name: 'guardrails',
  inspect(ctx, body) {
    const rules = ctx.key?.project.guardrails.input;
    if (!rules || rules.length === 0) return undefined;
    for (const rule of rules) {
      if (rule.kind !== 'max_input_tokens' || rule.maxTokens === undefined) continue;
      if (estimateTokens(contentChars(body)) <= rule.maxTokens) continue;
      if (rule.action === 'flag') flag(ctx, rule);
      else throw blocked(rule, 'request');
    }
    const out = mapStrings(body, (s) => applyRules(rules, ctx, s, 'request'));
    return out === body ? undefined : out;
  },
};

/** One stream's text channel: scans pending text with the held-back tail. */
class HeldText {
  private pending = '';
  constructor(
    private readonly rules: readonly GuardrailRule[],
    private readonly ctx: RequestContext,
  ) {}

  private scan(text: string): Match[] {
    const all: Match[] = [];
    for (const rule of this.rules) {
      if (rule.kind === 'max_input_tokens') continue;
      const ms = findMatches(rule, text);
      if (ms.length === 0) continue;
      if (rule.action === 'block') throw blocked(rule, 'response');
      if (rule.action === 'flag') flag(this.ctx, rule);
      else all.push(...ms);
    }
    all.sort((a, b) => a.start - b.start || b.end - a.end);
    const kept: Match[] = [];
    for (const m of all) if (kept.length === 0 || m.start >= (kept.at(-1) as Match).end) kept.push(m);
    return kept;
  }

  /** Adds text; returns what can be sent now (everything but the held-back tail). */
  push(delta: string): string {
    this.pending += delta;
    const matches = this.scan(this.pending);
    let safe = this.pending.length - HOLD;
    if (safe <= 0) return '';
    for (const m of matches) if (m.end > safe && m.start < safe) safe = m.start;
    const out = redact(
      this.pending.slice(0, safe),
      matches.filter((m) => m.end <= safe),
    );
    this.pending = this.pending.slice(safe);
    return out;
  }

  flush(): string {
    if (this.pending === '') return '';
    const out = redact(this.pending, this.scan(this.pending));
    this.pending = '';
    return out;
  }
}

class Filter implements OutputFilter {
  private readonly text: HeldText;
  constructor(
    private readonly rules: readonly GuardrailRule[],
    private readonly ctx: RequestContext,
  ) {
    this.text = new HeldText(rules, ctx);
  }

  answer(view: AnswerView): AnswerView {
    const apply = (s: string): string => applyRules(this.rules, this.ctx, s, 'response');
    if (view.kind === 'extra') {
      if (view.json === undefined) return view;
      return { ...view, json: mapStrings(view.json, apply) };
    }
    const text = apply(view.text);
    let toolCalls: readonly ToolCall[] = view.toolCalls;
    view.toolCalls.forEach((c, i) => {
      const args = apply(c.arguments);
      if (args !== c.arguments) {
        if (toolCalls === view.toolCalls) toolCalls = [...view.toolCalls];
        (toolCalls as ToolCall[])[i] = { ...c, arguments: args };
      }
    });
    return text === view.text && toolCalls === view.toolCalls ? view : { ...view, text, toolCalls };
  }

  events(events: readonly StreamEvent[], final: boolean): readonly StreamEvent[] {
    const out: StreamEvent[] = [];
    const release = (): void => {
      const t = this.text.flush();
      if (t) out.push({ type: 'text', text: t });
    };
    for (const ev of events) {
      if (ev.type === 'text') {
        const t = this.text.push(ev.text);
        if (t) out.push({ type: 'text', text: t });
        continue;
      }
      if (ev.type === 'start') {
        out.push(ev);
        continue;
      }
      release();
      if (ev.type === 'tool_call_delta') {
        const args = applyRules(this.rules, this.ctx, ev.arguments, 'response');
        out.push(args === ev.arguments ? ev : { ...ev, arguments: args });
      } else if (ev.type === 'reasoning') {
        const t = applyRules(this.rules, this.ctx, ev.text, 'response');
        out.push(t === ev.text ? ev : { ...ev, text: t });
      } else out.push(ev);
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
