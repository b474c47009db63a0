/**
 * Golden fixtures for the three client formats (test/fixtures/formats):
 *   <fmt>/requests/<name>.request.json   → decodeRequest → <name>.canonical.json
 *   canonical/responses/<name>.json      → encodeResponse → <fmt>/responses/<name>.json
 *   canonical/streams/<name>.json        → stream encoder → <fmt>/streams/<name>.sse.txt
 *                                          (Chat also <name>.include-usage.sse.txt)
 * `UPDATE_GOLDEN=1 bun test src/formats/golden.test.ts` rewrites the encoder outputs (review the diff!).
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CanonicalResponse } from '../canonical/types.ts';
import { GatewayError } from '../core/errors.ts';
import { codecFor } from './registry.ts';
import { FIXTURES, goldenCtx, loadStreamFixture, readJson, runStream } from './test-support.ts';

const ROOT = FIXTURES;
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const FORMATS = [
  { dir: 'chat', codec: codecFor('chat') },
  { dir: 'responses', codec: codecFor('responses') },
  { dir: 'messages', codec: codecFor('messages') },
] as const;

const names = (dir: string, suffix: string): string[] =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith(suffix))
    .map((f) => f.slice(0, -suffix.length))
    .sort();

/** Compares with the golden file, or (re)writes it under UPDATE_GOLDEN=1. */
const golden = (relPath: string, actual: string): void => {
  const path = join(ROOT, relPath);
  if (UPDATE || !existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, actual);
    if (!UPDATE) throw new Error(`golden file ${relPath} was missing and has been written; review it and re-run`);
  }
  expect(actual).toBe(readFileSync(path, 'utf8'));
};

for (const { dir, codec } of FORMATS) {
  describe(`${dir} golden`, () => {
    for (const name of names(`${dir}/requests`, '.request.json')) {
      test(`request ${name}`, () => {
        const body = readJson(join(ROOT, dir, 'requests', `${name}.request.json`));
        const expected = readJson(join(ROOT, dir, 'requests', `${name}.canonical.json`));
        expect(codec.decodeRequest(body)).toEqual(expected as never);
      });
    }

    for (const name of names('canonical/responses', '.json')) {
      test(`response ${name}`, () => {
        const res = readJson(join(ROOT, 'canonical/responses', `${name}.json`)) as CanonicalResponse;
        const json = codec.encodeResponse(res, goldenCtx());
        golden(`${dir}/responses/${name}.json`, `${JSON.stringify(json, null, 2)}\n`);
      });
    }

    for (const name of names('canonical/streams', '.json')) {
      const fixture = loadStreamFixture(name);
      test(`stream ${name}`, () => {
        golden(`${dir}/streams/${name}.sse.txt`, runStream(codec, fixture, goldenCtx()));
      });
      if (dir === 'chat') {
        test(`stream ${name} (include_usage)`, () => {
          golden(`${dir}/streams/${name}.include-usage.sse.txt`, runStream(codec, fixture, goldenCtx(true)));
        });
      }
    }
  });
}

describe('encoders are exact about framing', () => {
  test('every stream frame is a complete SSE event and every data line is JSON (except [DONE])', () => {
    for (const { codec } of FORMATS) {
      for (const name of names('canonical/streams', '.json')) {
        const sse = runStream(codec, loadStreamFixture(name), goldenCtx(true));
        expect(sse.endsWith('\n\n')).toBe(true);
        for (const frame of sse.slice(0, -2).split('\n\n')) {
          const lines = frame.split('\n');
          const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
          expect(data).toBeDefined();
          if (data !== '[DONE]') expect(() => JSON.parse(data ?? '')).not.toThrow();
          if (codec.id !== 'chat') {
            const event = lines[0]?.slice('event: '.length);
            expect(lines[0]?.startsWith('event: ')).toBe(true);
            expect((JSON.parse(data ?? '{}') as { type: string }).type).toBe(event ?? '');
          }
        }
      }
    }
  });

  test('Responses sequence numbers are 0,1,2,… in every stream', () => {
    for (const name of names('canonical/streams', '.json')) {
      const sse = runStream(codecFor('responses'), loadStreamFixture(name), goldenCtx());
      const seqs = [...sse.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
      expect(seqs).toEqual(seqs.map((_, i) => i));
    }
  });

  test('nothing is emitted after end() or error()', () => {
    for (const { codec } of FORMATS) {
      const enc = codec.createStreamEncoder(goldenCtx());
      enc.push({ type: 'start', id: 'a', model: 'm' });
      enc.end();
      expect(enc.push({ type: 'text', text: 'late' })).toBe('');
      expect(enc.end()).toBe('');
      expect(enc.error(new GatewayError({ kind: 'internal', message: 'x' }))).toBe('');
    }
  });
});
