/**
 * Texts as one (for vendors that take a single text) and spans back: the texts joined by a newline,
 * a vendor's offsets into the joined text (code points, as Presidio's Python reports them) mapped
 * back to UTF-16 spans of each text, and spans replaced by `[REDACTED:<label>]`.
 */

export interface Span {
  index: number;
  start: number;
  end: number;
  label: string;
}

const SEP = '\n';

export interface Joined {
  text: string;
  /** Spans of the texts from code-point offsets into `text` (a span over a separator is cut in pieces); undefined when one is out of range. */
  spansOf(found: readonly { start: number; end: number; label: string }[]): Span[] | undefined;
}

/** UTF-16 index of each code point of `text` (and of its end), or undefined when they are the same. */
const codePointIndex = (text: string): number[] | undefined => {
  if (!/[\ud800-\udfff]/.test(text)) return undefined;
  const out: number[] = [];
  let i = 0;
  for (const ch of text) {
    out.push(i);
    i += ch.length;
  }
  out.push(i);
  return out;
};

export const joinTexts = (texts: readonly string[]): Joined => {
  const text = texts.join(SEP);
  return {
    text,
    spansOf(found) {
      const map = codePointIndex(text);
      const limit = map ? map.length - 1 : text.length;
      const starts: number[] = [];
      let at = 0;
      for (const t of texts) {
        starts.push(at);
        at += t.length + SEP.length;
      }
      const out: Span[] = [];
      for (const f of found) {
        if (!Number.isInteger(f.start) || !Number.isInteger(f.end) || f.start < 0 || f.end > limit) return undefined;
        const s = map ? (map[f.start] as number) : f.start;
        const e = map ? (map[f.end] as number) : f.end;
        texts.forEach((t, index) => {
          const from = starts[index] as number;
          const lo = Math.max(s, from) - from;
          const hi = Math.min(e, from + t.length) - from;
          if (hi > lo) out.push({ index, start: lo, end: hi, label: f.label });
        });
      }
      return out;
    },
  };
};

/** The texts with every span replaced by `[REDACTED:<label>]` (overlapping spans merged, the first label kept). */
export const redactSpans = (texts: readonly string[], spans: readonly Span[]): string[] =>
  texts.map((t, index) => {
    const mine = spans.filter((s) => s.index === index && s.end > s.start).sort((a, b) => a.start - b.start);
    if (mine.length === 0) return t;
    let out = '';
    let at = 0;
    let i = 0;
    while (i < mine.length) {
      const first = mine[i] as Span;
      let end = first.end;
      i++;
      while (i < mine.length && (mine[i] as Span).start < end) {
        end = Math.max(end, (mine[i] as Span).end);
        i++;
      }
      out += `${t.slice(at, Math.max(at, first.start))}[REDACTED:${first.label}]`;
      at = Math.max(at, end);
    }
    return out + t.slice(at);
  });
