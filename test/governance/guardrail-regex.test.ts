import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { GuardrailResources } from '../../src/api/ops/guardrails.ts';
import { compilePattern, unsupportedConstruct } from '../../src/governance/pattern.ts';
import { scanThread } from '../../src/governance/scan-pool.ts';
import { admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstreams.ts';
import { meteredWorld, type World } from './support.ts';

/**
 * Issue 38, item 1: a guardrail regex saved by one customer must not stall another customer's
 * requests. Patterns are RE2 (linear-time matching); what RE2 cannot express is refused at save and
 * at plan naming the construct; checks too large for the event loop run on the scan thread, bounded
 * by GATEWAY_GUARDRAIL_SCAN_TIMEOUT (fail closed).
 */

let tg: TestGateway;
let oa: MockUpstream;
let an: MockUpstream;
let hostile: World;
let victim: World;

beforeAll(async () => {
  oa = startMockUpstream('openai');
  an = startMockUpstream('anthropic');
  tg = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1', GATEWAY_GUARDRAIL_SCAN_TIMEOUT: '400ms' });
  hostile = await meteredWorld(tg, oa.url, an.url, 'hostile', { suffix: '-h' });
  victim = await meteredWorld(tg, oa.url, an.url, 'victim', { suffix: '-v' });
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  oa?.stop();
  an?.stop();
});

const at = (w: World) => ({ customerId: w.customerId, projectId: w.projectId });

const chat = (w: World, model: string, content: string) =>
  fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });

const timed = async <T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> => {
  const t0 = performance.now();
  const value = await run();
  return { value, ms: performance.now() - t0 };
};

describe('patterns are RE2: refused at save and at plan, naming the construct', () => {
  const REFUSED: [string, string][] = [
    ['(?=.*secret)token', 'lookahead'],
    ['token(?!s)', 'negative lookahead'],
    ['(?<=api_)key', 'lookbehind'],
    ['(?<!x)key', 'negative lookbehind'],
    ['(a)\\1', 'backreference'],
    ['(?<w>a)\\k<w>', 'named backreference'],
    ['(?>a+)b', 'atomic group'],
    ['a*+b', 'possessive quantifier'],
  ];

  for (const [pattern, construct] of REFUSED)
    test(`${pattern} → invalid_argument naming "${construct}"; nothing is saved`, async () => {
      const r = await tg.call(admin('CreateGuardrail'), {
        ...at(hostile),
        name: 'refused',
        stage: 'input',
        kind: 'regex',
        pattern,
        action: 'block',
      });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('invalid_argument');
      expect(String(r.body.message)).toContain("'pattern'");
      expect(String(r.body.message)).toContain(construct);
      expect(String(r.body.message)).toContain('RE2');
      const list = (await tg.must(admin('ListGuardrails'), at(hostile))) as { guardrails: { name: string }[] };
      expect(list.guardrails.map((g) => g.name)).not.toContain('refused');
    });

  test('the same constructs inside a character class or escaped are literals, and accepted', () => {
    for (const p of ['[(?=]x', '\\(\\?=x', '[*+]+', '\\\\1']) expect(unsupportedConstruct(p)).toBeUndefined();
    for (const p of ['[(?=]x', '\\(\\?=x', '[*+]+', '\\\\1']) expect(compilePattern(p).ok).toBe(true);
  });

  test('JavaScript spellings RE2 lacks are translated: \\uXXXX, (?<name>…), and (?i) works', () => {
    const c = compilePattern('(?i)caf\\u00e9 (?<n>\\d+)');
    expect(c.ok).toBe(true);
    if (c.ok) expect(c.re.test('CAFÉ 42')).toBe(true);
  });

  test('patterns too long or compiling to too large a program are refused with the limit', () => {
    const long = compilePattern('x'.repeat(1025));
    expect(long.ok ? '' : long.reason).toContain('longer than 1024');
    const big = compilePattern('[a-z]{999}[0-9]{999}x');
    expect(big.ok ? '' : big.reason).toContain('too complex');
  });

  test("the Terraform provider's plan check runs the same function (gateway_guardrail)", () => {
    const check = GuardrailResources.guardrail.terraform?.check;
    expect(check).toBeDefined();
    expect(() => check?.({ stage: 'input', kind: 'regex', pattern: '(?<=a)b', action: 'block', piiTypes: [] })).toThrow(/lookbehind/);
    expect(() => check?.({ stage: 'input', kind: 'regex', pattern: '(a+)+$', action: 'block', piiTypes: [] })).not.toThrow();
  });

  test('an UpdateGuardrail to a refused pattern changes nothing', async () => {
    await tg.must(admin('CreateGuardrail'), {
      ...at(hostile),
      name: 'upd',
      stage: 'input',
      kind: 'regex',
      pattern: 'TOPSECRET',
      action: 'block',
    });
    const r = await tg.call(admin('UpdateGuardrail'), { ...at(hostile), name: 'upd', pattern: '(TOP)\\1' });
    expect(r.status).toBe(400);
    const got = (await tg.must(admin('GetGuardrail'), { ...at(hostile), name: 'upd' })) as { guardrail: { pattern: string } };
    expect(got.guardrail.pattern).toBe('TOPSECRET');
    await tg.must(admin('DeleteGuardrail'), { ...at(hostile), name: 'upd' });
  });
});

describe('a hostile pattern does not stall another customer', () => {
  test('(a+)+$ saves; four crafted requests (short and 2 MB) leave another customer’s plain request fast', async () => {
    await tg.must(admin('CreateGuardrail'), {
      ...at(hostile),
      name: 'evil',
      stage: 'input',
      kind: 'regex',
      pattern: '(a+)+$',
      action: 'block',
    });
    await tg.must(admin('CreateGuardrail'), {
      ...at(hostile),
      name: 'evil-redact',
      stage: 'input',
      kind: 'regex',
      pattern: '(x+x+)+y',
      action: 'redact',
    });
    const baseline = await timed(() => chat(victim, 'metered-v', 'hello').then((r) => r.status));
    expect(baseline.value).toBe(200);
    const before = scanThread.offloaded;
    const crafted = [`${'a'.repeat(40)}!`, `${'x'.repeat(5000)}!`, `${'a'.repeat(2 << 20)}!`, `${'x'.repeat(2 << 20)}!`];
    const attacks = crafted.map((c) => timed(() => chat(hostile, 'metered-h', c).then((r) => r.status)));
    await Bun.sleep(5);
    const during = await timed(() => chat(victim, 'metered-v', 'hello').then((r) => r.status));
    const done = await Promise.all(attacks);
    expect(during.value).toBe(200);
    // None of the crafted texts matches (they end in '!'): each is served.
    expect(done.map((d) => d.value)).toEqual([200, 200, 200, 200]);
    // On the backtracking engine the same requests held the event loop for seconds (6.17 s seen).
    expect(during.ms).toBeLessThan(1000);
    // The two 2 MB texts were checked on the scan thread, not on the event loop.
    expect(scanThread.offloaded - before).toBeGreaterThanOrEqual(2);
    // The pattern still blocks what it matches, inline and on the scan thread.
    expect((await chat(hostile, 'metered-h', 'aaaa')).status).toBe(400);
    expect((await chat(hostile, 'metered-h', 'a'.repeat(1 << 20))).status).toBe(400);
    await tg.must(admin('DeleteGuardrail'), { ...at(hostile), name: 'evil' });
    await tg.must(admin('DeleteGuardrail'), { ...at(hostile), name: 'evil-redact' });
  }, 60_000);

  test('a check past GATEWAY_GUARDRAIL_SCAN_TIMEOUT refuses the request (fail closed) without stalling others', async () => {
    // A redaction must locate matches: with a large program that is the slowest linear path (~ms per KB).
    await tg.must(admin('CreateGuardrail'), {
      ...at(hostile),
      name: 'slow',
      stage: 'input',
      kind: 'regex',
      pattern: '(?:.*a){40}',
      action: 'redact',
    });
    const sent = oa.requests.length;
    const attack = timed(() => chat(hostile, 'metered-h', 'ab'.repeat(1 << 20)));
    await Bun.sleep(5);
    const during = await timed(() => chat(victim, 'metered-v', 'hello').then((r) => r.status));
    const refused = await attack;
    expect(refused.value.status).toBe(400);
    const body = await refused.value.text();
    expect(body).toContain('guardrail_blocked');
    expect(body).toContain('could not be checked within 400 ms');
    expect(during.value).toBe(200);
    expect(during.ms).toBeLessThan(1000);
    // Only the victim's request reached the upstream.
    expect(oa.requests.length - sent).toBe(1);
    expect(scanThread.timeouts).toBeGreaterThanOrEqual(1);
    // The scan thread is started again: the next large check works.
    await tg.must(admin('DeleteGuardrail'), { ...at(hostile), name: 'slow' });
    await tg.must(admin('CreateGuardrail'), {
      ...at(hostile),
      name: 'word',
      stage: 'input',
      kind: 'regex',
      pattern: 'TOPSECRET',
      action: 'redact',
    });
    const big = await chat(hostile, 'metered-h', `${'z'.repeat(1 << 20)} TOPSECRET`);
    expect(big.status).toBe(200);
    const up = JSON.stringify(oa.requests.at(-1)?.body);
    expect(up).toContain('[REDACTED:word]');
    expect(up).not.toContain('TOPSECRET');
    await tg.must(admin('DeleteGuardrail'), { ...at(hostile), name: 'word' });
  }, 60_000);

  test('text past the first MiB is checked too (a long prefix does not hide a match)', async () => {
    await tg.must(admin('CreateGuardrail'), {
      ...at(hostile),
      name: 'tail',
      stage: 'input',
      kind: 'pii',
      piiTypes: ['email'],
      action: 'block',
    });
    const r = await chat(hostile, 'metered-h', `${'lorem ipsum '.repeat(200_000)} mail me: bob@example.com`);
    expect(r.status).toBe(400);
    expect(await r.text()).toContain("'tail'");
    await tg.must(admin('DeleteGuardrail'), { ...at(hostile), name: 'tail' });
  }, 60_000);
});
