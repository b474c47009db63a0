import { RE2JS } from 're2js';
import { normalisePattern } from './normalize.ts';

/**
 * Guardrail patterns (contract §3.2, `kind: "regex"`) in RE2 syntax, matched by `re2js`: a pure
 * TypeScript port of RE2 whose automata match in time linear in the text (no backtracking), so no
 * pattern a tenant saves can make a crafted text stall the process ("ReDoS"). JavaScript spellings
 * RE2 lacks are translated first (`\uXXXX`, `\u{…}`, `(?<name>…)`, `\cX`); what RE2 cannot express
 * in linear time — lookahead, lookbehind, backreferences, atomic groups, possessive quantifiers —
 * is refused at save (management API and Terraform plan, one function) naming the construct.
 *
 * The management API, the Terraform provider's plan check and the data plane's snapshot builder all
 * compile through `compilePattern`, so a pattern that saves is a pattern that runs.
 */

/** Longest pattern accepted (characters). */
export const MAX_PATTERN_CHARS = 1024;
/** Largest compiled program accepted (RE2 instructions): bounds the cost per character of a match. */
export const MAX_PROGRAM_SIZE = 2000;

export type PatternResult = { ok: true; re: RE2JS; programSize: number } | { ok: false; reason: string };

const CONSTRUCTS: readonly { test: RegExp; name: string }[] = [
  { test: /^\(\?=/, name: 'lookahead `(?=…)`' },
  { test: /^\(\?!/, name: 'negative lookahead `(?!…)`' },
  { test: /^\(\?<=/, name: 'lookbehind `(?<=…)`' },
  { test: /^\(\?<!/, name: 'negative lookbehind `(?<!…)`' },
  { test: /^\(\?>/, name: 'atomic group `(?>…)`' },
  { test: /^\\[1-9]/, name: 'backreference `\\1`' },
  { test: /^\\k</, name: 'named backreference `\\k<…>`' },
  { test: /^(?:[*+?]|\})\+/, name: 'possessive quantifier (`*+`, `++`, `?+`, `{n}+`)' },
];

/** The first construct of a pattern that RE2 cannot express (outside character classes), if any. */
export const unsupportedConstruct = (source: string): string | undefined => {
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      if (!inClass) {
        const rest = source.slice(i, i + 3);
        for (const k of CONSTRUCTS) if (k.test.test(rest)) return k.name;
      }
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      // A `]` first in the class is a literal.
      if (source[i + 1] === '^') i++;
      if (source[i + 1] === ']') i++;
      continue;
    }
    const rest = source.slice(i, i + 4);
    for (const k of CONSTRUCTS) if (k.test.test(rest)) return k.name;
  }
  return undefined;
};

/** RE2's parse errors end with the offending text in backticks; it is shown as RE2 reports it. */
const syntaxReason = (e: unknown): string => {
  const text = e instanceof Error ? e.message : String(e);
  const m = /error parsing regexp: (.*)$/s.exec(text);
  return (m?.[1] ?? text).slice(0, 200);
};

/**
 * Compiles a guardrail pattern; `reason` says why it cannot be used (names the construct, or RE2's
 * parse error, or the size limit that was exceeded).
 */
export const compilePattern = (source: string): PatternResult => {
  if (source.length === 0) return { ok: false, reason: 'empty pattern' };
  if (source.length > MAX_PATTERN_CHARS) return { ok: false, reason: `longer than ${MAX_PATTERN_CHARS} characters` };
  const construct = unsupportedConstruct(source);
  if (construct)
    return { ok: false, reason: `${construct} is not supported: guardrail patterns use RE2 syntax, which matches in linear time` };
  let re: RE2JS;
  try {
    // Folded like the text it matches (./normalize.ts): a rule written `café` matches `cafe\u0301`.
    re = RE2JS.compile(RE2JS.translateRegExp(normalisePattern(source)));
  } catch (e) {
    return { ok: false, reason: `not a valid regular expression (RE2 syntax): ${syntaxReason(e)}` };
  }
  const programSize = re.programSize();
  if (programSize > MAX_PROGRAM_SIZE)
    return {
      ok: false,
      reason: `too complex: compiles to ${programSize} instructions (at most ${MAX_PROGRAM_SIZE}; large counted repetitions such as {1000} multiply the pattern)`,
    };
  return { ok: true, re, programSize };
};
