/**
 * AWS event-stream binary framing (`application/vnd.amazon.eventstream`, Bedrock ConverseStream).
 *
 *   u32 total_length | u32 headers_length | u32 prelude_crc | headers | payload | u32 message_crc
 *
 * Big-endian; both checksums are CRC32 (IEEE): the prelude CRC covers bytes [0, 8), the message
 * CRC everything before it. Each header is `u8 name_len | name | u8 type | value`. Bedrock only
 * sends string headers (type 7); the other types are skipped by their exact sizes.
 *
 * The encoder exists for tests and fixtures (a mock upstream can use it as well).
 */
import { crc32 } from 'node:zlib';
import { concatBytes } from '../core/bytes.ts';
import { GatewayError } from '../core/errors.ts';
import type { UpstreamFrame } from './types.ts';
import { DEFAULT_MAX_EVENT, eventTooLarge } from './upstream-error.ts';

/** 12-byte prelude + 4-byte message CRC. */
const OVERHEAD = 16;

const corrupt = (what: string): GatewayError =>
  new GatewayError({ kind: 'bad_gateway', message: `Upstream event stream is corrupt: ${what}.` });

/** Byte size of a header value of type `t` starting at `at`, or -1 for an unknown type. */
const valueSize = (view: DataView, t: number, at: number): number => {
  switch (t) {
    case 0:
    case 1:
      return 0;
    case 2:
      return 1;
    case 3:
      return 2;
    case 4:
      return 4;
    case 5:
    case 8:
      return 8;
    case 6:
    case 7:
      return at + 2 <= view.byteLength ? 2 + view.getUint16(at) : -1;
    case 9:
      return 16;
    default:
      return -1;
  }
};

const utf8 = new TextDecoder('utf-8');

/** Parses the header block; only string headers are kept. */
export const parseEventStreamHeaders = (block: Uint8Array): Record<string, string> => {
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  const headers: Record<string, string> = {};
  let i = 0;
  while (i < block.length) {
    const nameLen = view.getUint8(i);
    const typeAt = i + 1 + nameLen;
    if (nameLen === 0 || typeAt >= block.length) throw corrupt('bad header name');
    const name = utf8.decode(block.subarray(i + 1, typeAt));
    const type = view.getUint8(typeAt);
    const size = valueSize(view, type, typeAt + 1);
    const end = typeAt + 1 + size;
    if (size < 0 || end > block.length) throw corrupt(`bad value for header '${name}'`);
    if (type === 7) headers[name] = utf8.decode(block.subarray(typeAt + 3, end));
    i = end;
  }
  return headers;
};

export interface EventStreamParser {
  push(chunk: Uint8Array | string): UpstreamFrame[];
  /** The body ended; throws bad_gateway when it ended inside a frame. */
  flush(): UpstreamFrame[];
}

/**
 * A frame's bytes are held until the frame is complete; a frame whose declared length passes
 * `maxFrame` (GATEWAY_MAX_STREAM_EVENT) is refused from its prelude, before its body is read.
 * Chunks are joined once a frame (or prelude) is complete, not on every arrival.
 */
export const createEventStreamParser = (maxFrame = DEFAULT_MAX_EVENT): EventStreamParser => {
  let parts: Uint8Array[] = [];
  let held = 0;
  /** Bytes needed before parsing can go on: a prelude, or the frame it announced. */
  let need = 12;

  const take = (): UpstreamFrame[] => {
    const out: UpstreamFrame[] = [];
    if (held < need) return out;
    const buf = parts.length === 1 ? (parts[0] as Uint8Array) : concatBytes(parts);
    let at = 0;
    need = 12;
    while (buf.length - at >= 12) {
      const view = new DataView(buf.buffer, buf.byteOffset + at, buf.length - at);
      const total = view.getUint32(0);
      const headersLen = view.getUint32(4);
      if (crc32(buf.subarray(at, at + 8)) !== view.getUint32(8)) throw corrupt('prelude checksum mismatch');
      if (total < OVERHEAD || headersLen > total - OVERHEAD) throw corrupt('bad frame length');
      if (total > maxFrame) throw eventTooLarge(maxFrame);
      if (buf.length - at < total) {
        need = total;
        break;
      }
      const frame = buf.subarray(at, at + total);
      if (crc32(frame.subarray(0, total - 4)) !== view.getUint32(total - 4)) throw corrupt('message checksum mismatch');
      const headers = parseEventStreamHeaders(frame.subarray(12, 12 + headersLen));
      const data = utf8.decode(frame.subarray(12 + headersLen, total - 4));
      const event = headers[':event-type'] ?? headers[':exception-type'] ?? headers[':error-code'];
      out.push(event === undefined ? { data, headers } : { event, data, headers });
      at += total;
    }
    const rest = at === 0 ? buf : buf.slice(at);
    parts = rest.length > 0 ? [rest] : [];
    held = rest.length;
    return out;
  };

  return {
    push(chunk) {
      const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk.slice();
      if (bytes.length > 0) {
        parts.push(bytes);
        held += bytes.length;
      }
      return take();
    },
    flush() {
      const out = take();
      if (held > 0) throw corrupt('the body ended inside a frame');
      return out;
    },
  };
};

/** Encodes one message with string headers (tests, fixtures, mock upstreams). */
export const encodeEventStreamMessage = (headers: Record<string, string>, payload: Uint8Array | string): Uint8Array => {
  const enc = new TextEncoder();
  const body = typeof payload === 'string' ? enc.encode(payload) : payload;
  const parts: Uint8Array[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = enc.encode(name);
    const v = enc.encode(value);
    const h = new Uint8Array(1 + n.length + 3 + v.length);
    const hv = new DataView(h.buffer);
    hv.setUint8(0, n.length);
    h.set(n, 1);
    hv.setUint8(1 + n.length, 7);
    hv.setUint16(2 + n.length, v.length);
    h.set(v, 4 + n.length);
    parts.push(h);
  }
  const headersLen = parts.reduce((s, p) => s + p.length, 0);
  const total = OVERHEAD + headersLen + body.length;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, total);
  view.setUint32(4, headersLen);
  view.setUint32(8, crc32(out.subarray(0, 8)));
  let at = 12;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  out.set(body, at);
  view.setUint32(total - 4, crc32(out.subarray(0, total - 4)));
  return out;
};
