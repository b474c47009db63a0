/**
 * The one incremental parser for upstream streams. Bytes (or text) go in as they arrive, complete
 * frames come out. Adapters never see raw stream text.
 *
 * SSE follows the WHATWG event-stream rules: LF, CRLF and CR line endings; `:` comment lines
 * ignored (`: keep-alive`, `: OPENROUTER PROCESSING`); `field: value` with one optional space after
 * the colon; several `data:` lines joined with `\n`; a blank line dispatches. Unlike a browser, an
 * event still open when the body ends is dispatched by `flush()` (some upstreams omit the last
 * blank line).
 *
 * AWS event-stream (Bedrock) is binary and lives in eventstream.ts.
 */
import { createEventStreamParser } from './eventstream.ts';
import type { Framing, UpstreamFrame } from './types.ts';
import { DEFAULT_MAX_EVENT, eventTooLarge } from './upstream-error.ts';

/*
 * Every parser refuses an event larger than its bound (GATEWAY_MAX_STREAM_EVENT) as soon as it
 * holds more of it: the reader's caller then cancels the stream. Text parsers measure the decoded
 * characters held, never more than the bytes received, so an event within the bound in bytes is
 * never refused, and one refused is past it in bytes too.
 */

export interface FrameParser {
  push(chunk: Uint8Array | string): UpstreamFrame[];
  /** The body ended: returns whatever complete frame was still buffered. */
  flush(): UpstreamFrame[];
}

const STREAM = { stream: true } as const;

/** Decodes UTF-8 incrementally (a character split across chunks is held back) and strips a BOM. */
const createTextInput = () => {
  const decoder = new TextDecoder('utf-8');
  let first = true;
  const stripBom = (s: string): string => {
    if (!first || s === '') return s;
    first = false;
    return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
  };
  return {
    decode: (chunk: Uint8Array | string): string =>
      stripBom(typeof chunk === 'string' ? decoder.decode() + chunk : decoder.decode(chunk, STREAM)),
    end: (): string => stripBom(decoder.decode()),
  };
};

/**
 * Splits text into lines on LF, CRLF or CR, keeping the incomplete tail. A CR at the very end of a
 * chunk ends a line at once; an LF at the start of the next chunk is then skipped.
 */
const createLineSplitter = () => {
  let buffer = '';
  let skipLf = false;
  return {
    push(text: string): string[] {
      let s = text;
      if (skipLf && s.length > 0) {
        if (s.charCodeAt(0) === 10) s = s.slice(1);
        skipLf = false;
      }
      // No line end in the new text: held (appended, not rescanned; a long line arrives in many chunks).
      if (s.indexOf('\n') === -1 && s.indexOf('\r') === -1) {
        buffer = buffer === '' ? s : buffer + s;
        return [];
      }
      // The held-back tail never contains a line break, so scanning resumes where it ended.
      const scanFrom = buffer.length;
      buffer = scanFrom === 0 ? s : buffer + s;
      const lines: string[] = [];
      let start = 0;
      if (s.indexOf('\r') === -1) {
        // LF only (almost every upstream): let indexOf find the line ends.
        for (let nl = buffer.indexOf('\n', scanFrom); nl !== -1; nl = buffer.indexOf('\n', start)) {
          lines.push(buffer.slice(start, nl));
          start = nl + 1;
        }
        if (start > 0) buffer = buffer.slice(start);
        return lines;
      }
      for (let i = scanFrom; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        lines.push(buffer.slice(start, i));
        if (c === 13) {
          if (i + 1 < buffer.length) {
            if (buffer.charCodeAt(i + 1) === 10) i++;
          } else {
            skipLf = true;
          }
        }
        start = i + 1;
      }
      buffer = buffer.slice(start);
      return lines;
    },
    /** Characters of the unterminated line held back. */
    held(): number {
      return buffer.length;
    },
    /** The unterminated last line, if any. */
    end(): string[] {
      const rest = buffer;
      buffer = '';
      skipLf = false;
      return rest === '' ? [] : [rest];
    },
  };
};

export const createSseParser = (maxEvent = DEFAULT_MAX_EVENT): FrameParser => {
  const input = createTextInput();
  const lines = createLineSplitter();
  /** The event's data lines so far, joined with LF (undefined: none yet). */
  let data: string | undefined;
  let event: string | undefined;

  const dispatch = (out: UpstreamFrame[]): void => {
    if (data !== undefined) out.push(event === undefined ? { data } : { event, data });
    data = undefined;
    event = undefined;
  };

  const feed = (ls: string[], out: UpstreamFrame[]): void => {
    for (const line of ls) {
      if (line === '') {
        dispatch(out);
        continue;
      }
      const first = line.charCodeAt(0);
      if (first === 58 /* : */) continue;
      let value: string;
      if (first === 100 /* d */ && line.startsWith('data:')) {
        // The common case, without slicing out the field name.
        value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
        data = data === undefined ? value : `${data}\n${value}`;
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
      else if (field === 'event') event = value === '' ? undefined : value;
      // `id` and `retry` are irrelevant to a server-side consumer; unknown fields are ignored.
    }
  };

  return {
    push(chunk) {
      const out: UpstreamFrame[] = [];
      feed(lines.push(input.decode(chunk)), out);
      // The event still open: its data lines so far and its unterminated line.
      if (lines.held() + (data?.length ?? 0) > maxEvent) throw eventTooLarge(maxEvent);
      return out;
    },
    flush() {
      const out: UpstreamFrame[] = [];
      feed(lines.push(input.end()), out);
      feed(lines.end(), out);
      dispatch(out);
      return out;
    },
  };
};

/** Newline-delimited JSON (Ollama native and friends): one frame per non-empty line. */
export const createNdjsonParser = (maxEvent = DEFAULT_MAX_EVENT): FrameParser => {
  const input = createTextInput();
  const lines = createLineSplitter();
  const frames = (ls: string[]): UpstreamFrame[] => {
    const out: UpstreamFrame[] = [];
    for (const l of ls) {
      const t = l.trim();
      if (t !== '') out.push({ data: t });
    }
    return out;
  };
  return {
    push: (chunk) => {
      const out = frames(lines.push(input.decode(chunk)));
      if (lines.held() > maxEvent) throw eventTooLarge(maxEvent);
      return out;
    },
    flush: () => [...frames(lines.push(input.end())), ...frames(lines.end())],
  };
};

/** The parser of a framing; no event larger than `maxEvent` bytes is held (GATEWAY_MAX_STREAM_EVENT). */
export const createFrameParser = (framing: Framing, maxEvent = DEFAULT_MAX_EVENT): FrameParser => {
  if (framing === 'sse') return createSseParser(maxEvent);
  if (framing === 'ndjson') return createNdjsonParser(maxEvent);
  return createEventStreamParser(maxEvent);
};
