/** Helpers shared by the format tests (fixture paths, a pinned encode context, stream replay). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StreamEvent } from '../canonical/types.ts';
import { type ErrorKind, GatewayError } from '../core/errors.ts';
import type { ClientFormatCodec, EncodeContext } from './types.ts';

export const FIXTURES = join(import.meta.dir, '../../test/fixtures/formats');

export const goldenCtx = (includeUsage = false): EncodeContext => ({
  model: 'gw-model',
  requestId: '0f8e2a4c-1b3d-4e5f-8a9b-0c1d2e3f4a5b',
  includeUsage,
  created: 1760000100,
});

export interface StreamFixture {
  description: string;
  events: StreamEvent[];
  error?: { kind: ErrorKind; message: string };
}

export const readJson = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));

export const loadStreamFixture = (name: string): StreamFixture =>
  readJson(join(FIXTURES, 'canonical/streams', `${name}.json`)) as StreamFixture;

/** Feeds a fixture's events through a fresh encoder and returns the whole SSE text. */
export const runStream = (codec: ClientFormatCodec, fixture: StreamFixture, ctx: EncodeContext): string => {
  const enc = codec.createStreamEncoder(ctx);
  let out = '';
  for (const e of fixture.events) out += enc.push(e);
  out += fixture.error ? enc.error(new GatewayError(fixture.error)) : enc.end();
  return out;
};

/** Asserts that `fn` throws the 400 invalid_request_error GatewayError with exactly this `param`. */
export const expectInvalid = (fn: () => unknown, param: string | null): GatewayError => {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  if (!(caught instanceof GatewayError)) throw new Error(`expected a GatewayError for param ${param}, got ${String(caught)}`);
  if (
    caught.param !== param ||
    caught.status !== 400 ||
    caught.type !== 'invalid_request_error' ||
    caught.errorCode !== 'invalid_request'
  ) {
    throw new Error(
      `expected 400 invalid_request_error param=${param}, got ${caught.status} ${caught.type} param=${caught.param}: ${caught.message}`,
    );
  }
  return caught;
};
