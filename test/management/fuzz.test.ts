import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mulberry32 } from '../support/fuzz-bodies.ts';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { GHOST, type Fx, OPS } from './op-table.ts';
import { type Body, documentedOps, liveFixture, tableDigest, toSnake } from './support.ts';

/**
 * Fuzz: thousands of random and mutated bodies to every operation. No 500, no hang, every answer
 * is a Connect body, and nothing is stored by a rejected request (a digest of every table is
 * compared before and after each rejected mutation). Reproducible: FUZZ_SEED, FUZZ_ITERATIONS.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const PER_OP = Number(process.env.FUZZ_ITERATIONS ?? 48);

let tg: TestGateway;
let fx: Fx;

beforeAll(async () => {
  tg = await startTestGateway();
  fx = await liveFixture(tg);
}, 60_000);
afterAll(async () => {
  await tg.stop();
});

const rng = mulberry32;

const CHARS = [
  'a',
  'Z',
  '0',
  '-',
  '_',
  '.',
  ' ',
  '/',
  '\\',
  '"',
  "'",
  '%',
  '\u00e9',
  '\u4e2d',
  '\u{1F600}',
  '\u202e',
  '\ud800',
  '\u0000',
  '\n',
  '\t',
  '<',
  '>',
  '{',
  '}',
];

const fuzzer = (seed: number) => {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
  const str = (max = 40): string => Array.from({ length: int(max) }, () => pick(CHARS)).join('');
  const value = (depth = 0): unknown => {
    switch (int(depth > 2 ? 7 : 10)) {
      case 0:
        return null;
      case 1:
        return r() < 0.5;
      case 2:
        // biome-ignore lint/suspicious/noApproximativeNumericConstant: a fuzz value with few digits, not π.
        return pick([0, -1, 1, 7, 255, 256, 1000, 1001, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e308, -0, 0.5, 3.14159]);
      case 3:
        return pick([
          '',
          'a',
          'A',
          '-',
          '0',
          '9'.repeat(25),
          '1.5',
          'true',
          'null',
          '00000000-0000-4000-8000-000000000000',
          'https://x.example',
          'admin',
          'member',
          'rate-limit',
        ]);
      case 4:
      case 5:
        return str();
      case 6:
        return 'x'.repeat(pick([63, 64, 253, 254, 1024, 1025, 2048, 2049, 5000]));
      case 7:
        return Array.from({ length: int(4) }, () => value(depth + 1));
      case 8:
        return Object.fromEntries(Array.from({ length: int(4) }, () => [str(8), value(depth + 1)]));
      default:
        return Object.fromEntries(Array.from({ length: int(60) }, (_, i) => [`k${i}`, str(10)]));
    }
  };
  const deep = (n: number): unknown => (n === 0 ? 1 : [deep(n - 1)]);
  /** A mutated body, or raw text (not always JSON). */
  const mutate = (base: Body): Body | string => {
    const b: Body = structuredClone(base);
    const keys = Object.keys(b);
    const steps = 1 + int(3);
    for (let s = 0; s < steps; s++) {
      const k = keys.length > 0 ? pick(keys) : 'x';
      switch (int(12)) {
        case 0:
          delete b[k];
          break;
        case 1:
          b[str(10) || 'extra'] = value();
          break;
        case 2:
        case 3:
        case 4:
          b[k] = value();
          break;
        case 5:
          b[k] = typeof b[k] === 'string' ? `${b[k] as string}${str(5)}` : str(5);
          break;
        case 6:
          b[k] = deep(int(2) === 0 ? 40 : 600);
          break;
        case 7:
          return toSnake(b) as Body;
        case 8:
          return pick([
            '',
            'null',
            '[]',
            '"x"',
            '42',
            '{',
            '{"a":1,}',
            '\u0000',
            '{"customerId":"a","customerId":"b"}',
            '{"__proto__":{"customerId":"x"}}',
            '{"constructor":{"name":"x"},"toString":1}',
            JSON.stringify(b).slice(0, int(20)),
          ]);
        case 9:
          return JSON.stringify(value());
        case 10:
          b.labels = value();
          break;
        default:
          b[k] = Array.from({ length: int(40) }, () => value(2));
      }
    }
    return b;
  };
  return { mutate, r };
};

const mutating = (path: string): boolean => !/\/(Get|List|Search)[A-Za-z]*$/.test(path);
const destructive = (path: string): boolean => /\/(Delete|Remove|Detach|Revoke)[A-Za-z]*$/.test(path);

test('fuzz: random and mutated bodies to every operation — no 500, no hang, nothing stored when rejected', async () => {
  const documented = await documentedOps(tg);
  const ordered = [...OPS].sort((a, b) => Number(destructive(a.path)) - Number(destructive(b.path)));
  expect(new Set(ordered.map((o) => o.path))).toEqual(new Set([...documented.keys()]));
  const { mutate } = fuzzer(SEED);
  const failures: string[] = [];
  let baseline = await tableDigest(tg);
  let sent = 0;
  let rejected = 0;
  const histogram: Record<number, number> = {};
  for (const c of ordered) {
    for (let i = 0; i < PER_OP; i++) {
      const body = mutate(c.base(i % 4 === 0 ? GHOST : fx));
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      sent++;
      let status = 0;
      let parsed: Body = {};
      try {
        const res = await fetch(`${tg.adminUrl}${c.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
          body: text,
          signal: AbortSignal.timeout(10_000),
        });
        status = res.status;
        parsed = (await res.json()) as Body;
      } catch (e) {
        failures.push(`${c.path} ${text.slice(0, 200)}: ${String(e)}`);
        continue;
      }
      histogram[status] = (histogram[status] ?? 0) + 1;
      if (status >= 500) failures.push(`${c.path} → ${status} ${JSON.stringify(parsed)} for ${text.slice(0, 300)}`);
      if (status !== 200 && (typeof parsed.code !== 'string' || typeof parsed.message !== 'string'))
        failures.push(`${c.path} → ${status}: not a Connect error body`);
      if (!mutating(c.path)) continue;
      const after = await tableDigest(tg);
      if (status === 200) {
        baseline = after;
        continue;
      }
      rejected++;
      const changed = Object.keys(after).filter((t) => after[t] !== baseline[t]);
      if (changed.length > 0) {
        failures.push(`${c.path} → ${status} but changed ${changed.join(', ')} for ${text.slice(0, 300)}`);
        baseline = after;
      }
    }
  }
  console.log(`fuzz seed ${SEED}: ${sent} requests, statuses ${JSON.stringify(histogram)}`);
  if (failures.length > 0) console.error(`fuzz seed ${SEED}:\n${failures.slice(0, 30).join('\n')}`);
  expect(failures).toEqual([]);
  expect(sent).toBe(OPS.length * PER_OP);
  expect(rejected).toBeGreaterThan(sent / 3);
}, 240_000);
