/**
 * The text guardrails match (contract §3.2): Unicode NFKC, default-ignorable code points removed,
 * confusable letters folded to the Latin letter they imitate, accents stripped from Latin letters,
 * digits made ASCII, words split over lines joined, with a map from every unit of the
 * normalised text back to the original text (redaction applies to the original at the right spans).
 *
 * Steps, per code point of the original:
 * 1. Default_Ignorable_Code_Point characters (zero-width space/joiners, soft hyphen, word joiner,
 *    BOM, bidi controls, variation selectors, tag characters, Hangul fillers…) are dropped.
 * 2. A base character and the combining marks after it form a cluster: it is folded (step 4),
 *    normalised to NFKC (fullwidth → ASCII, ligatures split, mathematical letters → ASCII, compatibility
 *    spaces → U+0020…) and folded again. Every unit the cluster produces maps to the whole cluster.
 * 3. After NFKC, marks are stripped from Latin letters: a letter whose canonical decomposition is an
 *    ASCII letter or digit (or a confusable of one) with marks becomes that bare letter (`é` → `e`,
 *    `pas\u0301sword` → `password`), and marks left on an ASCII base (`T̈`, "Zalgo" text) are
 *    dropped; marks on other scripts' letters (Devanagari vowel signs…) stay. Rule patterns are
 *    folded the same way (`normalisePattern`), so a rule written `café` matches `cafe\u0301`.
 * 4. CONFUSABLES folds look-alikes to ASCII: a compact subset of Unicode TR39's confusables for
 *    Latin letters — Cyrillic, Greek, Armenian, Cherokee and Lisu letters, a few non-ASCII Latin
 *    letters (ı, ȷ, ɡ, ɑ, ɩ, ǀ) and the dashes (‐ ‑ ‒ – — ― − ⁃ ˗ ﹘ → `-`). Unlike the full TR39
 *    skeleton, ASCII is never changed (`0`/`O` and `1`/`l`/`I` stay distinct, so `\d` still works).
 *    Not covered: letters of other scripts and multi-character look-alikes (`rn` for `m`).
 * 5. Decimal digits of every script (Arabic-Indic `٤`, Extended Arabic-Indic `۴`, Devanagari `४`…)
 *    become ASCII digits, so `\d` and the PII detectors see them.
 * 6. A line break (LF, CR, CR LF, VT, FF, NEL, U+2028, U+2029) between two letters is dropped: a word
 *    split over two lines (`pass\nword`) matches as one. (`\b` therefore does not hold at such a
 *    break: `my\npassword` reads `mypassword`.)
 *
 * ASCII-only text without a line break inside a word (the common case) is its own normal form: it
 * is returned as is, without a map.
 */

/** Look-alike → ASCII, one UTF-16 unit each (so folding never changes a text's length). */
const CONFUSABLE_PAIRS =
  // Cyrillic
  'аaеeоoрpсcуyхxѕsіiјjһhԁdԛqԝwӏl' +
  'АAВBЕEКKМMНHОOРPСCТTХXЅSІIЈJҮYԚQԜWӀIҺH' +
  // Greek
  'ΑAΒBΕEΖZΗHΙIΚKΜMΝNΟOΡPΤTΥYΧXαaγyιiνvοoρpϲcϳjϹCͿJ' +
  // Armenian
  'ՕOՏSՍUԼLօoսuհhոnզqցg' +
  // Latin letters outside ASCII
  'ıiȷjɡgɑaɩiǀl' +
  // Cherokee
  'ᎠDᎡRᎢTᎪAᎫJᎬEᎳWᎷMᎻHᏀGᏃZᏙVᏚSᏞLᏟCᏢPᏦKᏴB' +
  // Lisu
  'ꓐBꓑPꓓDꓔTꓖGꓗKꓙJꓚCꓜZꓝFꓟMꓠNꓡLꓢSꓣRꓦVꓧHꓪWꓫXꓬYꓮAꓰEꓲIꓳOꓴU' +
  // Dashes
  '‐-‑-‒-–-—-―-−-⁃-˗-﹘-';

export const CONFUSABLES: ReadonlyMap<string, string> = (() => {
  const m = new Map<string, string>();
  for (let i = 0; i < CONFUSABLE_PAIRS.length; i += 2) m.set(CONFUSABLE_PAIRS[i] as string, CONFUSABLE_PAIRS[i + 1] as string);
  return m;
})();

export interface Normalised {
  text: string;
  /** For each unit of `text`, where its source starts and ends in the original; null when `text` is the original. */
  starts: Int32Array | null;
  ends: Int32Array | null;
}

const NON_ASCII = /[^\x00-\x7f]/;
const IGNORABLE = /^\p{Default_Ignorable_Code_Point}$/u;
const ANY_IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
const MARK = /^\p{M}$/u;
const ANY_MARK = /\p{M}/u;
const DIGIT = /^\p{Nd}$/u;
const LETTER = /^\p{L}$/u;
const ENDS_IN_LETTER = /\p{L}$/u;
const ALNUM = /^[A-Za-z0-9]$/;
/** A line break (CR LF counts as one) between two letters: a break inside a word. */
const WORD_BREAK = /\p{L}(?:\r\n|[\n\v\f\r\x85\u2028\u2029])\p{L}/u;
const LINE_BREAK = /^[\n\v\f\r\x85\u2028\u2029]$/;
/**
 * The characters of NFKC text without marks that normalise to another single unit: confusables,
 * letters whose canonical decomposition is a Latin letter (or a confusable) with marks, and the
 * decimal digits of other scripts.
 */
const ONE_FOR_ONE = new RegExp(`[\\u00c0-\\u024f\\u0370-\\u04ff\\u1e00-\\u1fff${[...CONFUSABLES.keys()].join('')}]|(?![0-9])\\p{Nd}`, 'gu');

const fold = (s: string): string => {
  let out = '';
  for (const ch of s) out += CONFUSABLES.get(ch) ?? ch;
  return out;
};

/** A decimal digit's ASCII digit: Unicode encodes every script's digits as runs of ten from zero. */
const asciiDigit = (cp: number): string => {
  let k = 0;
  while (k < 60 && DIGIT.test(String.fromCodePoint(cp - k - 1))) k++;
  return String(k % 10);
};

/** What a character is to the normaliser: 0 a base, 1 ignorable, 2 a continuation of the cluster before it. */
const kinds = new Map<number, 0 | 1 | 2>();
const kindOf = (cp: number, ch: string): 0 | 1 | 2 => {
  let k = kinds.get(cp);
  if (k === undefined) {
    k = IGNORABLE.test(ch) ? 1 : MARK.test(ch) || (cp >= 0x1160 && cp <= 0x11ff) ? 2 : 0;
    if (kinds.size < 65536) kinds.set(cp, k);
  }
  return k;
};

/**
 * A cluster's normal form: folded, NFKC, folded again; then a letter whose decomposition is an
 * ASCII letter or digit with marks becomes that letter, marks left on an ASCII base are dropped,
 * and decimal digits of other scripts become ASCII digits.
 */
const clusterForm = (cluster: string): string => {
  const norm = fold(fold(cluster).normalize('NFKC'));
  if (!NON_ASCII.test(norm)) return norm;
  let out = '';
  let onAscii = false;
  for (const c of norm) {
    const cp = c.codePointAt(0) as number;
    if (cp < 0x80) {
      out += c;
      onAscii = true;
    } else if (MARK.test(c)) {
      if (!onAscii) out += c;
    } else if (DIGIT.test(c)) {
      out += asciiDigit(cp);
      onAscii = true;
    } else {
      const d = c.normalize('NFD');
      const base = String.fromCodePoint(d.codePointAt(0) as number);
      const folded = CONFUSABLES.get(base) ?? base;
      onAscii = d.length > base.length && ALNUM.test(folded);
      out += onAscii ? folded : c;
    }
  }
  return out;
};

/** Normal forms of single characters (the common cluster), memoised. */
const singles = new Map<string, string>();
const singleForm = (ch: string): string => {
  let f = singles.get(ch);
  if (f === undefined) {
    f = clusterForm(ch);
    if (singles.size < 65536) singles.set(ch, f);
  }
  return f;
};

/** NFKC text without marks, ignorables or breaks inside words, folded unit for unit; undefined when a character needs the full path. */
const oneForOne = (text: string): string | undefined => {
  let whole = true;
  const out = text.replace(ONE_FOR_ONE, (c) => {
    const f = singleForm(c);
    if (f.length !== c.length) whole = false;
    return f;
  });
  return whole ? out : undefined;
};

/** Whether the character at `i` starts a letter (its normal form's first character is one). */
const letterAt = (text: string, i: number): boolean => {
  const cp = text.codePointAt(i);
  if (cp === undefined) return false;
  const first = singleForm(String.fromCodePoint(cp)).codePointAt(0);
  return first !== undefined && LETTER.test(String.fromCodePoint(first));
};

/** The normal form of `text` (see the module comment) with its map back to `text`. */
export const normalise = (text: string): Normalised => {
  const wordBreak = WORD_BREAK.test(text);
  if (!wordBreak && !NON_ASCII.test(text)) return { text, starts: null, ends: null };
  // Already NFKC, nothing to drop or join: one unit for one unit (the common non-ASCII case).
  if (!wordBreak && !ANY_IGNORABLE.test(text) && !ANY_MARK.test(text) && text.normalize('NFKC') === text) {
    const one = oneForOne(text);
    if (one !== undefined) return { text: one, starts: null, ends: null };
  }
  const parts: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let i = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i) as number;
    const ch = cp < 0x10000 ? (text[i] as string) : String.fromCodePoint(cp);
    i += ch.length;
    if (kindOf(cp, ch) === 1) continue;
    // A line break between two letters (a word split over two lines) is dropped.
    if (LINE_BREAK.test(ch)) {
      const next = ch === '\r' && text[i] === '\n' ? i + 1 : i;
      const last = parts.at(-1);
      if (last !== undefined && ENDS_IN_LETTER.test(last) && letterAt(text, next)) {
        i = next;
        continue;
      }
    }
    // The cluster: this character and the combining marks (and ignorables) after it.
    const from = i - ch.length;
    let cluster = ch;
    while (i < text.length) {
      const ncp = text.codePointAt(i) as number;
      const nch = ncp < 0x10000 ? (text[i] as string) : String.fromCodePoint(ncp);
      const k = kindOf(ncp, nch);
      if (k === 0) break;
      if (k === 2) cluster += nch;
      i += nch.length;
    }
    const norm = cluster === ch ? singleForm(ch) : clusterForm(cluster);
    if (norm === '') continue;
    parts.push(norm);
    for (let u = 0; u < norm.length; u++) {
      starts.push(from);
      ends.push(i);
    }
  }
  return { text: parts.join(''), starts: Int32Array.from(starts), ends: Int32Array.from(ends) };
};

/** The original span of the normalised span [start, end) (end > start). */
export const originalSpan = (n: Normalised, start: number, end: number): { start: number; end: number } =>
  n.starts && n.ends ? { start: n.starts[start] as number, end: n.ends[end - 1] as number } : { start, end };

/**
 * A guardrail pattern as it matches normalised text: a Latin letter or digit written with marks
 * (`é`, `s\u0301`) becomes the bare letter, as it does in the text, so a rule written with accents
 * still matches.
 */
export const normalisePattern = (pattern: string): string =>
  NON_ASCII.test(pattern)
    ? pattern
        .normalize('NFD')
        .replace(/([A-Za-z0-9])\p{M}+/gu, '$1')
        .normalize('NFC')
    : pattern;
