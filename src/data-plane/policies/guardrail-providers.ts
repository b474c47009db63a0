import type { StreamEvent, ToolCall } from '../../canonical/types.ts';
import type { ProviderGuardrail } from '../../governance/guardrail-providers.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import type { AnswerView, InputGuardrail, OutputFilter, OutputGuardrail } from '../../pipeline/guardrails.ts';
import { blockedBy, checkAll } from '../guardrail-vendors/call.ts';
import { bodyTexts, replaceTexts } from './guardrail-texts.ts';

/**
 * Provider guardrails (contract §15) on every door: the same input and output stages as the
 * built-in guardrails (./guardrails.ts), so Chat, Responses, Messages, the other client formats,
 * each batch line and each governed MCP call get them. A project without provider guardrails pays
 * one property read per stage (`guardrailProviders` is absent from its snapshot).
 *
 * Input: every text of the body (./guardrail-texts.ts) is sent to each of the project's input
 * provider guardrails (in parallel); a block refuses the request, a redaction rewrites the texts.
 * Output: a whole answer is checked before any byte is sent; a stream is checked in windows (see
 * WindowFilter).
 */

const inputOf = (ctx: RequestContext): readonly ProviderGuardrail[] | undefined => ctx.key?.project.guardrailProviders?.input;

/** The guardrail whose redaction reached a text the gateway cannot rewrite: the last that redacted. */
const redactor = (ctx: RequestContext): string =>
  [...(ctx.guardrails ?? [])].reverse().find((d) => d.action === 'redact')?.name ?? 'guardrail';

/** Checks the texts of a JSON value, returns the value rewritten (the same value when nothing changed). */
const checkJson = async (
  ctx: RequestContext,
  gs: readonly ProviderGuardrail[],
  value: unknown,
  stage: 'input' | 'output',
): Promise<unknown> => {
  const read = bodyTexts(value);
  const plain = read.texts.map((t) => t.text);
  const out = await checkAll(ctx, gs, plain, stage);
  if (out === plain) return value;
  for (let i = 0; i < plain.length; i++)
    if (out[i] !== plain[i] && read.texts[i]?.readOnly) throw blockedBy(redactor(ctx), stage === 'input' ? 'request' : 'response');
  return replaceTexts(value, read.texts, out);
};

export const providerInputGuardrail: InputGuardrail = {
  name: 'guardrail-providers',
  inspect(ctx, body) {
    const gs = inputOf(ctx);
    if (gs === undefined || gs.length === 0) return undefined;
    return checkJson(ctx, gs, body, 'input').then((out) => (out === body ? undefined : out));
  },
};

/** The stream event carrying a piece of a channel's text. */
type Piece = (text: string) => StreamEvent;

const channelOf = (ev: StreamEvent): { channel: string; text: string; piece: Piece } | undefined => {
  if (ev.type === 'text') return { channel: 'text', text: ev.text, piece: (text) => ({ type: 'text', text }) };
  if (ev.type === 'reasoning') return { channel: 'reasoning', text: ev.text, piece: (text) => ({ type: 'reasoning', text }) };
  if (ev.type === 'tool_call_delta') {
    const { index } = ev;
    return { channel: `tool:${index}`, text: ev.arguments, piece: (args) => ({ type: 'tool_call_delta', index, arguments: args }) };
  }
  return undefined;
};

/** The index of the last whitespace of `text`, -1 when none. */
const lastSpace = (text: string): number => {
  for (let i = text.length - 1; i >= 0; i--) if (/\s/.test(text.charAt(i))) return i;
  return -1;
};

/** The smallest window after the first (the windows grow from it to `windowChars`). */
const MIN_WINDOW = 64;

interface Held {
  channel: string;
  piece: Piece;
  /** Text not yet released: the overlap kept from the last window, then what came after it. */
  text: string;
  /** Characters of the channel released so far. */
  released: number;
}

/**
 * A stream's provider check. Per channel (text, reasoning, each tool call's arguments) text is held
 * until a window is due, then the window is checked and released up to its end less the overlap
 * (`windowChars` / 10), which is held and checked again with the next window — a match split across
 * two windows is seen whole. The first window is the first text, released up to its last word
 * boundary (the first token waits for one vendor call, not for a window of text; a word cut by the
 * chunk's end is held and checked whole with the next window); the next ones grow from MIN_WINDOW to
 * `windowChars`. A redacted window is released whole, rewritten. The rest of a channel is checked
 * when the channel changes, another event comes, or the stream ends; a block throws (the stream ends
 * with the format's error event).
 */
class WindowFilter implements OutputFilter {
  private held: Held | undefined;
  private readonly released = new Map<string, number>();
  private readonly windowChars: number;
  private readonly overlap: number;
  constructor(
    private readonly gs: readonly ProviderGuardrail[],
    private readonly ctx: RequestContext,
  ) {
    this.windowChars = Math.min(...gs.map((g) => g.windowChars));
    this.overlap = Math.floor(this.windowChars / 10);
  }

  answer(view: AnswerView): Promise<AnswerView> {
    if (view.kind === 'extra') {
      if (view.json === undefined) return Promise.resolve(view);
      return checkJson(this.ctx, this.gs, view.json, 'output').then((json) => (json === view.json ? view : { ...view, json }));
    }
    const texts = [view.text, ...view.toolCalls.map((c) => c.arguments)];
    return checkAll(this.ctx, this.gs, texts, 'output').then((out): AnswerView => {
      if (out === texts) return view;
      const toolCalls: ToolCall[] = view.toolCalls.map((c, i) =>
        out[i + 1] === c.arguments ? c : { ...c, arguments: out[i + 1] as string },
      );
      return { ...view, text: out[0] as string, toolCalls };
    });
  }

  /** The length of held text at which a window is due. */
  private due(h: Held): number {
    if (h.released === 0) return 1;
    return Math.min(this.windowChars, Math.max(MIN_WINDOW, h.released)) + this.overlap;
  }

  events(events: readonly StreamEvent[], final: boolean): readonly StreamEvent[] | Promise<readonly StreamEvent[]> {
    // The common case: text that does not complete a window, nothing to check yet.
    const h = final ? undefined : this.quiet(events);
    if (h) {
      for (const ev of events) h.text += channelOf(ev)?.text ?? '';
      return [];
    }
    return this.run(events, final);
  }

  /** The held channel when the batch only adds text to it without making a window due. */
  private quiet(events: readonly StreamEvent[]): Held | undefined {
    const h = this.held;
    if (!h) return undefined;
    let n = h.text.length;
    for (const ev of events) {
      const ch = channelOf(ev);
      if (!ch || ch.channel !== h.channel) return undefined;
      n += ch.text.length;
    }
    return n < this.due(h) ? h : undefined;
  }

  private async run(events: readonly StreamEvent[], final: boolean): Promise<readonly StreamEvent[]> {
    const out: StreamEvent[] = [];
    for (const ev of events) {
      const ch = channelOf(ev);
      if (!ch) {
        if (ev.type !== 'start') await this.flush(out);
        out.push(ev);
        continue;
      }
      if (this.held && this.held.channel !== ch.channel) await this.flush(out);
      const h = this.held ?? { channel: ch.channel, piece: ch.piece, text: '', released: this.released.get(ch.channel) ?? 0 };
      this.held = h;
      h.text += ch.text;
      while (h.text.length >= this.due(h)) await this.window(h, out, false);
    }
    if (final) await this.flush(out);
    return out;
  }

  /** Checks and releases the rest of the held channel (in windows), and lets it go. */
  private async flush(out: StreamEvent[]): Promise<void> {
    const h = this.held;
    if (!h) return;
    while (h.text !== '') await this.window(h, out, true);
    this.held = undefined;
  }

  /**
   * Checks the next window of held text and releases it: up to the overlap, or whole when it is the
   * channel's last (`last`), its first, or rewritten.
   */
  private async window(h: Held, out: StreamEvent[], last: boolean): Promise<void> {
    let end = Math.min(h.text.length, h.released === 0 ? h.text.length : this.windowChars + this.overlap);
    const c = h.text.charCodeAt(end - 1);
    if (end < h.text.length && c >= 0xd800 && c <= 0xdbff) end--;
    const window = h.text.slice(0, end);
    const [checked] = await checkAll(this.ctx, this.gs, [window], 'output');
    let send = window;
    let keep = 0;
    if (checked !== window) send = checked ?? '';
    else if (!(last && end === h.text.length)) {
      // The first window keeps its last, perhaps partial, word; the next ones the overlap.
      keep = h.released === 0 ? window.length - (lastSpace(window) + 1) : window.length > this.overlap ? this.overlap : 0;
      const k = window.charCodeAt(window.length - keep - 1);
      if (keep > 0 && k >= 0xd800 && k <= 0xdbff) keep++;
      send = window.slice(0, window.length - keep);
    }
    h.text = window.slice(window.length - keep) + h.text.slice(end);
    h.released += send.length;
    this.released.set(h.channel, h.released);
    if (send !== '') out.push(h.piece(send));
  }
}

export const providerOutputGuardrail: OutputGuardrail = {
  name: 'guardrail-providers',
  open(ctx) {
    const gs = ctx.key?.project.guardrailProviders?.output;
    return gs && gs.length > 0 ? new WindowFilter(gs, ctx) : undefined;
  },
};
