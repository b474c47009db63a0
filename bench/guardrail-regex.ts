/**
 * Worst-case guardrail patterns (issue 38, item 1): what a tenant's pattern costs before (the
 * JavaScript backtracking engine the gateway used) and after (RE2 via re2js, with checks too large
 * for the event loop sent to the scan thread), and how long the event loop is held meanwhile.
 *
 *   bun bench/guardrail-regex.ts [--mib 1]
 *
 * Prints one JSON line per pattern: the old engine's time on a short crafted text (it grows ×2 per
 * character), the new engine's time to evaluate block and redact rules on a long text, and the
 * longest pause of the event loop while four such checks run through `evaluateBounded`.
 */
import { evaluate } from '../src/governance/evaluate.ts';
import type { GuardrailRule } from '../src/governance/guardrail-scan.ts';
import { compilePattern } from '../src/governance/pattern.ts';
import { evaluateBounded, scanThread } from '../src/governance/scan-pool.ts';

const mibArg = process.argv.indexOf('--mib');
const MIB = mibArg > 0 ? Number(process.argv[mibArg + 1]) : 1;
const LONG = Math.round(MIB * (1 << 20));
scanThread.timeoutMs = 120_000;

const CASES: { pattern: string; crafted: (n: number) => string }[] = [
  { pattern: '(a+)+$', crafted: (n) => `${'a'.repeat(n)}!` },
  { pattern: '(a|aa)+$', crafted: (n) => `${'a'.repeat(n)}!` },
  { pattern: '(\\w+\\s?)*$', crafted: (n) => `${'word '.repeat(n / 5)}!` },
  { pattern: '(x+x+)+y', crafted: (n) => 'x'.repeat(n) },
  { pattern: '(?:.*a){40}', crafted: (n) => 'ab'.repeat(n) },
  { pattern: '[a-z]{999}[0-9]{990}', crafted: (n) => 'a'.repeat(n) },
];

const rule = (pattern: string, action: 'block' | 'redact'): GuardrailRule => {
  const c = compilePattern(pattern);
  if (!c.ok) throw new Error(`${pattern}: ${c.reason}`);
  return { name: 'r', stage: 'input', kind: 'regex', regex: c.re, pattern, programSize: c.programSize, piiTypes: [], action };
};

/** The old engine's slowest run on crafted texts of growing length (ms), stopping once one run passes 2 s. */
const oldEngine = (pattern: string, crafted: (n: number) => string): { chars: number; ms: number } => {
  const re = new RegExp(pattern, 'gu');
  let worst = { chars: 0, ms: 0 };
  for (let n = 16; n <= 4096; n += n < 64 ? 2 : n) {
    const t0 = performance.now();
    re.lastIndex = 0;
    re.exec(crafted(n));
    const ms = performance.now() - t0;
    if (ms > worst.ms) worst = { chars: n, ms };
    if (ms > 2000) break;
  }
  return worst;
};

/** The longest gap between timer ticks (ms) while `run` is pending. */
const loopPause = async (run: () => Promise<unknown>): Promise<number> => {
  let worst = 0;
  let at = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - at);
    at = now;
  }, 1);
  await run();
  clearInterval(timer);
  return Math.max(0, worst - 1);
};

for (const { pattern, crafted } of CASES) {
  const before = oldEngine(pattern, crafted);
  const long = crafted(LONG).slice(0, LONG);
  const out: Record<string, unknown> = { pattern, old_engine: { crafted_chars: before.chars, ms: Math.round(before.ms) } };
  for (const action of ['block', 'redact'] as const) {
    const r = rule(pattern, action);
    Bun.gc(true);
    const pauseMs = await loopPause(() => Promise.all([0, 1, 2, 3].map(() => Promise.resolve(evaluateBounded([r], [long])))));
    Bun.gc(true);
    const t0 = performance.now();
    evaluate([r], [long]);
    const evalMs = performance.now() - t0;
    out[action] = {
      program: r.programSize,
      text_chars: long.length,
      evaluate_ms: Math.round(evalMs),
      four_bounded_max_loop_pause_ms: Math.round(pauseMs),
    };
  }
  console.log(JSON.stringify(out));
}
process.exit(0);
