import { MAX_DECODED, pdfText } from '../src/governance/pdf-text.ts';
import { makePdf } from '../test/support/pdf.ts';

/**
 * The time input guardrails take to read a request's PDF text at the budget (MAX_DECODED of
 * decompressed stream data), for content streams shaped to be slow to read: `bun bench/pdf-text.ts`.
 * Each shape is read twice (the second after the JIT has warmed up).
 */
const fill = (unit: string) => `BT ${unit.repeat(Math.floor((MAX_DECODED - 100) / unit.length))} ET`;
const SHAPES = [
  ['numbers', '1 '],
  ['operators', 'q '],
  ['tiny strings', '(a)Tj '],
  ['escapes', '(\\101\\102)Tj '],
  ['hex strings', '<41>Tj '],
  ['TJ arrays', '[(a)-300(b)]TJ '],
  ['nested arrays', '['],
  ['prose', '(the quick brown fox jumps over the lazy dog) Tj 0 -14 Td '],
] as const;
for (const round of [1, 2]) {
  for (const [name, unit] of SHAPES) {
    const pdf = makePdf(fill(unit), { flate: true });
    const t0 = performance.now();
    const r = pdfText(pdf);
    console.log(
      `round ${round} ${name}: ${(performance.now() - t0).toFixed(0)} ms for a ${(pdf.length / 1024).toFixed(0)} KiB upload (${r.text.length} characters read)`,
    );
  }
}
const bomb = makePdf(`BT (x) Tj ET${' '.repeat(200 << 20)}`, { flate: true });
const t0 = performance.now();
const r = pdfText(bomb);
console.log(
  `bomb (200 MiB in a ${(bomb.length / 1024).toFixed(0)} KiB upload): ${(performance.now() - t0).toFixed(0)} ms, ${r.unreadable}`,
);
