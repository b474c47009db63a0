/**
 * PII detectors of the `pii` guardrail kind: a pattern finds candidates, a checksum confirms
 * them where the format has one (credit cards: Luhn; IBANs: ISO 13616 mod 97). They run on
 * normalised text (./normalize.ts: Unicode spaces are U+0020, Unicode dashes `-`, every script's
 * digits ASCII), and numbers may carry the usual separators between their digits: a space, a dot or
 * a dash, alone or as ` - `/` . ` (card numbers also `/` and `_`).
 */

export const PII_TYPES = ['email', 'phone', 'credit_card', 'iban', 'ssn', 'ip_address'] as const;
export type PiiType = (typeof PII_TYPES)[number];

export const luhn = (digits: string): boolean => {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
};

export const ibanValid = (raw: string): boolean => {
  const s = raw.replace(/[ .-]/g, '').toUpperCase();
  if (s.length < 15 || s.length > 34) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (const ch of moved) {
    const c = ch.charCodeAt(0);
    const v = c >= 65 && c <= 90 ? String(c - 55) : ch;
    for (const d of v) rem = (rem * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return rem === 1;
};

interface Detector {
  re: RegExp;
  valid?: (match: string) => boolean;
}

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
/** A separator inside a number: ` `, `.`, `-`, or a dot or dash with a space on either side. */
const SEP = '(?: ?[.-] ?| )';
/** Inside a card number also `/` and `_` (`4111/1111/1111/1111`), with or without spaces. */
const CARD_SEP = '(?: ?[./_-] ?| )';

export const DETECTORS: Record<PiiType, Detector> = {
  email: { re: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g },
  // International (+CC …) or North-American style (555-123-4567, (555) 123-4567).
  phone: {
    re: new RegExp(
      `(?<![\\w+])(?:\\+\\d{1,3}${SEP}?(?:\\(?\\d{1,4}\\)?${SEP}?){2,4}\\d{2,4}|\\(?\\d{3}\\)?${SEP}\\d{3}${SEP}\\d{4})(?![\\w])`,
      'g',
    ),
  },
  credit_card: { re: new RegExp(`(?<!\\d)\\d(?:${CARD_SEP}?\\d){12,18}(?!\\d)`, 'g'), valid: (m) => luhn(m.replace(/\D/g, '')) },
  iban: { re: new RegExp(`\\b[A-Z]{2}\\d{2}(?:${SEP}?[A-Z0-9]){11,30}\\b`, 'g'), valid: ibanValid },
  ssn: { re: new RegExp(`(?<!\\d)(?!000|666|9\\d\\d)\\d{3}${SEP}(?!00)\\d{2}${SEP}(?!0000)\\d{4}(?!\\d)`, 'g') },
  ip_address: { re: new RegExp(`(?<![\\d.])(?:${OCTET}\\.){3}${OCTET}(?![\\d.])`, 'g') },
};
