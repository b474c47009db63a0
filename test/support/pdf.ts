import { deflateSync } from 'node:zlib';

/**
 * Minimal but well-formed PDFs for tests: one page whose content stream shows `content` (PDF
 * content operators, e.g. `BT /F1 12 Tf 72 700 Td (hello) Tj ET`), stored uncompressed or
 * FlateDecode-compressed, with a standard Type1 (Helvetica) font, or a composite (Type0) one.
 */
export interface PdfOptions {
  flate?: boolean;
  type0?: boolean;
}

export const makePdf = (content: string, o: PdfOptions = {}): Buffer => {
  const body = o.flate ? deflateSync(Buffer.from(content, 'latin1')) : Buffer.from(content, 'latin1');
  const font = o.type0
    ? '<< /Type /Font /Subtype /Type0 /BaseFont /Noto /Encoding /Identity-H /DescendantFonts [] >>'
    : '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>'),
    Buffer.concat([
      Buffer.from(`<< /Length ${body.length}${o.flate ? ' /Filter /FlateDecode' : ''} >>\nstream\n`),
      body,
      Buffer.from('\nendstream'),
    ]),
    Buffer.from(font),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let at = parts[0]?.length ?? 0;
  objects.forEach((obj, i) => {
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), obj, Buffer.from('\nendobj\n')]);
    offsets.push(at);
    parts.push(chunk);
    at += chunk.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`));
  return Buffer.concat(parts);
};
