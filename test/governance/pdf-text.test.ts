import { describe, expect, test } from 'bun:test';
import { deflateSync } from 'node:zlib';
import { contentText, MAX_DECODED, pdfText } from '../../src/governance/pdf-text.ts';
import { makePdf } from '../support/pdf.ts';

/** The PDF text input guardrails read (issue 38, item 2), and what is reported unreadable. */

describe('pdfText reads the text of content streams', () => {
  test('uncompressed and Flate-compressed: Tj, TJ (large gaps as spaces), quote operators, lines', () => {
    const content = "BT /F1 12 Tf 72 700 Td (Hello) Tj ( world) Tj 0 -14 Td [(TOP) -20 (SECRET) -400 (42)] TJ (next) ' ET";
    for (const flate of [false, true])
      expect(pdfText(makePdf(content, { flate }))).toEqual({ text: 'Hello world\nTOPSECRET 42\nnext', decoded: expect.any(Number) });
  });

  test('string escapes, octal codes, nested parentheses, hex strings and UTF-16 with a byte-order mark', () => {
    expect(contentText('BT (a\\(b\\) \\101\\102 (n)) Tj <544F50> Tj <FEFF00E9> Tj ET')).toBe('a(b) AB (n)TOPé\n');
  });

  test('the ASCIIHex filter; an inline image is skipped', () => {
    const body = Buffer.from('BT (hex text) Tj ET').toString('hex');
    const pdf = Buffer.from(
      `%PDF-1.4\n1 0 obj\n<< /Length ${body.length + 1} /Filter /ASCIIHexDecode >>\nstream\n${body}>\nendstream\nendobj\n%%EOF\n`,
    );
    expect(pdfText(pdf).text).toBe('hex text');
    expect(contentText('BI /W 1 /H 1 ID \x00(not text) Tj\x01 EI BT (after) Tj ET')).toBe('after\n');
  });
});

describe('pdfText reports what it cannot read', () => {
  test.each([
    ['encrypted', Buffer.from('%PDF-1.4\ntrailer << /Encrypt 5 0 R >>\n%%EOF'), 'it is encrypted'],
    ['not a PDF', Buffer.from('hello'), 'it is not a PDF'],
    ['composite (Type0) fonts', makePdf('BT /F1 12 Tf <00410042> Tj ET', { type0: true }), 'it uses composite (Type0) fonts'],
    ['images only', makePdf('q 100 0 0 100 0 0 cm /Im1 Do Q', { flate: true }), 'it has no text the gateway can read (images only?)'],
    [
      'LZW',
      Buffer.from('%PDF-1.4\n1 0 obj\n<< /Length 3 /Filter /LZWDecode >>\nstream\nabc\nendstream\nendobj\n'),
      'a stream is compressed with LZWDecode',
    ],
  ])('%s', (_, pdf, reason) => {
    expect(pdfText(pdf).unreadable).toBe(reason);
  });

  test('a decompression bomb stops at the budget, quickly; the budget is shared', () => {
    const bomb = makePdf(`BT (x) Tj ET${' '.repeat(100 << 20)}`, { flate: true });
    expect(bomb.length).toBeLessThan(200_000);
    const t0 = performance.now();
    const r = pdfText(bomb);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(r.unreadable).toBe('it decompresses to more than the gateway reads');
    expect(r.decoded).toBeLessThanOrEqual(MAX_DECODED);
    const small = makePdf('BT (fits) Tj ET', { flate: true });
    expect(pdfText(small).text).toBe('fits');
    expect(pdfText(small, 4).unreadable).toBe('it decompresses to more than the gateway reads');
    expect(deflateSync(Buffer.alloc(1)).length).toBeGreaterThan(0);
  });
});
