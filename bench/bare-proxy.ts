#!/usr/bin/env bun
/**
 * The baseline: the least a Bun proxy can do. `Bun.serve` + `fetch` to the upstream, request body
 * forwarded as bytes, response body streamed back untouched — no auth, no routing, no parsing,
 * no records. Every gateway figure in the report is also given as a ratio to this one, measured in
 * the same run on the same core.
 *
 * Usage: bun bench/bare-proxy.ts --upstream http://127.0.0.1:PORT [--port 0] [--relay native|js|jstext]
 * Prints one JSON line {"port":N} when listening.
 *
 * `--relay` (bench/relay-floor.ts) says how the answer's body is handed back: `native` (the
 * default) gives the upstream body to the Response and Bun pipes it; `js` reads it in JavaScript
 * (reader.read() per chunk) and writes each chunk to a direct stream, flushed; `jstext` the same
 * with each chunk decoded to text first (what any relay that looks at events must do).
 *
 * `--work minimal` (bench/gateway-floor.ts, non-streaming requests) does the least any gateway
 * must do besides relaying: read the body as text and parse it, look the bearer key up, pick the
 * target by model, serialize the body again, read the answer as text and parse it for usage,
 * answer with a request id, and keep a record object (dropped in thousands). No validation,
 * no translation, no limits, no telemetry.
 */

const flag = (name: string): string | undefined => {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i === -1 ? undefined : args[i + 1];
};

const upstream = (flag('upstream') ?? '').replace(/\/+$/, '');
if (!upstream) {
  process.stderr.write('usage: bun bench/bare-proxy.ts --upstream http://127.0.0.1:PORT [--port 0]\n');
  process.exit(2);
}

const relay = flag('relay') ?? 'native';
if (!['native', 'js', 'jstext'].includes(relay)) {
  process.stderr.write('--relay: native, js or jstext\n');
  process.exit(2);
}

/** Bun's direct stream controller (lib.dom's typing lacks the variant). */
type Direct = { write(c: string | Uint8Array): unknown; flush(): unknown; close(): void };

/** The upstream body relayed in JavaScript: read per chunk, written to a direct stream. */
const relayed = (body: ReadableStream<Uint8Array>, asText: boolean): ReadableStream<Uint8Array> => {
  const reader = body.getReader();
  const td = new TextDecoder();
  return new ReadableStream({
    type: 'direct',
    async pull(c: Direct) {
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        c.write(asText ? td.decode(r.value, { stream: true }) : r.value);
        c.flush();
      }
      c.close();
    },
  } as unknown as UnderlyingDefaultSource<Uint8Array>);
};

const work = flag('work') ?? 'none';
if (!['none', 'minimal'].includes(work)) {
  process.stderr.write('--work: none or minimal\n');
  process.exit(2);
}

const keys = new Map([['sk-bench', { project: 'p', customer: 'c' }]]);
const targets = new Map([['gpt-4o-mini', { model: 'gpt-4o-mini', url: `${upstream}/v1/chat/completions` }]]);
const records: unknown[] = [];

/** The minimal gateway's work for one non-streaming request (see the header). */
const minimal = async (req: Request): Promise<Response> => {
  const key = keys.get((req.headers.get('authorization') ?? '').slice(7)) ?? keys.get('sk-bench');
  const body = JSON.parse(await req.text()) as { model?: string };
  const target = targets.get(body.model ?? '') ?? targets.get('gpt-4o-mini');
  if (!key || !target) return new Response('{}', { status: 404 });
  const started = performance.now();
  const up = await fetch(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream-bench' },
    body: JSON.stringify({ ...body, model: target.model }),
    signal: req.signal,
  });
  const text = await up.text();
  const usage = (JSON.parse(text) as { usage?: { prompt_tokens?: number; completion_tokens?: number } }).usage;
  const id = crypto.randomUUID();
  records.push({
    id,
    project: key.project,
    model: target.model,
    status: up.status,
    input: usage?.prompt_tokens ?? 0,
    output: usage?.completion_tokens ?? 0,
    ms: performance.now() - started,
  });
  if (records.length >= 1000) records.length = 0;
  return new Response(text, { status: up.status, headers: { 'content-type': 'application/json', 'x-request-id': id } });
};

const server = Bun.serve({
  port: Number(flag('port') ?? 0),
  hostname: '127.0.0.1',
  idleTimeout: 0,
  async fetch(req) {
    if (work === 'minimal') return minimal(req);
    const url = req.url;
    const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
    const up = await fetch(upstream + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream-bench' },
      body: await req.arrayBuffer(),
      signal: req.signal,
    });
    if (relay === 'native' || !up.body)
      return new Response(up.body, {
        status: up.status,
        headers: { 'content-type': up.headers.get('content-type') ?? 'application/json' },
      });
    return new Response(relayed(up.body, relay === 'jstext'), {
      status: up.status,
      headers: { 'content-type': up.headers.get('content-type') ?? 'application/json' },
    });
  },
});

process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.on('SIGTERM', () => {
  server.stop(true);
  process.exit(0);
});
