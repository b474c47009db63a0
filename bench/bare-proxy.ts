#!/usr/bin/env bun
/**
 * The baseline: the least a Bun proxy can do. `Bun.serve` + `fetch` to the upstream, request body
 * forwarded as bytes, response body streamed back untouched — no auth, no routing, no parsing,
 * no records. Every gateway figure in the report is also given as a ratio to this one, measured in
 * the same run on the same core.
 *
 * Usage: bun bench/bare-proxy.ts --upstream http://127.0.0.1:PORT [--port 0]
 * Prints one JSON line {"port":N} when listening.
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

const server = Bun.serve({
  port: Number(flag('port') ?? 0),
  hostname: '127.0.0.1',
  idleTimeout: 0,
  async fetch(req) {
    const url = req.url;
    const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
    const up = await fetch(upstream + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream-bench' },
      body: await req.arrayBuffer(),
      signal: req.signal,
    });
    return new Response(up.body, { status: up.status, headers: { 'content-type': up.headers.get('content-type') ?? 'application/json' } });
  },
});

process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.on('SIGTERM', () => {
  server.stop(true);
  process.exit(0);
});
