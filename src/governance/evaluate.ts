import { type GuardrailRule, type Hit, matchesAny, mergeHits, type Prepared, prepare, scan } from './guardrail-scan.ts';

/**
 * What a set of rules decides about a set of texts (one request's or one answer's), as plain data
 * (so that it can be computed on the scan thread, ./scan-pool.ts): the first `block` rule that
 * matches (rules apply in order; none after it is looked at), the `flag` rules that matched, and the
 * spans `redact` rules found (merged). `block` and `flag` rules only ask whether anything matches
 * (RE2's DFA, no capture tracking); `redact` rules locate their matches.
 */
export interface Evaluation {
  /** Index in the rules of the block rule that matched. */
  blocked?: number;
  /** Indexes of the flag rules that matched. */
  flagged: number[];
  hits: Hit[];
}

export const evaluate = (rules: readonly GuardrailRule[], texts: readonly string[]): Evaluation =>
  texts.length === 0 ? { flagged: [], hits: [] } : evaluatePrepared(rules, prepare(texts));

/** `evaluate` on texts already prepared (normalised, decoded). */
export const evaluatePrepared = (rules: readonly GuardrailRule[], prepared: Prepared): Evaluation => {
  const flagged: number[] = [];
  const hits: Hit[] = [];
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as GuardrailRule;
    if (rule.kind === 'max_input_tokens') continue;
    if (rule.action === 'redact') {
      hits.push(...scan(rule, prepared));
      continue;
    }
    if (!matchesAny(rule, prepared)) continue;
    if (rule.action === 'block') return { blocked: i, flagged, hits: [] };
    flagged.push(i);
  }
  return { flagged, hits: mergeHits(hits) };
};

/**
 * The work of evaluating rules on texts, in units of roughly 20 ns on this machine's class of CPU
 * in the worst case (measured in bench/guardrail-regex.ts): each text is scanned alone and, when
 * there are several, once more joined; a `block`/`flag` regex costs a unit per character (a DFA
 * step), a `redact` regex its program size per character (an NFA step per instruction), a PII type
 * a few units per character (JavaScript patterns of ours, with bounded repetition).
 */
export const evaluationCost = (rules: readonly GuardrailRule[], texts: readonly string[]): number => {
  let chars = 0;
  for (const t of texts) chars += t.length;
  if (texts.length > 1) chars *= 2;
  return chars * costPerChar(rules);
};

/** The cost units per character of text of evaluating the rules (see `evaluationCost`). */
export const costPerChar = (rules: readonly GuardrailRule[]): number => {
  let weight = 0;
  for (const r of rules) {
    if (r.kind === 'regex') weight += r.action === 'redact' ? (r.programSize ?? 1) : 1;
    else if (r.kind === 'pii') weight += 4 * r.piiTypes.length;
  }
  // Normalisation and base64 decoding of the texts, whatever the rules.
  return weight + 2;
};
