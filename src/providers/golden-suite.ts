/**
 * Test support: the golden-fixture suite every provider family runs (requests, responses,
 * streams, errors) from test/fixtures/providers/<family>/. Not imported by production code.
 *
 * Streams: `.sse` and `.ndjson` files are text; `.frames.json` describes AWS event-stream frames
 * (`[{headers, payload}]`, payload as JSON or text) and is encoded with the test encoder; `.bin`
 * files are raw event-stream bytes.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CanonicalRequest } from '../canonical/types.ts';
import type { GatewayError } from '../core/errors.ts';
import { concatBytes } from '../core/bytes.ts';
import { encodeEventStreamMessage } from './eventstream.ts';
import { createFrameParser } from './framing.ts';
import {
  decodeFrames,
  errorFields,
  FIXTURES,
  fixtureJson,
  fixtureText,
  golden,
  splitBytes,
  withLineEndings,
  type StreamOutcome,
} from './golden.ts';
import { asRecord, isRecord } from './json.ts';
import type { Framing, HttpProviderAdapter, TokenHttp, UpstreamFrame, UpstreamHttpRequest, UpstreamTarget } from './types.ts';

export interface RequestCase {
  name: string;
  target: UpstreamTarget;
  request: CanonicalRequest;
}

export interface ErrorCase {
  name: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

export const thrown = async (f: () => unknown): Promise<unknown> => {
  try {
    await f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
};

/** Frames bytes with the given framing, fed in the given chunks. */
export const frameWith = (framing: Framing, chunks: readonly (Uint8Array | string)[]): UpstreamFrame[] => {
  const parser = createFrameParser(framing);
  const frames: UpstreamFrame[] = [];
  for (const c of chunks) frames.push(...parser.push(c));
  frames.push(...parser.flush());
  return frames;
};

/** `[{headers, payload}]` → event-stream bytes. */
export const encodeFrames = (spec: unknown): Uint8Array => {
  const frames = Array.isArray(spec) ? spec : [];
  return concatBytes(
    frames.map((f: unknown) => {
      const o = asRecord(f) ?? {};
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(asRecord(o['headers']) ?? {})) if (typeof v === 'string') headers[k] = v;
      const payload = o['payload'];
      return encodeEventStreamMessage(headers, typeof payload === 'string' ? payload : JSON.stringify(payload ?? {}));
    }),
  );
};

export const streamBytes = (family: string, file: string): Uint8Array => {
  if (file.endsWith('.frames.json')) return encodeFrames(fixtureJson(family, file));
  if (file.endsWith('.bin')) return new Uint8Array(readFileSync(join(FIXTURES, family, file)));
  return new TextEncoder().encode(fixtureText(family, file));
};

/** A token endpoint stand-in: records calls and answers from `reply`. */
export const fakeHttp = (reply: (req: UpstreamHttpRequest) => { status: number; body: string }) => {
  const calls: UpstreamHttpRequest[] = [];
  const http: TokenHttp = (req) => {
    calls.push(req);
    return Promise.resolve(reply(req));
  };
  return { http, calls };
};

export interface SuiteOptions {
  family: string;
  adapter: HttpProviderAdapter;
  /** Run `authorize` with this token endpoint and keep its headers in the golden file. */
  authorizeWith?: TokenHttp;
  /** Header names allowed to carry the connection key (default: none besides `authorization`). */
  keyHeaders?: readonly string[];
  responses?: readonly string[];
  streams?: readonly string[];
  errors?: boolean;
}

const built = async (o: SuiteOptions, c: RequestCase): Promise<UpstreamHttpRequest> => {
  const r = o.adapter.buildRequest(c.request, c.target);
  return o.authorizeWith && o.adapter.authorize ? o.adapter.authorize(r, c.target, o.authorizeWith) : r;
};

const view = (r: UpstreamHttpRequest): unknown => ({
  url: r.url,
  method: r.method,
  headers: r.headers,
  body: JSON.parse(r.body) as unknown,
});

/** Registers the golden tests for one family. Await it at the top level of the test file. */
export const goldenSuite = async (o: SuiteOptions): Promise<void> => {
  const cases = fixtureJson(o.family, 'requests.json') as RequestCase[];
  const actual: Record<string, unknown> = {};
  const requests = new Map<string, UpstreamHttpRequest>();
  for (const c of cases) {
    const r = await built(o, c);
    requests.set(c.name, r);
    actual[c.name] = view(r);
  }
  const expected = asRecord(golden(actual, o.family, 'requests.expected.json')) ?? {};
  const keyHeaders = new Set(['authorization', ...(o.keyHeaders ?? [])]);

  describe(`${o.family} buildRequest (golden)`, () => {
    for (const c of cases) {
      test(c.name, () => {
        expect(actual[c.name]).toEqual(expected[c.name]);
        const r = requests.get(c.name);
        const key = c.target.connection.apiKey;
        if (!r || key === undefined || key === '') return;
        expect(r.body).not.toContain(key);
        expect(r.url).not.toContain(key);
        for (const [name, value] of Object.entries(r.headers)) if (!keyHeaders.has(name.toLowerCase())) expect(value).not.toContain(key);
      });
    }
  });

  describe(`${o.family} parseResponse (golden)`, () => {
    for (const name of o.responses ?? []) {
      test(name, () => {
        const r = { ...o.adapter.parseResponse(fixtureText(o.family, `${name}.json`)), created: 0 };
        expect(r).toEqual(golden(r, o.family, `${name}.expected.json`) as typeof r);
      });
    }
  });

  describe(`${o.family} stream decoder (golden)`, () => {
    for (const file of o.streams ?? []) {
      const name = file.replace(/\.(sse|ndjson|frames\.json|bin)$/, '');
      test(name, () => {
        const bytes = streamBytes(o.family, file);
        const decode = (chunks: readonly (Uint8Array | string)[]): StreamOutcome => {
          const decoder = o.adapter.createStreamDecoder();
          try {
            return decodeFrames(decoder, frameWith(o.adapter.framing, chunks));
          } catch (e) {
            return { events: [], error: errorFields(e) };
          }
        };
        const outcome = decode([bytes]);
        expect(outcome).toEqual(golden(outcome, o.family, `${name}.expected.json`) as StreamOutcome);
        for (const sizes of [[1], [2, 3, 5], [7, 1, 64], [4096]]) expect(decode(splitBytes(bytes, sizes))).toEqual(outcome);
        if (o.adapter.framing !== 'aws-eventstream') {
          const text = new TextDecoder().decode(bytes);
          for (const eol of ['\r\n', '\r'] as const) expect(decode([withLineEndings(text, eol)])).toEqual(outcome);
        }
      });
    }
  });

  if (o.errors === false) return;
  const errorCases = fixtureJson(o.family, 'errors.json') as ErrorCase[];
  const errs: Record<string, unknown> = {};
  const raw = new Map<string, GatewayError>();
  for (const c of errorCases) {
    const e = o.adapter.parseError(c.status, c.body, new Headers(c.headers));
    raw.set(c.name, e);
    errs[c.name] = { ...errorFields(e), upstreamBody: e.upstreamBody };
  }
  const expectedErrors = asRecord(golden(errs, o.family, 'errors.expected.json')) ?? {};
  describe(`${o.family} parseError (golden)`, () => {
    for (const c of errorCases) {
      test(c.name, () => {
        expect(errs[c.name]).toEqual(expectedErrors[c.name]);
        const e = raw.get(c.name);
        expect(e?.upstreamStatus).toBe(c.status);
        expect(isRecord(errs[c.name])).toBe(true);
        expect((e?.upstreamBody ?? '').length).toBeLessThanOrEqual(2000);
      });
    }
  });
};
