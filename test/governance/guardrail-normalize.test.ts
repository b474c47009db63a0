import { describe, expect, test } from 'bun:test';
import { findMatches, type GuardrailRule, prepare, redactParts, scan } from '../../src/governance/guardrail-scan.ts';
import { CONFUSABLES, normalise, normalisePattern, originalSpan } from '../../src/governance/normalize.ts';
import { compilePattern } from '../../src/governance/pattern.ts';
import { DETECTORS, type PiiType } from '../../src/governance/pii.ts';

/** The normaliser guardrails match through (contract §3.2) and the engine's offset mapping. */

const regex = (pattern: string): GuardrailRule => {
  const c = compilePattern(pattern);
  if (!c.ok) throw new Error(c.reason);
  return { name: 'r', stage: 'both', kind: 'regex', regex: c.re, pattern, programSize: c.programSize, piiTypes: [], action: 'redact' };
};
const pii = (...piiTypes: PiiType[]): GuardrailRule => ({ name: 'p', stage: 'both', kind: 'pii', piiTypes, action: 'redact' });
const redacted = (rule: GuardrailRule, ...texts: string[]): readonly string[] => redactParts(texts, scan(rule, prepare(texts)));

describe('normalise', () => {
  test('ASCII text is its own normal form, without a map (the fast path)', () => {
    const text = 'plain ASCII, TOPSECRET-42 and 4111 1111';
    const n = normalise(text);
    expect(n.text).toBe(text);
    expect(n.starts).toBeNull();
  });

  test('default-ignorable code points are removed: zero-width space/joiners, word joiner, BOM, soft hyphen, bidi controls, variation selectors', () => {
    expect(normalise('T\u200bO\u200cP\u200dS\u2060E\ufeffC\u00adR\u202eE\u2066T\ufe0f').text).toBe('TOPSECRET');
  });

  test('NFKC: fullwidth letters and digits, ligatures, mathematical letters, compatibility spaces', () => {
    expect(normalise('ＴＯＰＳＥＣＲＥＴ－４２').text).toBe('TOPSECRET-42');
    expect(normalise('\ufb01le').text).toBe('file');
    expect(normalise('\u{1d413}\u{1d40e}\u{1d40f}').text).toBe('TOP');
    expect(normalise('4111\u00a01111\u20091111\u30001111').text).toBe('4111 1111 1111 1111');
  });

  test('confusables fold to Latin (Cyrillic, Greek, Armenian, Cherokee, Lisu), ASCII stays as is', () => {
    expect(normalise('ТОРЅЕСRЕТ').text).toBe('TOPSECRET'); // Cyrillic Т О Р Ѕ Е С Е
    expect(normalise('ΤΟΡSΕCRΕΤ').text).toBe('TOPSECRET'); // Greek
    expect(normalise('օս ᏚᎬ ꓔꓳ').text).toBe('ou SE TO');
    expect(normalise('ϲard').text).toBe('card'); // lunate sigma: folded before NFKC would turn it into ς
    expect(normalise('0O1lI').text).toBe('0O1lI');
    expect(normalise('4111\u20131111\u20121111\u22121111').text).toBe('4111-1111-1111-1111');
    for (const [k, v] of CONFUSABLES) {
      expect(k.length).toBe(1);
      expect(v.length).toBe(1);
      expect(k.charCodeAt(0)).toBeGreaterThan(0x7f);
      expect(v.charCodeAt(0)).toBeLessThan(0x80);
    }
  });

  test('marks are stripped from Latin letters after NFKC, combining or precomposed; other scripts keep theirs', () => {
    expect(normalise('T\u0308O\u0336\u0336P').text).toBe('TOP');
    expect(normalise('O\u0301').text).toBe('O');
    expect(normalise('cafe\u0301 café').text).toBe('cafe cafe');
    expect(normalise('pas\u0301sword').text).toBe('password'); // s + U+0301 composes to ś under NFKC
    expect(normalise('paśsword').text).toBe('password');
    expect(normalise('привет').text).toBe('пpивeт');
    expect(normalise('हिन्दी').text).toBe('हिन्दी');
    expect(normalise('한국어').text).toBe('한국어');
    // Rule patterns fold the same way: a rule written with accents still matches.
    expect(normalisePattern('café|naïve')).toBe('cafe|naive');
    expect(redacted(regex(normalisePattern('café')), 'un cafe\u0301 noir')).toEqual(['un [REDACTED:r] noir']);
  });

  test('a line break between two letters is dropped (a word split over lines); the original span keeps it', () => {
    for (const br of ['\n', '\r\n', '\r', '\u2028', '\u2029', '\v', '\f', '\x85']) expect(normalise(`pass${br}word`).text).toBe('password');
    expect(normalise('line one.\nline two').text).toBe('line one.\nline two');
    expect(normalise('4111\n1111').text).toBe('4111\n1111');
    expect(normalise('para\n\nnext').text).toBe('para\n\nnext');
    expect(redacted(regex('password'), 'my pass\r\nword here')).toEqual(['my [REDACTED:r] here']);
  });

  test('decimal digits of every script become ASCII digits', () => {
    expect(normalise('\u0664\u0661\u0661\u0661').text).toBe('4111'); // Arabic-Indic
    expect(normalise('\u06f4\u06f1\u06f1\u06f1').text).toBe('4111'); // Extended Arabic-Indic
    expect(normalise('\u096a\u0968 \u0e51\u0e52 \u{1d7d8}').text).toBe('42 12 0'); // Devanagari, Thai, mathematical
    expect(
      redacted(
        pii('credit_card'),
        'card \u0664\u0661\u0661\u0661 \u0661\u0661\u0661\u0661 \u06f1\u06f1\u06f1\u06f1 \u06f1\u06f1\u06f1\u06f1 ok',
      ),
    ).toEqual(['card [REDACTED:credit_card] ok']);
  });

  test('every normalised unit maps back to the original characters it came from', () => {
    const original = 'x ｍ\u200bｅ@ｃｏｒｐ.ｉｏ y';
    const n = normalise(original);
    expect(n.text).toBe('x me@corp.io y');
    const [m] = findMatches(pii('email'), n.text);
    if (!m) throw new Error('no match');
    const span = originalSpan(n, m.start, m.end);
    expect(original.slice(span.start, span.end)).toBe('ｍ\u200bｅ@ｃｏｒｐ.ｉｏ');
    expect(original.slice(0, span.start)).toBe('x ');
    expect(original.slice(span.end)).toBe(' y');
  });
});

describe('engine', () => {
  test('redaction applies to the original text at the mapped span', () => {
    expect(redacted(pii('email'), 'write to ｍｅ@ｃｏｒｐ.ｉｏ today')).toEqual(['write to [REDACTED:email] today']);
    expect(redacted(regex('TOPSECRET-\\d+'), 'a TОР\u200bSECRET-42 b')).toEqual(['a [REDACTED:r] b']);
    expect(redacted(regex('secret'), 'ok')).toEqual(['ok']);
  });

  test('a match split across texts is caught in the joined view and each piece is redacted', () => {
    expect(redacted(regex('TOPSECRET-\\d+'), 'see TOPSEC', 'RET-42 now')).toEqual(['see [REDACTED:r]', '[REDACTED:r] now']);
    expect(redacted(pii('credit_card'), 'card 4111 1111', ' 1111 1111', 'x')).toEqual([
      'card [REDACTED:credit_card]',
      '[REDACTED:credit_card]',
      'x',
    ]);
    // The per-text view keeps word boundaries at each text's own edges.
    expect(redacted(regex('\\bsecret\\b'), 'abc', 'secret')).toEqual(['abc', '[REDACTED:r]']);
  });

  test('base64 runs are decoded and matched; the whole run is redacted', () => {
    expect(redacted(regex('TOPSECRET-\\d+'), 'decode VE9QU0VDUkVULTQy please')).toEqual(['decode [REDACTED:r] please']);
    expect(redacted(pii('email'), 'x bWVAY29ycC5pbw== y')).toEqual(['x [REDACTED:email] y']);
    expect(redacted(pii('email'), 'url-safe bWVAY29ycC5pbw')).toEqual(['url-safe [REDACTED:email]']);
    // A base64 run split across two texts is decoded from the joined text.
    expect(redacted(regex('TOPSECRET-\\d+'), 'VE9QU0VD', 'UkVULTQy')).toEqual(['[REDACTED:r]', '[REDACTED:r]']);
    // Not decoded: hex, percent-encoding, runs shorter than 12 characters, binary.
    expect(redacted(regex('TOPSECRET'), '544f50534543524554 %54%4F%50%53%45%43%52%45%54')).toEqual([
      '544f50534543524554 %54%4F%50%53%45%43%52%45%54',
    ]);
    expect(redacted(regex('abc'), 'YWJj')).toEqual(['YWJj']);
    const binary = Buffer.from(Array.from({ length: 16 }, (_, i) => i)).toString('base64');
    expect(redacted(regex('[^A-Za-z0-9+/=]'), binary)).toEqual([binary]);
  });
});

describe('PII detectors accept the usual separators inside numbers', () => {
  const hit = (t: PiiType, text: string): string[] =>
    findMatches(pii(t), normalise(text).text).map((m) => normalise(text).text.slice(m.start, m.end));
  test.each([
    ['credit_card', '4111.1111.1111.1111'],
    ['credit_card', '4111 1111 1111 1111'],
    ['credit_card', '4111-1111-1111-1111'],
    ['credit_card', '4111 - 1111 - 1111 - 1111'],
    ['credit_card', '4111\u20131111\u20131111\u20131111'],
    ['credit_card', '4111111111111111'],
    ['credit_card', '4111/1111/1111/1111'],
    ['credit_card', '4111_1111_1111_1111'],
    ['credit_card', '4111 / 1111 / 1111 / 1111'],
    ['ssn', '123-45-6789'],
    ['ssn', '123 45 6789'],
    ['ssn', '123.45.6789'],
    ['phone', '555.123.4567'],
    ['phone', '+44 20 7946 0958'],
    ['phone', '+1-555-123-4567'],
    ['iban', 'GB82 WEST 1234 5698 7654 32'],
    ['iban', 'GB82-WEST-1234-5698-7654-32'],
    ['iban', 'GB82.WEST.1234.5698.7654.32'],
  ] as [PiiType, string][])('%s: %s', (t, text) => {
    expect(hit(t, `x ${text} y`)).toEqual([normalise(text).text]);
  });

  test('checksums still gate cards and IBANs; dotted IP addresses are not cards', () => {
    expect(hit('credit_card', '4111.1111.1111.1112')).toEqual([]);
    expect(hit('iban', 'GB82-WEST-1234-5698-7654-33')).toEqual([]);
    expect(hit('credit_card', '192.168.100.200')).toEqual([]);
    expect(DETECTORS.ip_address.re.flags).toContain('g');
  });
});
