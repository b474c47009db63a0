import { describe, expect, test } from 'bun:test';
import { createNdjsonParser, createSseParser } from './framing.ts';
import type { UpstreamFrame } from './types.ts';

const enc = new TextEncoder();

const parseAll = (chunks: readonly (Uint8Array | string)[], make = createSseParser): UpstreamFrame[] => {
  const p = make();
  const out: UpstreamFrame[] = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.flush());
  return out;
};

/** Mixed-feature sample: comments, event lines, multi-line data, no space after colon, UTF-8. */
const SAMPLE =
  ': OPENROUTER PROCESSING\n\n' +
  'event: message_start\ndata: {"type":"message_start","text":"héllo 👋 世界"}\n\n' +
  ': keep-alive\n' +
  'data:first line\ndata: second line\ndata:  two spaces kept\n\n' +
  'event:ping\ndata:{"type":"ping"}\n\n' +
  'id: 7\nretry: 1000\ndata\n\n' +
  'data: [DONE]\n\n';

const EXPECTED: UpstreamFrame[] = [
  { event: 'message_start', data: '{"type":"message_start","text":"héllo 👋 世界"}' },
  { data: 'first line\nsecond line\n two spaces kept' },
  { event: 'ping', data: '{"type":"ping"}' },
  { data: '' },
  { data: '[DONE]' },
];

const eols = [
  ['LF', '\n'],
  ['CRLF', '\r\n'],
  ['CR', '\r'],
] as const;

describe('createSseParser', () => {
  for (const [name, eol] of eols) {
    const text = SAMPLE.replace(/\n/g, eol);
    const bytes = enc.encode(text);

    test(`${name}: whole body`, () => {
      expect(parseAll([bytes])).toEqual(EXPECTED);
      expect(parseAll([text])).toEqual(EXPECTED);
    });

    test(`${name}: split into two chunks at every byte position`, () => {
      for (let i = 0; i <= bytes.length; i++) {
        expect(parseAll([bytes.subarray(0, i), bytes.subarray(i)])).toEqual(EXPECTED);
      }
    });

    test(`${name}: split into three chunks at many position pairs`, () => {
      for (let i = 0; i <= bytes.length; i += 3) {
        for (let j = i; j <= bytes.length; j += 7) {
          expect(parseAll([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)])).toEqual(EXPECTED);
        }
      }
    });

    test(`${name}: one byte at a time`, () => {
      const chunks = Array.from(bytes, (b) => Uint8Array.of(b));
      expect(parseAll(chunks)).toEqual(EXPECTED);
    });

    test(`${name}: string chunks split at every character`, () => {
      for (let i = 0; i <= text.length; i++) expect(parseAll([text.slice(0, i), text.slice(i)])).toEqual(EXPECTED);
    });
  }

  test('frames are returned as soon as their blank line arrives', () => {
    const p = createSseParser();
    expect(p.push('data: a\n')).toEqual([]);
    expect(p.push('\n')).toEqual([{ data: 'a' }]);
    expect(p.push('data: b\r')).toEqual([]);
    expect(p.push('\r')).toEqual([{ data: 'b' }]);
    expect(p.push('\ndata: c\r\n\r\n')).toEqual([{ data: 'c' }]);
    expect(p.flush()).toEqual([]);
  });

  test('a CR at the end of a chunk followed by LF in the next is one line break', () => {
    expect(parseAll(['data: x\r', '\n\r', '\n'])).toEqual([{ data: 'x' }]);
  });

  test('flush dispatches an event missing its final blank line', () => {
    expect(parseAll(['data: {"a":1}\n\ndata: [DONE]'])).toEqual([{ data: '{"a":1}' }, { data: '[DONE]' }]);
    expect(parseAll(['data: [DONE]\n'])).toEqual([{ data: '[DONE]' }]);
  });

  test('event type resets after each dispatch; comments and unknown fields are ignored', () => {
    expect(parseAll(['event: a\ndata: 1\n\ndata: 2\n\n:comment\nfoo: bar\n\n'])).toEqual([{ event: 'a', data: '1' }, { data: '2' }]);
  });

  test('a blank line without data dispatches nothing', () => {
    expect(parseAll(['\n\n\nevent: x\n\n: c\n\n'])).toEqual([]);
  });

  test('a UTF-8 BOM at the start is dropped', () => {
    expect(parseAll([Uint8Array.of(0xef, 0xbb), Uint8Array.of(0xbf), enc.encode('data: x\n\n')])).toEqual([{ data: 'x' }]);
    expect(parseAll(['\ufeffdata: y\n\n'])).toEqual([{ data: 'y' }]);
  });

  test('multi-byte characters split across chunks at every byte are decoded intact', () => {
    const bytes = enc.encode('data: 👋é世\n\n');
    for (let i = 0; i <= bytes.length; i++) {
      expect(parseAll([bytes.subarray(0, i), bytes.subarray(i)])).toEqual([{ data: '👋é世' }]);
    }
  });
});

describe('createNdjsonParser', () => {
  const NDJSON = '{"a":1}\n\n{"b":"é👋"}\r\n   \n{"c":3}';
  const EXP: UpstreamFrame[] = [{ data: '{"a":1}' }, { data: '{"b":"é👋"}' }, { data: '{"c":3}' }];

  test('one frame per non-empty line, last line without newline included', () => {
    expect(parseAll([NDJSON], createNdjsonParser)).toEqual(EXP);
  });

  test('split at every byte position', () => {
    const bytes = enc.encode(NDJSON);
    for (let i = 0; i <= bytes.length; i++) {
      expect(parseAll([bytes.subarray(0, i), bytes.subarray(i)], createNdjsonParser)).toEqual(EXP);
    }
  });

  test('CR-only line endings', () => {
    expect(parseAll(['{"a":1}\r{"b":2}\r'], createNdjsonParser)).toEqual([{ data: '{"a":1}' }, { data: '{"b":2}' }]);
  });
});
