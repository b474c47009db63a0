#!/usr/bin/env bun
/**
 * The bare proxy with its streamed answer relayed three ways (bench/relay-floor.ts runs it):
 *   MODE=native  the upstream body handed to the Response (Bun pipes it natively; = bench/bare-proxy.ts)
 *   MODE=js      read in JavaScript (reader.read() per chunk) and written to a direct stream, flushed per chunk
 *   MODE=jstext  the same, each chunk decoded to text first (what any relay that looks at events must do)
 * The floor under any gateway that reads a stream's events: what Bun's stream machinery alone costs.
 *   MODE=js bun bench/relay-proxy.ts http://127.0.0.1:PORT   → prints {"port":N}
 */
export {};

const upstream = process.argv[2] ?? '';
/** Bun's direct stream controller (lib.dom's typing lacks the variant). */
type Direct = { write(c: string | Uint8Array): unknown; flush(): unknown; close(): void };
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  idleTimeout: 0,
  async fetch(req) {
    const url = req.url;
    const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
    const up = await fetch(upstream + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer x' }, body: await req.arrayBuffer(), signal: req.signal });
    const mode = process.env.MODE;
    if (mode === 'native' || !up.body) return new Response(up.body, { status: up.status, headers: { 'content-type': up.headers.get('content-type') ?? 'application/json' } });
    const reader = up.body.getReader();
    const td = new TextDecoder();
    const stream = new ReadableStream({
      type: 'direct',
      async pull(c: Direct) {
        for (;;) {
          const r = await reader.read();
          if (r.done) break;
          c.write(mode === 'jstext' ? td.decode(r.value, { stream: true }) : r.value);
          c.flush();
        }
        c.close();
      },
    } as unknown as UnderlyingDefaultSource<Uint8Array>);
    return new Response(stream, { status: up.status, headers: { 'content-type': 'text/event-stream' } });
  },
});
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.on('SIGTERM', () => {
  server.stop(true);
  process.exit(0);
});
