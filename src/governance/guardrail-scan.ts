import { DETECTORS, type PiiType } from './pii.ts';

/**
 * The guardrail engine, framework-free: finds what a rule matches in a text and applies its
 * action. Used by the data plane's input and output stages (src/data-plane/policies/guardrails.ts).
 */

export type GuardrailStage = 'input' | 'output' | 'both';
export type GuardrailKind = 'regex' | 'pii' | 'max_input_tokens';
export type GuardrailAction = 'block' | 'redact' | 'flag';

export interface GuardrailRule {
  name: string;
  stage: GuardrailStage;
  kind: GuardrailKind;
  /** `regex` rules: the compiled pattern (global flag). */
  regex?: RegExp;
  piiTypes: readonly PiiType[];
  maxTokens?: number;
  action: GuardrailAction;
}

export interface Match {
  start: number;
  end: number;
  /** What replaces it: `[REDACTED:<label>]` (the PII type, or the guardrail's name for regex rules). */
  label: string;
}

/** The longest text a regex rule is run on at once; longer texts are scanned in overlapping slices. */
const MAX_SCAN = 1 << 20;

const scanRe = (re: RegExp, text: string, label: string, valid: ((m: string) => boolean) | undefined, out: Match[]): void => {
  if (text.length > MAX_SCAN) return scanRe(re, text.slice(0, MAX_SCAN), label, valid, out);
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    if (!valid || valid(m[0])) out.push({ start: m.index, end: m.index + m[0].length, label });
  }
};

/** Every match of a rule in a text (regex and pii rules), ordered, without overlaps. */
export const findMatches = (rule: GuardrailRule, text: string): Match[] => {
  const out: Match[] = [];
  if (rule.kind === 'regex' && rule.regex) scanRe(rule.regex, text, rule.name, undefined, out);
  else if (rule.kind === 'pii') for (const t of rule.piiTypes) scanRe(DETECTORS[t].re, text, t, DETECTORS[t].valid, out);
  out.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Match[] = [];
  for (const m of out) if (kept.length === 0 || m.start >= (kept.at(-1) as Match).end) kept.push(m);
  return kept;
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

/** The estimate of `max_input_tokens` rules and of token reservations: one token per 4 characters. */
export const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

export const appliesTo = (rule: GuardrailRule, stage: 'input' | 'output'): boolean => rule.stage === 'both' || rule.stage === stage;
