import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect, type Socket } from 'node:net';
import { requestRecords } from '../src/store/schema/index.ts';
import { startTestGateway, type TestGateway } from './support/gateway.ts';
import { type MockUpstream, startMockUpstream } from './support/mock-upstreams.ts';
import { type Provisioned, provision } from './support/provision.ts';

/**
 * Slow and silent clients (issue 7, defect 8) against the real listener: half-sent requests are
 * closed after the header / body deadlines while a long upstream call and a quiet stream are not;
 * a client that never reads its stream stops the gateway reading the upstream and is ended after
 * GATEWAY_STREAM_STALL_TIMEOUT; an oversize upstream answer is a 502 in the error format.
 */

/** An OpenAI-wire upstream: endless fast streams (counting what it produced), 40 MB JSON answers. */
const startHostileUpstream = () => {
  const state = { produced: 0, cancelled: 0, streams: 0 };
  const chunk = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'x'.repeat(1000) }, finish_reason: null }] })}\n\n`;
  const enc = new TextEncoder().encode(chunk);
  const huge = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[${'0.125,'.repeat(6_700_000)}0]}],"model":"m"}`;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body = (await req.json()) as { stream?: boolean };
      if (path.endsWith('/embeddings')) {
        // Streamed without Content-Length: the gateway must count.
        const bytes = new TextEncoder().encode(huge);
        let at = 0;
        const stream = new ReadableStream<Uint8Array>({
          pull(c) {
            if (at >= bytes.length) return c.close();
            c.enqueue(bytes.subarray(at, at + 65536));
            at += 65536;
          },
        });
        return new Response(stream, { headers: { 'content-type': 'application/json' } });
      }
      if (!body.stream) return new Response(huge, { headers: { 'content-type': 'application/json' } });
      state.streams++;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          state.produced += enc.byteLength;
          c.enqueue(enc);
        },
        cancel() {
          state.cancelled++;
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, state, stop: () => server.stop(true) };
};

let tg: TestGateway;
let p: Provisioned;
let oa: MockUpstream;
let hostile: ReturnType<typeof startHostileUpstream>;
let hostileKey: string;

beforeAll(async () => {
  oa = startMockUpstream('openai');
  hostile = startHostileUpstream();
  tg = await startTestGateway({
    GATEWAY_BODY_TIMEOUT: '2s',
    GATEWAY_IDLE_TIMEOUT: '2s',
    GATEWAY_STREAM_STALL_TIMEOUT: '3s',
    GATEWAY_KEEPALIVE_INTERVAL: '60s',
  });
  p = await provision(tg, { openaiUrl: oa.url, anthropicUrl: oa.url });
  // A second tenant whose `gpt-mini` is routed to the hostile upstream.
  const a = (op: string) => `/admin.v1.AdminService/${op}`;
  await tg.must(a('CreateCustomer'), { customerId: 'hostile', name: 'Hostile' });
  await tg.must(a('AddProjectModel'), { customerId: 'hostile', projectId: 'default', modelId: p.models['gpt-mini'] });
  await tg.must(a('CreateProviderConnection'), {
    customerId: 'hostile',
    projectId: 'default',
    name: 'hostile',
    provider: 'openai',
    baseUrl: `${hostile.url}/v1`,
    apiKey: 'sk-hostile',
  });
  await tg.must(a('CreateRoute'), {
    customerId: 'hostile',
    projectId: 'default',
    model: 'gpt-mini',
    targets: [{ connection: 'hostile', model: 'gpt-4o-mini' }],
  });
  hostileKey = (
    (await tg.must('/apikey.v1.ApiKeyService/CreateApiKey', {
      name: 'h',
      userId: 'u2',
      enterpriseContext: { customerId: 'hostile', projectId: 'default' },
    })) as { apiKey: string }
  ).apiKey;
}, 60_000);

afterAll(async () => {
  await tg?.stop();
  oa?.stop();
  hostile?.stop();
});

interface Probe {
  closedAfterMs: Promise<number>;
  received: () => string;
  socket: Socket;
}

const probe = (port: number, bytes: string, opts: { read?: boolean } = {}): Probe => {
  const t0 = Date.now();
  const socket = connect(port, '127.0.0.1');
  let received = '';
  if (opts.read === false) socket.pause();
  else socket.on('data', (d) => (received += d.toString()));
  socket.on('error', () => undefined);
  socket.write(bytes);
  return { socket, received: () => received, closedAfterMs: new Promise((resolve) => socket.on('close', () => resolve(Date.now() - t0))) };
};

const portOf = (url: string) => Number(new URL(url).port);

describe('slow clients', () => {
  test('half-sent requests are closed after the deadlines; a long upstream call and a quiet stream are not cut', async () => {
    const port = portOf(tg.url);
    oa.script((r) => (r.body.stream ? { text: 'quiet', chunkDelayMs: 4500 } : { text: 'slow answer', delayMs: 6000 }));
    const chat = (stream: boolean) =>
      fetch(`${tg.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${p.apiKey}` },
        body: JSON.stringify({ model: 'gpt-mini', stream, messages: [{ role: 'user', content: 'hi' }] }),
      }).then(async (r) => ({ status: r.status, text: await r.text() }));
    const slowCall = chat(false);
    const quietStream = chat(true);

    const partialHeaders = Array.from({ length: 300 }, () =>
      probe(port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n'),
    );
    const partialBodies = Array.from({ length: 300 }, () =>
      probe(
        port,
        `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":`,
      ),
    );
    const chunkedBodies = Array.from({ length: 50 }, () =>
      probe(
        port,
        `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.apiKey}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"mod\r\n`,
      ),
    );
    const unauthBodies = Array.from({ length: 100 }, () =>
      probe(port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"model":'),
    );

    const headerTimes = await Promise.all(partialHeaders.map((x) => x.closedAfterMs));
    // Bun's fixed header deadline: about 10 s (its timer ticks every 4 s).
    expect(Math.max(...headerTimes)).toBeLessThan(17_000);
    const bodyTimes = await Promise.all([...partialBodies, ...chunkedBodies].map((x) => x.closedAfterMs));
    expect(Math.max(...bodyTimes)).toBeLessThan(17_000);
    for (const x of [...partialBodies, ...chunkedBodies]) {
      const text = x.received();
      expect(text.startsWith('HTTP/1.1 408')).toBe(true);
      expect(text.toLowerCase()).toContain('x-request-id:');
      const json = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: { type: string; code: string } };
      expect(json.error).toMatchObject({ type: 'invalid_request_error', code: 'request_timeout' });
    }
    await Promise.all(unauthBodies.map((x) => x.closedAfterMs));
    for (const x of unauthBodies) expect(x.received().startsWith('HTTP/1.1 401')).toBe(true);

    const slow = await slowCall;
    expect(slow.status).toBe(200);
    expect(slow.text).toContain('slow answer');
    const quiet = await quietStream;
    expect(quiet.status).toBe(200);
    expect(quiet.text).toContain('quiet');
    expect(quiet.text).toContain('[DONE]');
    oa.script(undefined);
  }, 60_000);

  test('a client that never reads its stream: the gateway stops reading the upstream, then ends the stream', async () => {
    const rss0 = process.memoryUsage().rss;
    const body = JSON.stringify({ model: 'gpt-mini', stream: true, messages: [{ role: 'user', content: 'flood' }] });
    const silent = probe(
      portOf(tg.url),
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${hostileKey}\r\nX-Client-Request-Id: silent-1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      { read: false },
    );
    await Bun.sleep(1500);
    const at1 = hostile.state.produced;
    await Bun.sleep(1000);
    const at2 = hostile.state.produced;
    // Socket buffers hold a few MB; after that the upstream is no longer read.
    expect(at1).toBeLessThan(32 * 1024 * 1024);
    expect(at2 - at1).toBeLessThan(512 * 1024);
    // GATEWAY_STREAM_STALL_TIMEOUT (3 s): the stream is ended and its upstream request cancelled.
    const deadline = Date.now() + 8000;
    while (hostile.state.cancelled === 0 && Date.now() < deadline) await Bun.sleep(100);
    expect(hostile.state.cancelled).toBe(1);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(96 * 1024 * 1024);
    silent.socket.destroy();
    await tg.gw.records.flush();
    const rows = await tg.gw.store.db.select().from(requestRecords);
    expect(rows.find((r) => r.clientRequestId === 'silent-1')?.errorCode).toBe('client_stalled');
  }, 30_000);

  test('an upstream answer over GATEWAY_MAX_UPSTREAM_RESPONSE is a 502 in the error format', async () => {
    const chat = await fetch(`${tg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${hostileKey}` },
      body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'big' }] }),
    });
    expect(chat.status).toBe(502);
    expect(chat.headers.get('x-request-id')).toBeTruthy();
    const cj = (await chat.json()) as { error: { type: string; code: string; message: string } };
    expect(cj.error).toMatchObject({ type: 'api_error', code: 'upstream_response_too_large' });
    expect(cj.error.message).toContain('larger than the limit');

    const emb = await fetch(`${tg.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${hostileKey}` },
      body: JSON.stringify({ model: 'gpt-mini', input: 'big' }),
    });
    expect(emb.status).toBe(502);
    expect(emb.headers.get('x-request-id')).toBeTruthy();
    expect(((await emb.json()) as { error: { code: string } }).error.code).toBe('upstream_response_too_large');
  }, 30_000);
});
