import { constants, inflateSync } from 'node:zlib';

/**
 * The text of a PDF as guardrails read it: the strings its content streams show (`Tj`, `TJ`, `'`,
 * `"` inside `BT`…`ET`), from streams stored uncompressed or compressed with FlateDecode (also
 * ASCIIHex and ASCII85). Lines (`Td`/`TD` moving down, `T*`, `Tm`, `'`, `"`, `ET`) are separated
 * by a line break, large `TJ` gaps by a space; strings are read as single-byte (Latin-1) text, or
 * UTF-16 after a byte-order mark.
 *
 * What cannot be read is reported, not guessed (`unreadable`): an encrypted PDF, a stream compressed
 * otherwise (LZW, RunLength, a predictor), composite (Type0) fonts, whose strings are glyph ids
 * rather than text, no text at all (a scanned PDF: images only), and a PDF decompressing to more
 * than MAX_DECODED bytes (1 MiB for all the PDFs of a request, which bounds the time reading them
 * takes). Images, fonts, metadata and cross-reference streams are not text: skipped.
 */

export interface PdfText {
  text: string;
  /** The bytes of stream data read (decompressed). */
  decoded: number;
  /** Why (some of) the text could not be read; undefined when all of it was. */
  unreadable?: string;
}

/** The most a PDF may decompress to (all its streams together). */
export const MAX_DECODED = 1 << 20;
const MAX_STREAMS = 20_000;
const NOT_TEXT = /\/(?:Type\s*\/(?:XRef|Metadata|EmbeddedFile)|Subtype\s*\/(?:Image|Type1C|CIDFontType0C|OpenType|XML)|Length[123]\b)/;
const IMAGE_FILTERS = new Set(['DCTDecode', 'DCT', 'JPXDecode', 'JBIG2Decode', 'CCITTFaxDecode', 'CCF']);
const TYPE0 = /\/Subtype\s*\/Type0\b/;

const filtersOf = (dict: string): string[] => {
  const m = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dict);
  return m ? [...(m[1] as string).matchAll(/\/([A-Za-z0-9]+)/g)].map((f) => f[1] as string) : [];
};

const asciiHex = (s: string): string => {
  const hex = s.replace(/>[\s\S]*$/, '').replace(/[^0-9A-Fa-f]/g, '');
  return Buffer.from(hex.length % 2 ? `${hex}0` : hex, 'hex').toString('latin1');
};

const hexValue = (c: number): number =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x41 && c <= 0x46 ? c - 0x37 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;

/** A hex string `<…>` of a content stream (s[from, to)): its bytes; non-hex characters skipped, an odd last digit padded with 0. */
const hexString = (s: string, from: number, to: number): string => {
  let out = '';
  let hi = -1;
  for (let k = from; k < to; k++) {
    const v = hexValue(s.charCodeAt(k));
    if (v < 0) continue;
    if (hi < 0) hi = v;
    else {
      out += String.fromCharCode(hi * 16 + v);
      hi = -1;
    }
  }
  return hi < 0 ? out : out + String.fromCharCode(hi * 16);
};

const ascii85 = (s: string): string => {
  const body = s.replace(/~>[\s\S]*$/, '').replace(/\s/g, '');
  const out: number[] = [];
  let group: number[] = [];
  const flush = (n: number): void => {
    let v = 0;
    for (let k = 0; k < 5; k++) v = v * 85 + (group[k] ?? 84);
    for (let k = 0; k < n - 1; k++) out.push((v >>> (24 - 8 * k)) & 0xff);
    group = [];
  };
  for (const ch of body) {
    if (ch === 'z' && group.length === 0) out.push(0, 0, 0, 0);
    else if (ch >= '!' && ch <= 'u') {
      group.push(ch.charCodeAt(0) - 33);
      if (group.length === 5) flush(5);
    }
  }
  if (group.length > 1) flush(group.length);
  return Buffer.from(out).toString('latin1');
};

/** A stream's bytes decoded through its filters, or the reason they cannot be. */
const decode = (raw: string, filters: readonly string[], budget: number): { data: string } | { error: string } => {
  let data = raw;
  for (const f of filters) {
    if (f === 'FlateDecode' || f === 'Fl') {
      try {
        data = inflateSync(Buffer.from(data, 'latin1'), {
          finishFlush: constants.Z_SYNC_FLUSH,
          maxOutputLength: Math.max(budget, 1),
        }).toString('latin1');
      } catch (e) {
        return { error: e instanceof RangeError ? 'it decompresses to more than the gateway reads' : 'a compressed stream is corrupt' };
      }
    } else if (f === 'ASCIIHexDecode' || f === 'AHx') data = asciiHex(data);
    else if (f === 'ASCII85Decode' || f === 'A85') data = ascii85(data);
    else return { error: `a stream is compressed with ${f}` };
  }
  return { data };
};

/** The dictionary `<<…>>` ending just before `end` (nesting followed backwards), or undefined. */
const dictBefore = (src: string, end: number): string | undefined => {
  let j = end;
  while (j > 0 && /\s/.test(src[j - 1] as string)) j--;
  if (src.slice(j - 2, j) !== '>>') return undefined;
  let depth = 0;
  const floor = Math.max(0, j - 65536);
  for (let k = j - 2; k >= floor; k--) {
    if (src.startsWith('>>', k)) {
      depth++;
      k--;
    } else if (src.startsWith('<<', k)) {
      depth--;
      if (depth === 0) return src.slice(k, j);
    }
  }
  return undefined;
};

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', '(': '(', ')': ')', '\\': '\\' };

/** A literal string `(…)` starting at `i`: its bytes and the index after it. */
const literal = (s: string, i: number): [string, number] => {
  let out = '';
  let depth = 1;
  let k = i + 1;
  let from = k;
  while (k < s.length) {
    const c = s.charCodeAt(k);
    if (c === 0x5c /* \ */) {
      out += s.slice(from, k);
      const n = s[k + 1] ?? '';
      const esc = ESCAPES[n];
      if (esc !== undefined) {
        out += esc;
        k += 2;
      } else if (n >= '0' && n <= '7') {
        let v = 0;
        let j = k + 1;
        for (; j < k + 4 && j < s.length; j++) {
          const d = s.charCodeAt(j) - 0x30;
          if (d < 0 || d > 7) break;
          v = v * 8 + d;
        }
        out += String.fromCharCode(v & 0xff);
        k = j;
      } else k += n === '\r' && s[k + 2] === '\n' ? 3 : 2;
      from = k;
      continue;
    }
    if (c === 0x28) depth++;
    else if (c === 0x29 && --depth === 0) return [out + s.slice(from, k), k + 1];
    k++;
  }
  return [out + s.slice(from, k), k];
};

/** A string's bytes as text: UTF-16BE after a byte-order mark, else one character per byte. */
const bytesText = (b: string): string => (b.startsWith('\xfe\xff') ? Buffer.from(b.slice(2), 'latin1').swap16().toString('utf16le') : b);

type Operand = string | number | Operand[];

const MAX_NESTING = 16;
const isNumeric = (c: number): boolean => (c >= 0x30 && c <= 0x39) || c === 0x2e;
const isOperator = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x27 || c === 0x22 || c === 0x2a;
const INLINE_IMAGE_END = /\sEI(?:\s|$)/g;

/** The text a content stream shows. */
export const contentText = (s: string): string => {
  const out: string[] = [];
  let ops: Operand[] = [];
  const stack: Operand[][] = [];
  const str = (o: Operand | undefined): string => (typeof o === 'string' ? bytesText(o) : '');
  // Outside an array only the last operands matter (every text operator reads at most three).
  const push = (o: Operand): void => {
    if (stack.length === 0 && ops.length >= 8) ops = ops.slice(-3);
    ops.push(o);
  };
  let k = 0;
  while (k < s.length) {
    const c = s.charCodeAt(k);
    if (c === 0x28 /* ( */) {
      const [text, next] = literal(s, k);
      push(text);
      k = next;
    } else if (c === 0x3c /* < */ && s.charCodeAt(k + 1) !== 0x3c) {
      const end = s.indexOf('>', k);
      const stop = end < 0 ? s.length : end;
      push(hexString(s, k + 1, stop));
      k = stop + 1;
    } else if (c === 0x5b /* [ */) {
      // Arrays nest at most MAX_NESTING deep (deeper brackets are ignored: no text operator reads them).
      if (stack.length < MAX_NESTING) {
        stack.push(ops);
        ops = [];
      }
      k++;
    } else if (c === 0x5d /* ] */) {
      const arr = ops;
      ops = stack.pop() ?? [];
      push(arr);
      k++;
    } else if (c === 0x25 /* % */) {
      while (k < s.length && s[k] !== '\n' && s[k] !== '\r') k++;
    } else if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e) {
      let j = k + 1;
      while (j < s.length && isNumeric(s.charCodeAt(j))) j++;
      const n = j - k === 1 ? c - 0x30 : Number(s.slice(k, j));
      push(Number.isNaN(n) ? 0 : n);
      k = j;
    } else if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x27 || c === 0x22 || c === 0x2a) {
      const start = k;
      k++;
      while (k < s.length && isOperator(s.charCodeAt(k))) k++;
      if (stack.length > 0) continue;
      // Only operators starting with T, E (ET), ', " or I (ID) matter to the text.
      if (c !== 0x54 && c !== 0x45 && c !== 0x27 && c !== 0x22 && c !== 0x49) {
        if (ops.length > 0) ops = [];
        continue;
      }
      const op = s.slice(start, k);
      if (op === 'Tj') out.push(str(ops.at(-1)));
      else if (op === "'" || op === '"') out.push('\n', str(ops.at(-1)));
      else if (op === 'TJ') {
        const arr = ops.at(-1);
        if (Array.isArray(arr)) for (const e of arr) out.push(typeof e === 'number' ? (e < -200 ? ' ' : '') : str(e));
      } else if (op === 'Td' || op === 'TD') {
        if (ops.at(-1) !== 0) out.push('\n');
      } else if (op === 'T*' || op === 'Tm' || op === 'ET') out.push('\n');
      else if (op === 'ID') {
        // An inline image: its bytes run to `EI`.
        INLINE_IMAGE_END.lastIndex = k;
        const end = INLINE_IMAGE_END.exec(s);
        k = end ? INLINE_IMAGE_END.lastIndex : s.length;
      }
      if (ops.length > 0) ops = [];
    } else k++;
  }
  return out.join('');
};

/** The text of a PDF, reading at most `budget` bytes of (decompressed) stream data. */
export const pdfText = (bytes: Uint8Array, budget = MAX_DECODED): PdfText => {
  const src = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const head = src.indexOf('%PDF-');
  if (head < 0 || head > 1024) return { text: '', decoded: 0, unreadable: 'it is not a PDF' };
  if (/\/Encrypt\b/.test(src)) return { text: '', decoded: 0, unreadable: 'it is encrypted' };
  const texts: string[] = [];
  let unreadable: string | undefined = TYPE0.test(src) ? 'it uses composite (Type0) fonts' : undefined;
  let decoded = 0;
  let streams = 0;
  const re = /stream(?:\r\n|\n|\r)/g;
  for (let m = re.exec(src); m !== null; m = re.exec(src)) {
    if (src.startsWith('end', m.index - 3)) continue;
    if (++streams > MAX_STREAMS) return { text: texts.join('\n'), decoded, unreadable: 'it has too many streams' };
    const start = m.index + m[0].length;
    const dict = dictBefore(src, m.index) ?? '';
    const len = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dict);
    let end = len ? start + Number(len[1]) : -1;
    if (end < 0 || end > src.length || !/^\s*endstream/.test(src.slice(end, end + 32))) {
      end = src.indexOf('endstream', start);
      if (end < 0) end = src.length;
      else if (src[end - 1] === '\n') end -= src[end - 2] === '\r' ? 2 : 1;
      else if (src[end - 1] === '\r') end--;
    }
    re.lastIndex = end;
    const filters = filtersOf(dict);
    if (NOT_TEXT.test(dict) || filters.some((f) => IMAGE_FILTERS.has(f))) continue;
    if (/\/Predictor\s+(?:[2-9]|1\d)/.test(dict)) {
      unreadable ??= 'a stream uses a predictor';
      continue;
    }
    const out = decode(src.slice(start, end), filters, budget - decoded);
    if ('error' in out || decoded + out.data.length > budget) {
      unreadable ??= 'error' in out ? out.error : 'it decompresses to more than the gateway reads';
      if (unreadable.startsWith('it decompresses')) break;
      continue;
    }
    decoded += out.data.length;
    if (/\/Type\s*\/ObjStm\b/.test(dict)) {
      if (TYPE0.test(out.data)) unreadable ??= 'it uses composite (Type0) fonts';
      continue;
    }
    if (/\bBT\b/.test(out.data)) texts.push(contentText(out.data));
  }
  const text = texts.join('\n').trim();
  if (text === '') unreadable ??= 'it has no text the gateway can read (images only?)';
  return unreadable === undefined ? { text, decoded } : { text, decoded, unreadable };
};
