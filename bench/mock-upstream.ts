#!/usr/bin/env bun
/**
 * Mock LLM upstream for the benchmarks. Speaks the real OpenAI Chat Completions
 * (`POST …/v1/chat/completions`), OpenAI Responses (`POST …/v1/responses`) and Anthropic Messages
 * (`POST …/v1/messages`) wire formats,
 * non-streaming and SSE, and answers as fast as it can from precomputed bytes.
 *
 * Behaviour is configurable per process (flags) and per request through a path prefix, so one
 * mock serves every scenario and a provider connection's `baseUrl` picks the behaviour:
 *
 *   http://127.0.0.1:PORT/x/lat=50,pace=20/v1/chat/completions
 *
 *   lat=MS     delay before the response headers (default 0)
 *   bytes=N    size of the non-streaming JSON body (default 744, like a short real completion)
 *   chunks=N   SSE events per stream, terminal ones included (default 21)
 *   pace=MS    delay between SSE events (default 0: events are written back to back)
 *   flush=each|end  flush after every event (default, separate TCP writes like a real model) or once
 *   fail=CODE  answer at once with this HTTP status and an error body (a primary that fails fast)
 *
 * `POST /records-sink` answers 204: the product floor (bench/product-proxy.ts) ships its record
 * batches there, read and dropped.
 *
 * Usage: bun bench/mock-upstream.ts [--port 0] [--host 127.0.0.1] [--lat 0] [--bytes 744]
 *        [--chunks 21] [--pace 0] [--flush each]. Prints one JSON line {"port":N} when listening.
 */

import { anthropicBody, anthropicEvents, openaiBody, openaiEvents, responsesBody, responsesEvents } from './mock-bodies.ts';

export interface MockOptions {
  latencyMs: number;
  bodyBytes: number;
  chunks: number;
  paceMs: number;
  flushEach: boolean;
  fail: number;
}

export const DEFAULT_MOCK: MockOptions = { latencyMs: 0, bodyBytes: 744, chunks: 21, paceMs: 0, flushEach: true, fail: 0 };

// ---- options -----------------------------------------------------------------------------------

/** Parses `lat=50,pace=20` (the path prefix) over `base`. */
export const parseMockOptions = (spec: string, base: MockOptions = DEFAULT_MOCK): MockOptions => {
  const o = { ...base };
  for (const part of spec.split(',')) {
    const [k, v = ''] = part.split('=');
    const n = Number(v);
    switch (k) {
      case 'lat':
        o.latencyMs = n;
        break;
      case 'bytes':
        o.bodyBytes = n;
        break;
      case 'chunks':
        o.chunks = n;
        break;
      case 'pace':
        o.paceMs = n;
        break;
      case 'flush':
        o.flushEach = v !== 'end';
        break;
      case 'fail':
        o.fail = n;
        break;
      default:
        break;
    }
  }
  return o;
};

/** The path prefix that selects `opts` (relative to the defaults), e.g. `/x/lat=50,pace=20`. */
export const mockPrefix = (opts: Partial<MockOptions>): string => {
  const parts: string[] = [];
  if (opts.latencyMs !== undefined) parts.push(`lat=${opts.latencyMs}`);
  if (opts.bodyBytes !== undefined) parts.push(`bytes=${opts.bodyBytes}`);
  if (opts.chunks !== undefined) parts.push(`chunks=${opts.chunks}`);
  if (opts.paceMs !== undefined) parts.push(`pace=${opts.paceMs}`);
  if (opts.flushEach !== undefined) parts.push(`flush=${opts.flushEach ? 'each' : 'end'}`);
  if (opts.fail !== undefined) parts.push(`fail=${opts.fail}`);
  return parts.length === 0 ? '' : `/x/${parts.join(',')}`;
};

// ---- server ------------------------------------------------------------------------------------

type Kind = 'openai' | 'anthropic' | 'responses';
type Bytes = Uint8Array<ArrayBuffer>;
type Prepared = { kind: 'json'; body: Bytes } | { kind: 'sse'; events: Bytes[]; joined: Bytes };

const enc = new TextEncoder();

/** Bun's direct stream (writes go straight to the socket); lib.dom's typing does not know the variant. */
const directStream = (source: Bun.DirectUnderlyingSource<Bytes>): ReadableStream<Bytes> =>
  new ReadableStream(source as unknown as UnderlyingDefaultSource<Bytes>);
const JSON_HEADERS = { 'content-type': 'application/json' };
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

export interface MockServer {
  port: number;
  stop(): void;
}

export const startMock = (port: number, host: string, defaults: MockOptions): MockServer => {
  const optionsCache = new Map<string, MockOptions>();
  const prepared = new Map<string, Prepared>();
  const optionsFor = (spec: string): MockOptions => {
    let o = optionsCache.get(spec);
    if (!o) {
      o = parseMockOptions(spec, defaults);
      optionsCache.set(spec, o);
    }
    return o;
  };
  const prepare = (kind: Kind, o: MockOptions, model: string, stream: boolean, includeUsage: boolean, spec: string): Prepared => {
    const key = `${kind}|${spec}|${model}|${stream ? 1 : 0}|${includeUsage ? 1 : 0}`;
    let p = prepared.get(key);
    if (!p) {
      if (stream) {
        const events = (
          kind === 'openai'
            ? openaiEvents(model, o.chunks, includeUsage)
            : kind === 'responses'
              ? responsesEvents(model, o.chunks)
              : anthropicEvents(model, o.chunks)
        ).map((e) => enc.encode(e));
        p = { kind: 'sse', events, joined: new Uint8Array(Buffer.concat(events)) };
      } else {
        p = {
          kind: 'json',
          body: enc.encode(
            kind === 'openai'
              ? openaiBody(model, o.bodyBytes)
              : kind === 'responses'
                ? responsesBody(model, o.bodyBytes)
                : anthropicBody(model, o.bodyBytes),
          ),
        };
      }
      prepared.set(key, p);
    }
    return p;
  };

  const server = Bun.serve({
    port,
    hostname: host,
    idleTimeout: 0,
    async fetch(req) {
      const url = req.url;
      let path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
      let spec = '';
      if (path.startsWith('/x/')) {
        const end = path.indexOf('/', 3);
        spec = path.slice(3, end === -1 ? path.length : end);
        path = end === -1 ? '/' : path.slice(end);
      }
      if (req.method === 'GET') return new Response('{"status":"ok"}', { headers: JSON_HEADERS });
      const kind: Kind | undefined = path.endsWith('/chat/completions')
        ? 'openai'
        : path.endsWith('/messages')
          ? 'anthropic'
          : path.endsWith('/responses')
            ? 'responses'
            : undefined;
      const raw = await req.text();
      // The product floor (bench/product-proxy.ts) ships its record batches here: read and dropped.
      if (path === '/records-sink') return new Response(null, { status: 204 });
      if (!kind)
        return new Response('{"error":{"message":"unknown path","type":"invalid_request_error"}}', { status: 404, headers: JSON_HEADERS });
      const o = optionsFor(spec);
      if (o.fail) {
        const body =
          kind !== 'anthropic'
            ? '{"error":{"message":"The server is overloaded (mock primary).","type":"server_error","param":null,"code":null}}'
            : '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded (mock primary)"}}';
        return new Response(body, { status: o.fail, headers: JSON_HEADERS });
      }
      let body: { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } };
      try {
        body = JSON.parse(raw) as typeof body;
      } catch {
        return new Response('{"error":{"message":"bad json","type":"invalid_request_error"}}', { status: 400, headers: JSON_HEADERS });
      }
      const model = typeof body.model === 'string' ? body.model : 'unknown';
      const stream = body.stream === true;
      const p = prepare(kind, o, model, stream, body.stream_options?.include_usage === true, spec);
      if (o.latencyMs > 0) await Bun.sleep(o.latencyMs);
      if (p.kind === 'json') return new Response(p.body, { headers: JSON_HEADERS });
      if (!o.flushEach && o.paceMs === 0) {
        // One write, still chunked transfer encoding like a real streaming upstream.
        const joined = p.joined;
        const once: Bun.DirectUnderlyingSource<Bytes> = {
          type: 'direct',
          pull(c) {
            c.write(joined);
            c.close();
          },
        };
        return new Response(directStream(once), { headers: SSE_HEADERS });
      }
      const events = p.events;
      const pace = o.paceMs;
      const flushEach = o.flushEach;
      const paced: Bun.DirectUnderlyingSource<Bytes> = {
        type: 'direct',
        async pull(c) {
          for (let i = 0; i < events.length; i++) {
            if (pace > 0 && i > 0) await Bun.sleep(pace);
            await c.write(events[i] as Bytes);
            if (flushEach) await c.flush();
          }
          c.close();
        },
      };
      return new Response(directStream(paced), { headers: SSE_HEADERS });
    },
  });
  return { port: server.port ?? 0, stop: () => void server.stop(true) };
};

const flag = (args: string[], name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? undefined : args[i + 1];
};

if (import.meta.main) {
  const args = process.argv.slice(2);
  const num = (name: string, fallback: number) => {
    const v = flag(args, name);
    return v === undefined ? fallback : Number(v);
  };
  const defaults: MockOptions = {
    latencyMs: num('lat', DEFAULT_MOCK.latencyMs),
    bodyBytes: num('bytes', DEFAULT_MOCK.bodyBytes),
    chunks: num('chunks', DEFAULT_MOCK.chunks),
    paceMs: num('pace', DEFAULT_MOCK.paceMs),
    flushEach: (flag(args, 'flush') ?? 'each') !== 'end',
    fail: 0,
  };
  const mock = startMock(num('port', 0), flag(args, 'host') ?? '127.0.0.1', defaults);
  process.stdout.write(`${JSON.stringify({ port: mock.port })}\n`);
  process.on('SIGTERM', () => {
    mock.stop();
    process.exit(0);
  });
}
