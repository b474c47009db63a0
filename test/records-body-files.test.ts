import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { RecordEntry } from '../src/core/records.ts';
import { generateKek } from '../src/core/secrets.ts';
import { BodyFiles, parseBodiesAt, readBodies } from '../src/records/body-files.ts';
import { admin } from './support/gateway.ts';
import { provision, type Provisioned, stopWorld, type World } from './support/provision.ts';
import { startMockUpstream } from './support/mock-upstreams.ts';
import { startTestGateway } from './support/gateway.ts';

/**
 * Bodies beside the rows (issue 12): with the embedded store in a data directory, request and
 * response bodies are appended to segment files and the row keeps `bodies_at`; a search reads
 * them back. Unit tests of the files, then the gateway end to end, across a restart.
 */

const dirs: string[] = [];
const tempDir = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const entry = (requestBody: string | null, responseBody: string | null, sanitized: string | null = null): RecordEntry => ({
  row: { request_id: '00000000-0000-4000-8000-000000000001', endpoint: '/v1/chat/completions' },
  requestBody,
  responseBody,
  sanitized,
});
const atOf = (e: RecordEntry): string => String(e.row.bodies_at);

describe('BodyFiles', () => {
  test('bodies are appended, the row keeps where they are, and they read back as sent (UTF-8, a body not kept is null)', async () => {
    const dir = tempDir('gw-bodies-');
    const files = new BodyFiles(dir);
    const a = files.keep(entry('{"messages":[{"content":"héllo ✓ 🙂"}]}', '{"ok":true}'));
    const b = files.keep(entry('{"n":2}', null, 'usage'));
    const none = entry(null, null);
    expect(files.keep(none)).toBe(none);
    expect(a.requestBody).toBeNull();
    expect(a.responseBody).toBeNull();
    expect(b.sanitized).toBe('usage');
    await files.flush();
    expect(await readBodies(dir, atOf(a))).toEqual({ requestBody: { messages: [{ content: 'héllo ✓ 🙂' }] }, responseBody: { ok: true } });
    expect(await readBodies(dir, atOf(b))).toEqual({ requestBody: { n: 2 }, responseBody: null });
    expect(atOf(b).endsWith(':-1')).toBe(true);
    await files.close();
  });

  test('ill-formed text is made well-formed and flagged; segments rotate by size; a new writer starts its own segment', async () => {
    const dir = tempDir('gw-bodies-');
    const files = new BodyFiles(dir, { segmentBytes: 64 });
    const lone = files.keep(entry(`{"t":"a${'\ud800'}b"}`, null));
    expect(lone.sanitized).toBe('text');
    const big = files.keep(entry(`{"t":"${'x'.repeat(100)}"}`, '{"r":1}'));
    const next = files.keep(entry('{"t":"after"}', null));
    await files.close();
    const segments = new Set([lone, big, next].map((e) => parseBodiesAt(atOf(e))?.segment));
    expect(segments.size).toBe(3);
    expect((await readBodies(dir, atOf(lone))).requestBody).toEqual({ t: 'a\ufffdb' });
    expect((await readBodies(dir, atOf(big))).responseBody).toEqual({ r: 1 });
    const again = new BodyFiles(dir);
    const later = again.keep(entry('{"t":"later"}', null));
    await again.close();
    expect(segments.has(parseBodiesAt(atOf(later))?.segment)).toBe(false);
    expect((await readBodies(dir, atOf(next))).requestBody).toEqual({ t: 'after' });
    expect((await readBodies(dir, atOf(later))).requestBody).toEqual({ t: 'later' });
  });

  test('what cannot be read gives a marker, never an error: missing or cut segment, malformed or escaping reference', async () => {
    const dir = tempDir('gw-bodies-');
    const files = new BodyFiles(dir);
    const e = files.keep(entry('{"a":1}', '{"b":2}'));
    await files.close();
    const p = parseBodiesAt(atOf(e));
    expect(p).toBeDefined();
    const marker = { omitted: 'body file not readable' };
    truncateSync(join(dir, p?.segment ?? ''), 7);
    expect(await readBodies(dir, atOf(e))).toEqual({ requestBody: { a: 1 }, responseBody: marker });
    expect(await readBodies(dir, 'zzzz.bodies:0:7:7')).toEqual({ requestBody: marker, responseBody: marker });
    for (const bad of ['../../etc/passwd:0:1:1', 'x.bodies:0:1', 'x.bodies:-5:1:1', 'x.bodies:a:1:1', '']) {
      expect(parseBodiesAt(bad)).toBeUndefined();
      expect(await readBodies(dir, bad)).toEqual({ requestBody: marker, responseBody: marker });
    }
  });

  test('when the files fail, the bodies stay in the row', async () => {
    const dir = tempDir('gw-bodies-');
    const files = new BodyFiles(join(dir, 'sub'));
    rmSync(join(dir, 'sub'), { recursive: true, force: true });
    const kept = files.keep(entry('{"a":1}', '{"b":2}'));
    await files.flush();
    const after = files.keep(entry('{"c":3}', null));
    // Either the append itself failed (the entry is returned unchanged) or its flush did, and every later body stays in its row.
    expect(files.failed).toBe(true);
    expect(after.requestBody).toBe('{"c":3}');
    if (kept.requestBody === null) expect(atOf(kept)).toContain('.bodies:');
    await files.close();
  });
});

describe('the embedded gateway in a data directory', () => {
  const dataDir = tempDir('gw-bodies-dir-');
  const oa = startMockUpstream('openai');
  const an = startMockUpstream('anthropic');
  let world: World | undefined;
  let p: Provisioned;
  // The embedded store whatever TEST_DATABASE_URL says: this is its own storage.
  const env = { GATEWAY_DATA_DIR: dataDir, DATABASE_URL: '', GATEWAY_KEK: generateKek() };

  beforeAll(async () => {
    const tg = await startTestGateway(env);
    p = await provision(tg, { openaiUrl: oa.url, anthropicUrl: an.url });
    world = { tg, oa, an, p };
  }, 120_000);
  afterAll(async () => {
    await stopWorld(world);
  });

  const search = async (requestId: string) => {
    if (!world) throw new Error('the world did not start');
    return (
      (await world.tg.must(admin('SearchRequestRecords'), { requestId })) as {
        records: { requestBody: unknown; responseBody: unknown; usage: { totalTokens: number } }[];
      }
    ).records;
  };

  test('bodies go to files beside the rows, a search returns them, and they survive a restart', async () => {
    const tg = world?.tg;
    if (!tg) throw new Error('no gateway');
    const body = { model: 'gpt-mini', messages: [{ role: 'user', content: 'keep me beside ✓' }] };
    const res = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { choices: { message: { content: string } }[] };
    const requestId = res.headers.get('x-request-id') ?? '';
    const stream = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    await stream.text();
    const streamId = stream.headers.get('x-request-id') ?? '';

    const [r] = await search(requestId);
    expect(r?.requestBody).toEqual(body);
    expect((r?.responseBody as { choices: { message: { content: string } }[] } | undefined)?.choices[0]?.message.content).toBe(
      answer.choices[0]?.message.content ?? '',
    );
    const [s] = await search(streamId);
    expect(s?.requestBody).toEqual({ ...body, stream: true });
    expect(s?.responseBody).not.toBeNull();

    const rows = (await tg.gw.store.db.execute(
      sql`select request_body, response_body, bodies_at from request_records where request_id = ${requestId}`,
    )) as unknown as { rows: Record<string, unknown>[] };
    expect(rows.rows[0]?.request_body).toBeNull();
    expect(rows.rows[0]?.response_body).toBeNull();
    expect(String(rows.rows[0]?.bodies_at)).toMatch(/^[0-9a-z]+(-\d+)?\.bodies:\d+:\d+:\d+$/);
    const files = readdirSync(join(dataDir, 'record-bodies'));
    expect(files.length).toBeGreaterThan(0);
    expect(files.reduce((n, f) => n + statSync(join(dataDir, 'record-bodies', f)).size, 0)).toBeGreaterThan(JSON.stringify(body).length);

    await tg.stop();
    world = undefined;
    const again = await startTestGateway(env);
    world = { tg: again, oa, an, p };
    const [kept] = await search(requestId);
    expect(kept?.requestBody).toEqual(body);
    expect(kept?.usage.totalTokens).toBe(r?.usage.totalTokens ?? -1);
  }, 120_000);
});
