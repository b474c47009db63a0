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

/** A cluster's normal form: folded, NFKC, folded again; marks left on an ASCII base dropped. */
const clusterForm = (cluster: string): string => {
  const norm = fold(fold(cluster).normalize('NFKC'));
  if (norm.length <= 1 || norm.charCodeAt(0) >= 0x80) return norm;
  let kept = '';
  for (const c of norm) if (!MARK.test(c)) kept += c;
  return kept;
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

/** The normal form of `text` (see the module comment) with its map back to `text`. */
export const normalise = (text: string): Normalised => {
  if (!NON_ASCII.test(text)) return { text, starts: null, ends: null };
  // Already NFKC, nothing to drop: folding alone, one unit for one unit (the common non-ASCII case).
  if (!ANY_IGNORABLE.test(text) && !ASCII_MARK.test(text) && text.normalize('NFKC') === text)
    return { text: text.replace(ANY_CONFUSABLE, (c) => CONFUSABLES.get(c) ?? c), starts: null, ends: null };
  const parts: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let i = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i) as number;
    const ch = cp < 0x10000 ? (text[i] as string) : String.fromCodePoint(cp);
    i += ch.length;
    if (kindOf(cp, ch) === 1) continue;
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
