import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FileSink } from 'bun';
import { describeError, log } from '../core/log.ts';
import type { RecordEntry } from '../core/records.ts';
import { addFlag } from './entry.ts';

/**
 * Request and response bodies kept beside the record rather than in it (the embedded store with
 * a data directory; issue 12). PGlite runs PostgreSQL in WebAssembly on the gateway's own thread,
 * where a kilobyte of body per row cost ~40 µs of the request's CPU (jsonb, heap, WAL); appended to
 * a file through Bun's native writer it costs ~1 µs, and the row keeps only where they are
 * (`bodies_at`: `segment:offset:requestBytes:responseBytes`, -1 for a body not kept).
 *
 * Segments are append-only files `<base36 time>[-n].bodies` in one directory; a process never
 * appends to a segment it did not start (a crash can leave a partial tail only in the newest one),
 * and starts a new one past `segmentBytes` or `segmentMs`. Bodies are taken when the record is
 * added — no body stays in JavaScript memory until the batch is written — and the writer flushes
 * them to the operating system before it writes the rows that point at them.
 */

const SEGMENT = /^[0-9a-z]{1,16}(-[0-9]{1,6})?\.bodies$/;
const NOT_READABLE = { omitted: 'body file not readable' };

export interface BodyFilesOptions {
  segmentBytes?: number;
  segmentMs?: number;
  /** The sink's buffer: appends past it are handed to the OS at once. */
  highWaterMark?: number;
}

export class BodyFiles {
  readonly dir: string;
  #sink: FileSink | undefined;
  #segment = '';
  #offset = 0;
  #openedAt = 0;
  /** Set when the files failed: bodies then stay in the row (the database's own path). */
  #failed = false;
  readonly #segmentBytes: number;
  readonly #segmentMs: number;
  readonly #highWaterMark: number;

  constructor(dir: string, opts: BodyFilesOptions = {}) {
    this.dir = dir;
    this.#segmentBytes = opts.segmentBytes ?? 256 * 1024 * 1024;
    this.#segmentMs = opts.segmentMs ?? 60 * 60 * 1000;
    this.#highWaterMark = opts.highWaterMark ?? 1024 * 1024;
    mkdirSync(dir, { recursive: true });
  }

  get failed(): boolean {
    return this.#failed;
  }

  #open(now: number): FileSink {
    if (this.#sink) void Promise.resolve(this.#sink.end()).catch((e: unknown) => this.#fail(e));
    const base = now.toString(36);
    let name = `${base}.bodies`;
    for (let n = 1; existsSync(join(this.dir, name)); n++) name = `${base}-${n}.bodies`;
    this.#segment = name;
    this.#offset = 0;
    this.#openedAt = now;
    this.#sink = Bun.file(join(this.dir, name)).writer({ highWaterMark: this.#highWaterMark });
    return this.#sink;
  }

  #fail(e: unknown): void {
    if (!this.#failed)
      log.error('request bodies could not be written beside the records; they are kept in the rows from now on', {
        dir: this.dir,
        error: describeError(e),
      });
    this.#failed = true;
  }

  #write(sink: FileSink, text: string): void {
    const w = sink.write(text);
    if (w instanceof Promise) w.catch((e: unknown) => this.#fail(e));
  }

  /**
   * The entry with its bodies appended to the current segment and `bodies_at` pointing at them;
   * the entry unchanged when it has no body or the files failed (the row then keeps its bodies).
   */
  keep(e: RecordEntry): RecordEntry {
    if (this.#failed || (e.requestBody === null && e.responseBody === null)) return e;
    let cleaned = false;
    const wellFormed = (s: string | null): string | null => {
      if (s === null || s.isWellFormed()) return s;
      cleaned = true;
      return s.toWellFormed();
    };
    const req = wellFormed(e.requestBody);
    const res = wellFormed(e.responseBody);
    const reqBytes = req === null ? 0 : Buffer.byteLength(req, 'utf8');
    const resBytes = res === null ? 0 : Buffer.byteLength(res, 'utf8');
    const now = Date.now();
    try {
      const sink =
        !this.#sink || this.#offset + reqBytes + resBytes > this.#segmentBytes || now - this.#openedAt > this.#segmentMs
          ? this.#open(now)
          : this.#sink;
      if (req !== null) this.#write(sink, req);
      if (res !== null) this.#write(sink, res);
    } catch (err) {
      this.#fail(err);
      return e;
    }
    const at = `${this.#segment}:${this.#offset}:${req === null ? -1 : reqBytes}:${res === null ? -1 : resBytes}`;
    this.#offset += reqBytes + resBytes;
    return {
      row: { ...e.row, bodies_at: at },
      requestBody: null,
      responseBody: null,
      sanitized: cleaned ? addFlag(e.sanitized, 'text') : e.sanitized,
    };
  }

  /** Hands everything appended so far to the operating system (before rows pointing at it are written). */
  async flush(): Promise<void> {
    if (!this.#sink) return;
    try {
      await this.#sink.flush();
    } catch (e) {
      this.#fail(e);
    }
  }

  async close(): Promise<void> {
    const sink = this.#sink;
    this.#sink = undefined;
    if (!sink) return;
    try {
      await sink.end();
    } catch (e) {
      this.#fail(e);
    }
  }
}

/** Parses `bodies_at`; undefined when it is not one. */
export const parseBodiesAt = (at: string): { segment: string; offset: number; request: number; response: number } | undefined => {
  const parts = at.split(':');
  if (parts.length !== 4) return undefined;
  const [segment, ...nums] = parts as [string, string, string, string];
  const [offset, request, response] = nums.map(Number) as [number, number, number];
  if (!SEGMENT.test(segment) || ![offset, request, response].every((n) => Number.isSafeInteger(n) && n >= -1) || offset < 0)
    return undefined;
  return { segment, offset, request, response };
};

const parseBody = (bytes: Uint8Array): unknown => {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return NOT_READABLE;
  }
};

/**
 * The bodies a `bodies_at` points at, parsed; a marker for one that cannot be read (missing or
 * short segment, not JSON), null for a body not kept.
 */
export const readBodies = async (dir: string, at: string): Promise<{ requestBody: unknown; responseBody: unknown }> => {
  const p = parseBodiesAt(at);
  if (!p) return { requestBody: NOT_READABLE, responseBody: NOT_READABLE };
  const req = Math.max(0, p.request);
  const res = Math.max(0, p.response);
  let bytes: Uint8Array;
  try {
    bytes = await Bun.file(join(dir, p.segment))
      .slice(p.offset, p.offset + req + res)
      .bytes();
  } catch {
    bytes = new Uint8Array(0);
  }
  const part = (from: number, n: number, kept: boolean): unknown =>
    !kept ? null : bytes.length < from + n ? NOT_READABLE : parseBody(bytes.subarray(from, from + n));
  return { requestBody: part(0, req, p.request >= 0), responseBody: part(req, res, p.response >= 0) };
};
