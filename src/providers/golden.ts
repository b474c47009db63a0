/**
 * Test support for the provider golden fixtures in test/fixtures/providers/ (and, through
 * `goldenJson`, for test/fixtures/propagation/). Not imported by production code. With
 * UPDATE_GOLDEN=1 the tests (re)write the expected files instead of comparing; review the diff
 * before keeping it.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StreamEvent } from '../canonical/types.ts';
import { GatewayError } from '../core/errors.ts';
import { createSseParser } from './framing.ts';
import type { StreamDecoder, UpstreamFrame } from './types.ts';

export const FIXTURES = join(import.meta.dir, '..', '..', 'test', 'fixtures', 'providers');
export const UPDATE_GOLDEN = process.env['UPDATE_GOLDEN'] === '1';

export const fixtureText = (...parts: string[]): string => readFileSync(join(FIXTURES, ...parts), 'utf8');
export const fixtureJson = (...parts: string[]): unknown => JSON.parse(fixtureText(...parts)) as unknown;

/**
 * Compares `actual` with the JSON file at `path`, or writes it in update mode. Returns the expected
 * value. The one golden mechanism of the JSON fixtures (the providers' here, propagation's in
 * test/propagation-golden.test.ts).
 */
export const goldenJson = (path: string, actual: unknown): unknown => {
  if (UPDATE_GOLDEN) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
  else if (!existsSync(path)) throw new Error(`missing golden file ${path}; run the tests with UPDATE_GOLDEN=1`);
  return JSON.parse(readFileSync(path, 'utf8')) as unknown;
};

/** `goldenJson` for a file of test/fixtures/providers/. */
export const golden = (actual: unknown, ...parts: string[]): unknown => goldenJson(join(FIXTURES, ...parts), actual);

export interface ErrorFields {
  kind: string;
  status: number;
  type: string;
  errorCode: string;
  param: string | null;
  message: string;
  retryable: boolean;
  retryAfterSeconds?: number;
  upstreamStatus?: number;
}

export const errorFields = (e: unknown): ErrorFields => {
  if (!(e instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(e)}`);
  const f: ErrorFields = {
    kind: e.kind,
    status: e.status,
    type: e.type,
    errorCode: e.errorCode,
    param: e.param,
    message: e.message,
    retryable: e.retryable,
  };
  if (e.retryAfterSeconds !== undefined) f.retryAfterSeconds = e.retryAfterSeconds;
  if (e.upstreamStatus !== undefined) f.upstreamStatus = e.upstreamStatus;
  return f;
};

export interface StreamOutcome {
  events: StreamEvent[];
  error?: ErrorFields;
}

/** Frames a whole body with the shared SSE parser, feeding it in the given chunks. */
export const frameChunks = (chunks: readonly (Uint8Array | string)[]): UpstreamFrame[] => {
  const parser = createSseParser();
  const frames: UpstreamFrame[] = [];
  for (const c of chunks) frames.push(...parser.push(c));
  frames.push(...parser.flush());
  return frames;
};

/** Runs frames through a decoder up to `end()`, capturing the events before any thrown error. */
export const decodeFrames = (decoder: StreamDecoder, frames: readonly UpstreamFrame[]): StreamOutcome => {
  const events: StreamEvent[] = [];
  try {
    for (const f of frames) events.push(...decoder.push(f));
    events.push(...decoder.end());
    return { events };
  } catch (e) {
    return { events, error: errorFields(e) };
  }
};

/** Splits bytes into chunks of the given sizes, cycling through them. */
export const splitBytes = (bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] => {
  const out: Uint8Array[] = [];
  let i = 0;
  let k = 0;
  while (i < bytes.length) {
    const n = Math.max(1, sizes[k++ % sizes.length] ?? 1);
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
};

export const withLineEndings = (text: string, eol: '\n' | '\r\n' | '\r'): string => text.replace(/\r\n|\r|\n/g, eol);
