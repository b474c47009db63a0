import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { checkBody } from '../bench/lib/probe.ts';
import { type Service, spawnService } from '../bench/lib/proc.ts';
import { floorRequests, type Kind } from '../bench/lib/requests.ts';
import { floorCommand } from '../bench/lib/targets.ts';
import { responseEnd, runSequential } from '../bench/lib/sequential.ts';
import { DEFAULT_MOCK, type MockServer, startMock } from '../bench/mock-upstream.ts';

/**
 * The product floor of `bun run bench` (issue 40): bench/product-proxy.ts is the shared floor byte
 * for byte, the bench drives it as the floor harness does and it serves the bench's own requests,
 * shipping records with both bodies; and the sequential client behind the one-connection latency.
 */

const ROOT = resolve(import.meta.dir, '..');
const COPY = join(ROOT, 'bench', 'product-proxy.ts');
const SHARED = join('shared', 'bench', 'product-proxy.ts');

/** `../shared` beside the repository root — of this checkout, and of the main checkout when this is a git worktree. */
const sharedCandidates = (): string[] => {
  const out = [join(ROOT, '..', SHARED)];
  try {
    const common = Bun.spawnSync(['git', 'rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: ROOT })
      .stdout.toString()
      .trim();
    if (common) out.push(join(dirname(common), '..', SHARED));
  } catch {
    // No git: only this checkout's neighbour is looked for.
  }
  return [...new Set(out)];
};
const candidates = sharedCandidates();
const shared = candidates.find((p) => existsSync(p));

describe('bench/product-proxy.ts', () => {
  if (shared) {
    test(`is ../${SHARED} byte for byte`, () => {
      // As text first, for a readable diff; then the bytes (line endings, a final newline).
      expect(readFileSync(COPY, 'utf8')).toBe(readFileSync(shared, 'utf8'));
      expect(readFileSync(COPY).equals(readFileSync(shared))).toBe(true);
    });
  } else {
    test.skip(`is ../${SHARED} byte for byte — skipped: not found at ${candidates.join(' or ')} (a clean clone has no ../shared)`, () => {});
  }
});

describe('the product floor as the bench drives it', () => {
  let mock: MockServer;
  let front: ReturnType<typeof Bun.serve>;
  const batches: Uint8Array[] = [];
  const proxies: Service[] = [];
  const urls: Record<'json' | 'raw', string> = { json: '', raw: '' };

  beforeAll(async () => {
    mock = startMock(0, '127.0.0.1', DEFAULT_MOCK);
    const mockUrl = `http://127.0.0.1:${mock.port}`;
    // In front of the mock: keeps what the floor ships to /records-sink, passes the rest through.
    front = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        const path = new URL(req.url).pathname;
        const body = await req.bytes();
        if (path === '/records-sink') {
          batches.push(body);
          return new Response(null, { status: 204 });
        }
        return fetch(`${mockUrl}${path}`, { method: 'POST', headers: req.headers, body });
      },
    });
    for (const bodies of ['json', 'raw'] as const) {
      const s = await spawnService(`floor-${bodies}`, floorCommand(`http://127.0.0.1:${front.port}`, bodies), { ready: /"port":(\d+)/ });
      proxies.push(s.service);
      urls[bodies] = `http://127.0.0.1:${s.match[1]}`;
    }
  });

  afterAll(async () => {
    for (const p of proxies) await p.stop();
    front?.stop(true);
    mock?.stop();
  });

  const send = async (url: string, kind: Kind): Promise<{ sent: string; text: string }> => {
    const r = floorRequests(kind)?.[0];
    if (!r) throw new Error(`no ${kind} request for the floor`);
    const res = await fetch(`${url}${r.path}`, { method: 'POST', headers: r.headers, body: r.body });
    const text = await res.text();
    expect(checkBody(kind === 'chat-sse' ? 'chat' : 'json', res.status, text)).toBeUndefined();
    return { sent: r.body, text };
  };

  const nextBatch = async (): Promise<Uint8Array> => {
    for (let i = 0; i < 100 && batches.length === 0; i++) await Bun.sleep(20);
    const b = batches.shift();
    if (!b) throw new Error('the floor shipped no record batch within 2 s');
    return b;
  };

  test('serves the bench requests it is measured with (chat, chat stream; nothing else) and ships a record per request with both bodies', async () => {
    expect(floorRequests('messages-sse')).toBeUndefined();
    const plain = await send(urls.json, 'chat-json');
    const streamed = await send(urls.json, 'chat-sse');
    // Batches close every 100 ms: the two records may come in one or in two.
    const records: unknown[] = [];
    while (records.length < 2) records.push(...(JSON.parse(new TextDecoder().decode(await nextBatch())) as unknown[]));
    expect(records).toMatchObject([
      { stream: false, status: 200, input: 24, requestBody: plain.sent, responseBody: plain.text },
      { stream: true, status: 200, input: 24, requestBody: streamed.sent, responseBody: streamed.text },
    ]);
    const out = (records as { output: number }[]).map((r) => r.output);
    expect(out.every((n) => n > 0)).toBe(true); // usage read from the answer and from the stream's tail
  });

  test('with raw bodies: the record batch is framed bytes, the bodies as received', async () => {
    const plain = await send(urls.raw, 'chat-json');
    const batch = Buffer.from(await nextBatch());
    const frames: string[] = [];
    for (let at = 0; at < batch.length; ) {
      const n = batch.readUInt32BE(at);
      frames.push(batch.subarray(at + 4, at + 4 + n).toString('utf8'));
      at += 4 + n;
    }
    expect(frames).toHaveLength(3);
    expect(JSON.parse(frames[0] ?? '')).toMatchObject({ stream: false, status: 200, input: 24 });
    expect(frames.slice(1)).toEqual([plain.sent, plain.text]);
  });

  test("the mock upstream accepts the floor's record batches", async () => {
    const res = await fetch(`http://127.0.0.1:${mock.port}/records-sink`, { method: 'POST', body: '[]' });
    expect(res.status).toBe(204);
  });
});

describe('sequential requests on one connection (the one-connection latency of `bun run bench`)', () => {
  test('finds the end of a response by Content-Length, by the last chunk, or at the head without a body', () => {
    const fixed = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1');
    expect(responseEnd(fixed)).toEqual({ end: 43, status: 200 });
    expect(responseEnd(fixed.subarray(0, 42))).toBeUndefined();
    const chunked = Buffer.from('HTTP/1.1 502 Bad Gateway\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n');
    expect(responseEnd(chunked)).toEqual({ end: chunked.length, status: 502 });
    expect(responseEnd(chunked.subarray(0, chunked.length - 2))).toBeUndefined();
    expect(responseEnd(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'))).toEqual({ end: 27, status: 204 });
  });

  test('times exactly `count` requests after the warm-up, on one connection, and counts error statuses', async () => {
    let served = 0;
    const remotes = new Set<string>();
    const s = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req, server) {
        const body = await req.text();
        served++;
        remotes.add(`${server.requestIP(req)?.port}`);
        // Every fourth request a streamed (chunked) error, the rest a fixed-length answer.
        if (body === 'fail')
          return new Response(
            new ReadableStream({
              start: (c) => {
                c.enqueue(new TextEncoder().encode('{"error":1}'));
                c.close();
              },
            }),
            { status: 503 },
          );
        return new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } });
      },
    });
    try {
      const ok = { path: '/c1', headers: { 'content-type': 'application/json' }, body: '{}' };
      const w = await runSequential({
        url: `http://127.0.0.1:${s.port}`,
        requests: [ok, ok, ok, { ...ok, body: 'fail' }],
        count: 400,
        warmup: 20,
      });
      expect(w.requests).toBe(400);
      expect(served).toBe(420);
      expect(remotes.size).toBe(1); // one keep-alive connection
      expect(w.errorCount).toBe(100);
      expect(w.latency.p50).toBeGreaterThan(0);
      expect(w.latency.p99).toBeGreaterThanOrEqual(w.latency.p50);
      expect(w.latency.max).toBeLessThan(w.durationS * 1000 + 1);
    } finally {
      s.stop(true);
    }
  });
});
