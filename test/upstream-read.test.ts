import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { GatewayError } from '../src/core/errors.ts';
import { knownInward, RESOLUTION_TTL_MS, setResolver } from '../src/core/addresses.ts';
import { setUpstreamBounds } from '../src/core/upstream-bounds.ts';
import { checkAddress, readUpstreamText } from '../src/data-plane/upstream.ts';
import type { ConnectionConfig } from '../src/providers/types.ts';

/**
 * How an upstream answer is read (GATEWAY_MAX_UPSTREAM_RESPONSE), against a real listener and
 * Bun's fetch: with a Content-Length within the limit it is read natively, with one over the limit
 * it is refused before reading, without one (or compressed, where Content-Length counts the
 * compressed bytes) it is counted while read; an abort while reading keeps its reason.
 */

const LIMIT = 1000;
const text = (n: number) => `{"x":"${'é'.repeat(Math.max(0, Math.floor((n - 8) / 2)))}"}`;
const chunked = (body: string) => {
  const bytes = new TextEncoder().encode(body);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.subarray(at, at + 100));
      at += 100;
    },
  });
};

let server: ReturnType<typeof Bun.serve>;
/** Raw HTTP: declares a Content-Length, sends the head and part of the body, then nothing. */
let slow: Server;
const cancelled = { n: 0 };

beforeAll(async () => {
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      const json = { 'content-type': 'application/json' };
      switch (path) {
        case '/small':
          return new Response(text(900), { headers: json });
        case '/large':
          return new Response(text(1500), { headers: json });
        case '/small-chunked':
          return new Response(chunked(text(900)), { headers: json });
        case '/large-chunked': {
          // Endless: only a cancel ends it.
          const piece = new TextEncoder().encode('x'.repeat(4096));
          const stream = new ReadableStream<Uint8Array>({
            pull(c) {
              c.enqueue(piece);
            },
            cancel() {
              cancelled.n++;
            },
          });
          return new Response(stream, { headers: json });
        }
        case '/gzip-small':
          return new Response(Bun.gzipSync(text(900)), { headers: { ...json, 'content-encoding': 'gzip' } });
        case '/gzip-large':
          // 100 kB of JSON in well under LIMIT compressed bytes: the declared length says nothing.
          return new Response(Bun.gzipSync(text(100_000)), { headers: { ...json, 'content-encoding': 'gzip' } });
        default:
          return new Response('not found', { status: 404 });
      }
    },
  });
  slow = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 900\r\n\r\n{"x":"'));
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  setUpstreamBounds({ maxUpstreamResponseBytes: LIMIT });
});

afterEach(() => setUpstreamBounds({ maxUpstreamResponseBytes: LIMIT }));

afterAll(() => {
  setUpstreamBounds({ maxUpstreamResponseBytes: 32 * 1024 * 1024 });
  server.stop(true);
  slow.close();
});

const get = async (path: string, signal = new AbortController().signal, port = server.port) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal });
  return { res, read: () => readUpstreamText(res, signal) };
};

const refusal = async (p: Promise<string>): Promise<GatewayError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error('the read succeeded');
};

describe('reading an upstream answer', () => {
  test('within the limit, with and without Content-Length, plain and compressed: the exact text', async () => {
    for (const path of ['/small', '/small-chunked', '/gzip-small']) {
      const { res, read } = await get(path);
      if (path === '/small') expect(Number(res.headers.get('content-length'))).toBeLessThanOrEqual(LIMIT);
      if (path === '/small-chunked') expect(res.headers.get('content-length')).toBeNull();
      expect(await read()).toBe(text(900));
    }
  });

  test('over the limit with a Content-Length: 502 before reading', async () => {
    const { res, read } = await get('/large');
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(LIMIT);
    const e = await refusal(read());
    expect(e.status).toBe(502);
    expect(e.message).toContain(`larger than the limit of ${LIMIT} bytes`);
  });

  test('over the limit without a Content-Length: 502 once counted past it, the upstream cancelled', async () => {
    const { res, read } = await get('/large-chunked');
    expect(res.headers.get('content-length')).toBeNull();
    const e = await refusal(read());
    expect(e.status).toBe(502);
    expect(e.message).toContain('larger than the limit');
    const deadline = Date.now() + 5000;
    while (cancelled.n === 0 && Date.now() < deadline) await Bun.sleep(20);
    expect(cancelled.n).toBe(1);
  });

  test('compressed: a small Content-Length does not let a large decoded answer through', async () => {
    const { res, read } = await get('/gzip-large');
    expect(Number(res.headers.get('content-length'))).toBeLessThanOrEqual(LIMIT);
    const e = await refusal(read());
    expect(e.status).toBe(502);
    expect(e.message).toContain('larger than the limit');
  });

  test('an abort while a declared-length body is read keeps its reason', async () => {
    const controller = new AbortController();
    const { res, read } = await get('/slow', controller.signal, (slow.address() as AddressInfo).port);
    expect(res.headers.get('content-length')).not.toBeNull();
    const reason = new GatewayError({ kind: 'timeout', message: 'The upstream provider did not respond within 300 ms.', retryable: true });
    setTimeout(() => controller.abort(reason), 300);
    expect(await refusal(read())).toBe(reason);
  });
});

describe('the address check before every upstream request', () => {
  const lookups: string[] = [];
  const dns = new Map<string, string[]>([
    ['public.example.test', ['93.184.216.34']],
    ['inward.example.test', ['93.184.216.34', '10.0.0.7']],
  ]);
  const conn = (allowPrivate: boolean): ConnectionConfig => ({ id: 'c1', name: 'c1', provider: 'openai', options: {}, allowPrivate });

  beforeAll(() =>
    setResolver(async (host) => {
      lookups.push(host);
      const a = dns.get(host);
      if (!a) throw new Error('ENOTFOUND');
      return a;
    }),
  );
  afterAll(() => setResolver(undefined));

  const outcome = async (p: Promise<void> | undefined): Promise<string> => {
    if (p === undefined) return 'at once';
    try {
      await p;
      return 'after the check';
    } catch (e) {
      return e instanceof GatewayError ? `${e.status} ${e.errorCode ?? e.kind}` : 'other';
    }
  };

  test('allowed connections go at once without a lookup', async () => {
    expect(await outcome(checkAddress('http://inward.example.test/v1/chat/completions', conn(true)))).toBe('at once');
    expect(lookups).toEqual([]);
  });

  test('a verdict is established once, then reused without waiting: public goes, inward is refused', async () => {
    const pub = 'http://public.example.test/v1/chat/completions';
    const inward = 'http://inward.example.test/v1/chat/completions';
    expect(await outcome(checkAddress(pub, conn(false)))).toBe('after the check');
    expect(await outcome(checkAddress(pub, conn(false)))).toBe('at once');
    expect(await outcome(checkAddress(inward, conn(false)))).toBe('502 upstream_address_forbidden');
    expect(await outcome(checkAddress(inward, conn(false)))).toBe('502 upstream_address_forbidden');
    expect(lookups.filter((h) => h === 'public.example.test')).toHaveLength(1);
    expect(lookups.filter((h) => h === 'inward.example.test')).toHaveLength(1);
    // A literal inward address needs no lookup and is refused every time.
    expect(await outcome(checkAddress('http://127.0.0.1:9/v1', conn(false)))).toBe('502 upstream_address_forbidden');
    expect(await outcome(checkAddress('http://127.0.0.1:9/v1', conn(false)))).toBe('502 upstream_address_forbidden');
  });

  test('a name that does not resolve is unavailable (retryable) and asked again next time', async () => {
    const url = 'http://nowhere.example.test/v1';
    expect(await outcome(checkAddress(url, conn(false)))).toBe('503 service_unavailable');
    expect(await outcome(checkAddress(url, conn(false)))).toBe('503 service_unavailable');
    expect(lookups.filter((h) => h === 'nowhere.example.test')).toHaveLength(2);
  });

  test('a new resolver (or an expired resolution) forgets the verdicts', async () => {
    const pub = 'http://public.example.test/v2';
    expect(await outcome(checkAddress(pub, conn(false)))).toBe('after the check');
    expect(await outcome(checkAddress(pub, conn(false)))).toBe('at once');
    // A verdict lasts as long as the resolution it rests on.
    expect(knownInward(pub)?.inward).toBeUndefined();
    expect(knownInward(pub)).toBeDefined();
    expect(knownInward(pub, Date.now() + RESOLUTION_TTL_MS + 1)).toBeUndefined();
    dns.set('public.example.test', ['127.0.0.1']);
    setResolver(async (host) => dns.get(host) ?? []);
    expect(await outcome(checkAddress(pub, conn(false)))).toBe('502 upstream_address_forbidden');
  });
});
