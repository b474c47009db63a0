import { describe, expect, test } from 'bun:test';
import { crc32 } from 'node:zlib';
import { concatBytes } from '../core/bytes.ts';
import { createEventStreamParser, encodeEventStreamMessage, parseEventStreamHeaders } from './eventstream.ts';
import { createFrameParser } from './framing.ts';
import { errorFields } from './golden.ts';
import { streamBytes } from './golden-suite.ts';
import type { UpstreamFrame } from './types.ts';

const parseAll = (chunks: readonly (Uint8Array | string)[]): UpstreamFrame[] => {
  const p = createFrameParser('aws-eventstream');
  const out: UpstreamFrame[] = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.flush());
  return out;
};

const caught = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
};

const ev = (type: string, payload: string) =>
  encodeEventStreamMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);

const join = concatBytes;

const STREAM = join([
  ev('messageStart', '{"role":"assistant"}'),
  ev('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"héllo 👋 世界"}}'),
  encodeEventStreamMessage(
    { ':message-type': 'exception', ':exception-type': 'throttlingException', ':content-type': 'application/json' },
    '{"message":"slow down"}',
  ),
  encodeEventStreamMessage({ ':message-type': 'event', ':event-type': 'empty' }, ''),
]);

const EXPECTED: UpstreamFrame[] = [
  {
    event: 'messageStart',
    data: '{"role":"assistant"}',
    headers: { ':event-type': 'messageStart', ':content-type': 'application/json', ':message-type': 'event' },
  },
  {
    event: 'contentBlockDelta',
    data: '{"contentBlockIndex":0,"delta":{"text":"héllo 👋 世界"}}',
    headers: { ':event-type': 'contentBlockDelta', ':content-type': 'application/json', ':message-type': 'event' },
  },
  {
    event: 'throttlingException',
    data: '{"message":"slow down"}',
    headers: { ':message-type': 'exception', ':exception-type': 'throttlingException', ':content-type': 'application/json' },
  },
  { event: 'empty', data: '', headers: { ':message-type': 'event', ':event-type': 'empty' } },
];

describe('AWS event-stream parser', () => {
  test('zlib crc32 is the IEEE CRC32', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });

  test('whole body', () => {
    expect(parseAll([STREAM])).toEqual(EXPECTED);
  });

  test('split into two chunks at every byte position', () => {
    for (let i = 0; i <= STREAM.length; i++) expect(parseAll([STREAM.subarray(0, i), STREAM.subarray(i)])).toEqual(EXPECTED);
  });

  test('split into three chunks at many position pairs, and one byte at a time', () => {
    for (let i = 0; i <= STREAM.length; i += 5) {
      for (let j = i; j <= STREAM.length; j += 11) {
        expect(parseAll([STREAM.subarray(0, i), STREAM.subarray(i, j), STREAM.subarray(j)])).toEqual(EXPECTED);
      }
    }
    expect(parseAll(Array.from(STREAM, (b) => Uint8Array.of(b)))).toEqual(EXPECTED);
  });

  test('frames come out as soon as they are complete', () => {
    const p = createEventStreamParser();
    const first = ev('a', '{}');
    expect(p.push(first.subarray(0, first.length - 1))).toEqual([]);
    expect(p.push(first.subarray(first.length - 1))).toHaveLength(1);
    expect(p.flush()).toEqual([]);
  });

  test('bytes encoded by the AWS SDK codec (every header type) decode; non-string headers are skipped', () => {
    const bytes = streamBytes('bedrock', 'stream-smithy.bin');
    const frames = parseAll([bytes]);
    expect(frames.map((f) => f.event)).toEqual(['messageStart', 'contentBlockDelta', 'contentBlockStop', 'messageStop', 'metadata']);
    expect(frames[1]?.data).toBe('{"contentBlockIndex":0,"delta":{"text":"Héllo 👋"},"p":"abcdefgh"}');
    expect(frames[1]?.headers).toEqual({
      ':event-type': 'contentBlockDelta',
      ':content-type': 'application/json',
      ':message-type': 'event',
    });
    for (let i = 0; i <= bytes.length; i += 7) expect(parseAll([bytes.subarray(0, i), bytes.subarray(i)])).toEqual(frames);
  });

  test('a corrupted payload byte fails the message CRC → bad_gateway', () => {
    const bad = STREAM.slice();
    bad[30] = (bad[30] ?? 0) ^ 0xff;
    expect(errorFields(caught(() => parseAll([bad])))).toMatchObject({ kind: 'bad_gateway', status: 502 });
  });

  test('a corrupted length fails the prelude CRC → bad_gateway', () => {
    const bad = STREAM.slice();
    bad[3] = (bad[3] ?? 0) ^ 0x01;
    expect(errorFields(caught(() => parseAll([bad])))).toMatchObject({ kind: 'bad_gateway', message: expect.stringContaining('prelude') });
  });

  test('a body that ends inside a frame → bad_gateway on flush', () => {
    const p = createEventStreamParser();
    p.push(STREAM.subarray(0, STREAM.length - 3));
    expect(errorFields(caught(() => p.flush()))).toMatchObject({ kind: 'bad_gateway', message: expect.stringContaining('inside a frame') });
  });

  test('an unknown header type is corruption', () => {
    const block = Uint8Array.of(1, 0x61, 42, 0);
    expect(errorFields(caught(() => parseEventStreamHeaders(block)))).toMatchObject({ kind: 'bad_gateway' });
  });

  test('generic error frames are named by :error-code', () => {
    const f = parseAll([
      encodeEventStreamMessage({ ':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'boom' }, ''),
    ]);
    expect(f[0]?.event).toBe('InternalFailure');
  });
});
