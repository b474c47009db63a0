import { afterAll, beforeAll, expect, test } from 'bun:test';
import { admin } from './support/gateway.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';
import { type Fuzzed, fuzzRequests, mulberry32 } from './support/fuzz-bodies.ts';

/**
 * Fuzz of the inference API (issue 7, "Done means"): thousands of generated bodies — hostile
 * strings, deep nesting, extreme numbers, wrong types, broken JSON — sent to every endpoint with a
 * valid key. Seeded (FUZZ_SEED) and bounded (FUZZ_COUNT). Every answer must be a non-5xx in the
 * error format (or a success), carry X-Request-ID, and afterwards ordinary requests must still be
 * served and recorded.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const COUNT = Number(process.env.FUZZ_COUNT ?? 2500);
const CONCURRENCY = 16;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let world: World | undefined;
beforeAll(async () => {
  world = await startWorld();
}, 60_000);
afterAll(() => stopWorld(world));

interface Failure {
  i: number;
  path: string;
  status: number;
  why: string;
  body: string;
}

const check = async (base: string, key: string, f: Fuzzed, i: number): Promise<Failure | undefined> => {
  const res = await fetch(`${base}${f.path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: f.body,
  });
  const text = await res.text();
  const fail = (why: string): Failure => ({ i, path: f.path, status: res.status, why, body: text.slice(0, 300) });
  if (!UUID.test(res.headers.get('x-request-id') ?? '')) return fail('no X-Request-ID');
  if (res.status >= 500) return fail('5xx');
  if (res.status >= 400) {
    let parsed: { error?: { message?: unknown; type?: unknown; code?: unknown } };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      return fail('error body is not JSON');
    }
    const e = parsed.error;
    if (!e || typeof e.message !== 'string' || typeof e.type !== 'string' || typeof e.code !== 'string')
      return fail('not the error format');
  }
  return undefined;
};

test(`fuzz: ${COUNT} hostile bodies (seed ${SEED}) → no 5xx, error format, X-Request-ID; ordinary requests still recorded`, async () => {
  const w = world as World;
  const rand = mulberry32(SEED);
  const cases = fuzzRequests(rand, COUNT, ['gpt-mini', 'claude-mini', 'no-such-model']);
  const failures: Failure[] = [];
  let next = 0;
  const statuses = new Map<number, number>();
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const f = cases[i] as Fuzzed;
      const r = await check(w.tg.url, w.p.apiKey, f, i).catch((e: unknown) => ({
        i,
        path: f.path,
        status: 0,
        why: `transport: ${e instanceof Error ? e.message : String(e)}`,
        body: '',
      }));
      if (r) failures.push(r);
      else statuses.set(0, (statuses.get(0) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  if (failures.length > 0) console.error(JSON.stringify(failures.slice(0, 10), null, 1));
  expect(failures).toEqual([]);

  // Afterwards: ordinary requests are served and every one of them is recorded.
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const clientId = `after-fuzz-${SEED}-${i}`;
    const res = await fetch(`${w.tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.p.apiKey}`, 'content-type': 'application/json', 'x-client-request-id': clientId },
      body: JSON.stringify({ model: i % 2 ? 'gpt-mini' : 'claude-mini', messages: [{ role: 'user', content: `ordinary ${i}` }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    ids.push(clientId);
  }
  const deadline = Date.now() + 15_000;
  let missing = ids;
  while (missing.length > 0 && Date.now() < deadline) {
    await w.tg.gw.records.flush();
    const found: string[] = [];
    for (const id of missing) {
      const r = (await w.tg.must(admin('SearchRequestRecords'), { clientRequestId: id })) as { records: unknown[] };
      if (r.records.length > 0) found.push(id);
    }
    missing = missing.filter((id) => !found.includes(id));
    if (missing.length > 0) await Bun.sleep(200);
  }
  expect(missing).toEqual([]);
}, 240_000);
