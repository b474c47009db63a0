/**
 * The text guardrails match (contract §3.2): Unicode NFKC, default-ignorable code points removed,
 * confusable letters folded to the Latin letter they imitate, with a map from every unit of the
 * normalised text back to the original text (redaction applies to the original at the right spans).
 *
 * Steps, per code point of the original:
 * 1. Default_Ignorable_Code_Point characters (zero-width space/joiners, soft hyphen, word joiner,
 *    BOM, bidi controls, variation selectors, tag characters, Hangul fillers…) are dropped.
 * 2. A base character and the combining marks after it form a cluster: it is folded (step 4),
 *    normalised to NFKC (fullwidth → ASCII, ligatures split, mathematical letters → ASCII, compatibility
 *    spaces → U+0020…) and folded again. Every unit the cluster produces maps to the whole cluster.
 * 3. Combining marks left on an ASCII base after NFKC (`T̈`, "Zalgo" text: marks NFKC could not
 *    compose into a letter of its own) are dropped; `é`, `Ó` and marks on other scripts' letters
 *    (Devanagari vowel signs…) stay.
 * 4. CONFUSABLES folds look-alikes to ASCII: a compact subset of Unicode TR39's confusables for
 *    Latin letters — Cyrillic, Greek, Armenian, Cherokee and Lisu letters, a few non-ASCII Latin
 *    letters (ı, ȷ, ɡ, ɑ, ɩ, ǀ) and the dashes (‐ ‑ ‒ – — ― − ⁃ ˗ ﹘ → `-`). Unlike the full TR39
 *    skeleton, ASCII is never changed (`0`/`O` and `1`/`l`/`I` stay distinct, so `\d` still works).
 *    Not covered: letters of other scripts, multi-character look-alikes (`rn` for `m`) and digits
 *    of other scripts (`٤`), which stay as they are.
 *
 * ASCII-only text (the common case) is its own normal form: it is returned as is, without a map.
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
const ASCII_MARK = /[\x00-\x7f]\p{M}/u;
const ANY_CONFUSABLE = new RegExp(`[${[...CONFUSABLES.keys()].join('')}]`, 'g');

const fold = (s: string): string => {
  let out = '';
  for (const ch of s) out += CONFUSABLES.get(ch) ?? ch;
  return out;
};

const isContinuation = (ch: string, cp: number): boolean => MARK.test(ch) || (cp >= 0x1160 && cp <= 0x11ff);

/** The normal form of `text` (see the module comment) with its map back to `text`. */
export const normalise = (text: string): Normalised => {
  if (!NON_ASCII.test(text)) return { text, starts: null, ends: null };
  // Already NFKC, nothing to drop: folding alone, one unit for one unit (the common non-ASCII case).
  if (!ANY_IGNORABLE.test(text) && !ASCII_MARK.test(text) && text.normalize('NFKC') === text)
    return { text: text.replace(ANY_CONFUSABLE, (c) => CONFUSABLES.get(c) ?? c), starts: null, ends: null };
  let out = '';
  const starts: number[] = [];
  const ends: number[] = [];
  let i = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i) as number;
    const ch = String.fromCodePoint(cp);
    if (IGNORABLE.test(ch)) {
      i += ch.length;
      continue;
    }
    // The cluster: this character and the combining marks (and ignorables) after it.
    const from = i;
    let cluster = ch;
    i += ch.length;
    while (i < text.length) {
      const ncp = text.codePointAt(i) as number;
      const nch = String.fromCodePoint(ncp);
      if (IGNORABLE.test(nch)) i += nch.length;
      else if (isContinuation(nch, ncp)) {
        cluster += nch;
        i += nch.length;
      } else break;
    }
    let norm = fold(fold(cluster).normalize('NFKC'));
    if (norm.length > 1 && norm.charCodeAt(0) < 0x80) {
      // Marks left on an ASCII base are dropped (the base stays).
      let kept = '';
      for (const c of norm) if (!MARK.test(c)) kept += c;
      norm = kept;
    }
    out += norm;
    for (let k = 0; k < norm.length; k++) {
      starts.push(from);
      ends.push(i);
    }
  }
  return { text: out, starts: Int32Array.from(starts), ends: Int32Array.from(ends) };
};

/** The original span of the normalised span [start, end) (end > start). */
export const originalSpan = (n: Normalised, start: number, end: number): { start: number; end: number } =>
  n.starts && n.ends ? { start: n.starts[start] as number, end: n.ends[end - 1] as number } : { start, end };
