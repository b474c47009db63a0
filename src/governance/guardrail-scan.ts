import type { RE2JS } from 're2js';
import { type Normalised, normalise, originalSpan } from './normalize.ts';
import { DETECTORS, type PiiType } from './pii.ts';

/**
 * The guardrail engine, framework-free: finds what a rule matches in a set of texts and applies its
 * action. Used by the data plane's input and output stages (src/data-plane/policies/guardrails.ts).
 *
 * Rules match normalised text (./normalize.ts), never the raw text. The texts of one request (or
 * of one answer) are matched in two views: each text alone (so `^`, `$` and `\b` hold at its own
 * edges), and all of them concatenated in order with nothing between them (so a match split across
 * content parts, messages, system text or tool arguments is caught). Base64 runs are decoded and
 * matched too (see `decodedRuns`). Every match is mapped back to spans of the original texts.
 */

export type GuardrailStage = 'input' | 'output' | 'both';
export type GuardrailKind = 'regex' | 'pii' | 'max_input_tokens';
export type GuardrailAction = 'block' | 'redact' | 'flag';

export interface GuardrailRule {
  name: string;
  stage: GuardrailStage;
  kind: GuardrailKind;
  /** `regex` rules: the compiled pattern (RE2 syntax, linear-time matching: ./pattern.ts). */
  regex?: RE2JS;
  /** `regex` rules: the pattern as saved (what a scan off the event loop compiles again). */
  pattern?: string;
  /** `regex` rules: the compiled program's size (RE2 instructions), the cost per character of locating matches. */
  programSize?: number;
  piiTypes: readonly PiiType[];
  maxTokens?: number;
  action: GuardrailAction;
  /**
   * Input documents the gateway cannot read (a PDF without extractable text, a file by id or URL…):
   * `scan` (the default) scans what it can read and lets the rest through, `refuse` refuses the request.
   */
  documents?: GuardrailDocuments;
}

export const GUARDRAIL_DOCUMENTS = ['scan', 'refuse'] as const;
export type GuardrailDocuments = (typeof GUARDRAIL_DOCUMENTS)[number];

export interface Match {
  start: number;
  end: number;
  /** What replaces it: `[REDACTED:<label>]` (the PII type, or the guardrail's name for regex rules). */
  label: string;
}

/** PII detectors (bounded JavaScript patterns of ours) run on slices of at most this many units… */
const PII_SLICE = 1 << 20;
/** …overlapping by more than the longest PII match, so no match is lost at a slice's edge. */
const PII_OVERLAP = 256;

const scanPii = (re: RegExp, text: string, label: string, valid: ((m: string) => boolean) | undefined, out: Match[]): void => {
  for (let from = 0; from < text.length; from += PII_SLICE) {
    const to = Math.min(text.length, from + PII_SLICE + PII_OVERLAP);
    const last = to === text.length;
    const slice = from === 0 && last ? text : text.slice(from, to);
    re.lastIndex = 0;
    for (let m = re.exec(slice); m !== null; m = re.exec(slice)) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      // A match starting in the overlap is the next slice's.
      if (!last && m.index >= PII_SLICE) break;
      if (!valid || valid(m[0])) out.push({ start: from + m.index, end: from + m.index + m[0].length, label });
    }
    if (last) break;
  }
};

/** Every match of an RE2 pattern (leftmost-first, non-overlapping, empty matches skipped). */
const scanRe2 = (re: RE2JS, text: string, label: string, out: Match[]): void => {
  const m = re.matcher(text);
  while (m.find()) {
    const start = m.start();
    const end = m.end();
    if (end > start) out.push({ start, end, label });
  }
};

/** Every match of a rule in a text (regex and pii rules), ordered, without overlaps. */
export const findMatches = (rule: GuardrailRule, text: string): Match[] => {
  const out: Match[] = [];
  if (rule.kind === 'regex' && rule.regex) scanRe2(rule.regex, text, rule.name, out);
  else if (rule.kind === 'pii') for (const t of rule.piiTypes) scanPii(DETECTORS[t].re, text, t, DETECTORS[t].valid, out);
  out.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Match[] = [];
  for (const m of out) if (kept.length === 0 || m.start >= (kept.at(-1) as Match).end) kept.push(m);
  return kept;
};

/**
 * Whether a rule matches a text at all. Regex rules run RE2's DFA without captures (the fast,
 * linear path); only redaction needs `findMatches` to locate the spans.
 */
const matchesText = (rule: GuardrailRule, text: string): boolean => {
  if (rule.kind === 'regex') return rule.regex?.test(text) === true;
  return findMatches(rule, text).length > 0;
};

/** A match in the original texts: text `part`, units [start, end). */
export interface Hit extends Match {
  part: number;
}

/** Base64 runs: at least MIN_B64 characters of one alphabet (standard or URL-safe), optional padding. */
const MIN_B64 = 12;
const B64_RUNS = [/[A-Za-z0-9+/]{12,}={0,2}/g, /[A-Za-z0-9_-]{12,}={0,2}/g];
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text a base64 run decodes to, when it is valid UTF-8 without control characters. */
const decodeRun = (run: string): string | undefined => {
  const body = run.replace(/=+$/, '');
  if (body.length < MIN_B64 || body.length % 4 === 1) return undefined;
  let text: string;
  try {
    text = utf8.decode(Buffer.from(body, body.includes('-') || body.includes('_') ? 'base64url' : 'base64'));
  } catch {
    return undefined;
  }
  return text.length > 0 && !CONTROL.test(text) ? text : undefined;
};

interface Decoded {
  start: number;
  end: number;
  /** The run's decoded text, normalised. */
  text: string;
}

/** The base64 runs of a (normalised) text that decode to text, with that text normalised. */
const decodedRuns = (text: string, keep: (start: number, end: number) => boolean): Decoded[] => {
  const out: Decoded[] = [];
  const seen = new Set<string>();
  for (const re of B64_RUNS) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const start = m.index;
      const end = start + m[0].length;
      const key = `${start}:${end}`;
      if (seen.has(key) || !keep(start, end)) continue;
      seen.add(key);
      const decoded = decodeRun(m[0]);
      if (decoded !== undefined) out.push({ start, end, text: normalise(decoded).text });
    }
  }
  return out;
};

interface View {
  text: string;
  decoded: Decoded[];
  /** The original spans of the view's span [start, end). */
  locate(start: number, end: number, label: string): Hit[];
}

/** Texts prepared for scanning with any number of rules. */
export interface Prepared {
  /** Each text, normalised. */
  readonly parts: readonly Normalised[];
  readonly views: readonly View[];
}

const partView = (n: Normalised, part: number): View => ({
  text: n.text,
  decoded: decodedRuns(n.text, () => true),
  locate: (start, end, label) => [{ part, ...originalSpan(n, start, end), label }],
});

const joinedView = (parts: readonly Normalised[]): View => {
  const offsets: number[] = [];
  let text = '';
  for (const n of parts) {
    offsets.push(text.length);
    text += n.text;
  }
  /** The last part starting at or before `at` (binary search). */
  const partOf = (at: number): number => {
    let lo = 0;
    let hi = parts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((offsets[mid] as number) <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const spansParts = (start: number, end: number): boolean => partOf(start) !== partOf(end - 1);
  const locate = (start: number, end: number, label: string): Hit[] => {
    const out: Hit[] = [];
    for (let p = partOf(start); p < parts.length && (offsets[p] as number) < end; p++) {
      const n = parts[p] as Normalised;
      const from = Math.max(start - (offsets[p] as number), 0);
      const to = Math.min(end - (offsets[p] as number), n.text.length);
      if (to > from) out.push({ part: p, ...originalSpan(n, from, to), label });
    }
    return out;
  };
  // Runs inside one part are decoded by that part's view already.
  return { text, decoded: decodedRuns(text, spansParts), locate };
};

export const prepare = (texts: readonly string[]): Prepared => {
  const parts = texts.map(normalise);
  const views = parts.map(partView);
  if (parts.length > 1) views.push(joinedView(parts));
  return { parts, views };
};

/** Every match of a rule in prepared texts, as spans of the original texts: sorted, overlaps merged. */
export const scan = (rule: GuardrailRule, prepared: Prepared): Hit[] => {
  const hits: Hit[] = [];
  for (const view of prepared.views) {
    // Locating matches (captures, the NFA) costs far more than asking whether there is one (the DFA).
    if (rule.kind !== 'regex' || matchesText(rule, view.text))
      for (const m of findMatches(rule, view.text)) hits.push(...view.locate(m.start, m.end, m.label));
    for (const d of view.decoded) {
      // A decoded run is redacted whole, under the label of its first match.
      const label = rule.kind === 'regex' ? (matchesText(rule, d.text) ? rule.name : undefined) : findMatches(rule, d.text)[0]?.label;
      if (label) hits.push(...view.locate(d.start, d.end, label));
    }
  }
  return mergeHits(hits);
};

/** Whether a rule matches anywhere in prepared texts (each text, all of them joined, decoded base64 runs). */
export const matchesAny = (rule: GuardrailRule, prepared: Prepared): boolean => {
  for (const view of prepared.views) {
    if (matchesText(rule, view.text)) return true;
    for (const d of view.decoded) if (matchesText(rule, d.text)) return true;
  }
  return false;
};

/** Hits sorted by text and start, overlapping ones merged into one (the earlier one's label). */
export const mergeHits = (hits: Hit[]): Hit[] => {
  hits.sort((a, b) => a.part - b.part || a.start - b.start || b.end - a.end);
  const out: Hit[] = [];
  for (const h of hits) {
    const last = out.at(-1);
    if (last && last.part === h.part && h.start < last.end) last.end = Math.max(last.end, h.end);
    else out.push({ ...h });
  }
  return out;
};

/** The texts with every hit replaced by `[REDACTED:<label>]`; the same array when there is none. */
export const redactParts = (texts: readonly string[], hits: Hit[]): readonly string[] => {
  if (hits.length === 0) return texts;
  const merged = mergeHits(hits);
  return texts.map((t, i) =>
    redact(
      t,
      merged.filter((h) => h.part === i),
    ),
  );
};

export const redact = (text: string, matches: readonly Match[]): string => {
  if (matches.length === 0) return text;
  let out = '';
  let at = 0;
  for (const m of matches) {
    out += `${text.slice(at, m.start)}[REDACTED:${m.label}]`;
    at = m.end;
  }
  return out + text.slice(at);
};

export const appliesTo = (rule: GuardrailRule, stage: 'input' | 'output'): boolean => rule.stage === 'both' || rule.stage === stage;
