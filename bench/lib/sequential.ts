/**
 * Sequential requests on one keep-alive connection, timed with the monotonic clock: the latency
 * at one connection of `bun run bench` (`c1_added_*`). A plain HTTP/1.1 client over `Bun.connect`
 * (precomputed request bytes, a response complete at its Content-Length or its last chunk), so the
 * client adds little of its own and nothing that differs between targets.
 *
 * Not wrk: wrk times requests with `gettimeofday`, and on the shared VM the wall clock is stepped
 * by tens of milliseconds at a time (Date.now() against performance.now(): ±54 ms), which put
 * samples of hundreds of milliseconds into a one-connection run of 2,000 requests that took 2 s in
 * all.
 */
import { percentiles } from './probe.ts';
import type { WrkRequest, WrkResult } from './wrk.ts';

export interface SequentialOptions {
  /** Base URL: `http://127.0.0.1:PORT`. */
  url: string;
  /** Cycled through in order, one per request. */
  requests: WrkRequest[];
  /** Requests timed. */
  count: number;
  /** Requests sent first on the same connection and not timed (the client's own JIT; default 100). */
  warmup?: number;
}

/** The end of the first complete HTTP/1.1 response in `b` and its status, or undefined while it is incomplete. */
export const responseEnd = (b: Buffer): { end: number; status: number } | undefined => {
  const h = b.indexOf('\r\n\r\n');
  if (h === -1) return undefined;
  const head = b.subarray(0, h).toString('latin1');
  const status = Number(head.slice(9, 12));
  const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
  if (length) {
    const end = h + 4 + Number(length[1]);
    return b.length >= end ? { end, status } : undefined;
  }
  if (!/\r\ntransfer-encoding:[ \t]*chunked/i.test(head)) return { end: h + 4, status };
  let at = h + 4;
  for (;;) {
    const nl = b.indexOf('\r\n', at);
    if (nl === -1) return undefined;
    const size = Number.parseInt(b.subarray(at, nl).toString('latin1'), 16);
    at = nl + 2 + size + 2;
    if (b.length < at) return undefined;
    if (size === 0) return { end: at, status };
  }
};

const frame = (r: WrkRequest, host: string): Buffer => {
  const body = Buffer.from(r.body);
  const headers = Object.entries(r.headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return Buffer.concat([Buffer.from(`POST ${r.path} HTTP/1.1\r\nhost: ${host}\r\n${headers}content-length: ${body.length}\r\n\r\n`), body]);
};

/** Runs `warmup` + `count` requests one after another; the result has wrk's shape (latency in ms). */
export const runSequential = async (o: SequentialOptions): Promise<WrkResult> => {
  const u = new URL(o.url);
  const frames = o.requests.map((r) => frame(r, u.host));
  let buf = Buffer.alloc(0);
  let wake: (() => void) | undefined;
  let closed = false;
  const socket = await Bun.connect({
    hostname: u.hostname,
    port: Number(u.port),
    socket: {
      data(_s, chunk) {
        buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
        wake?.();
      },
      close() {
        closed = true;
        wake?.();
      },
      error() {
        closed = true;
        wake?.();
      },
    },
  });
  socket.setNoDelay(true);
  const times: number[] = [];
  let errors = 0;
  let bytes = 0;
  const warmup = o.warmup ?? 100;
  const t0 = performance.now();
  let started = t0;
  try {
    for (let i = 0; i < warmup + o.count; i++) {
      const f = frames[i % frames.length] as Buffer;
      if (i === warmup) started = performance.now();
      const s = performance.now();
      if (socket.write(f) !== f.length) throw new Error('request not written whole');
      let done = responseEnd(buf);
      while (!done) {
        if (closed) throw new Error(`connection closed after ${i} requests`);
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        done = responseEnd(buf);
      }
      const ms = performance.now() - s;
      bytes += done.end;
      buf = buf.subarray(done.end);
      if (i < warmup) continue;
      times.push(ms);
      if (done.status >= 400) errors++;
    }
  } finally {
    socket.end();
  }
  const durationS = (performance.now() - started) / 1000;
  const p = percentiles(times);
  const sorted = [...times].sort((a, b) => a - b);
  const p999 = sorted[Math.max(0, Math.ceil(0.999 * sorted.length) - 1)] ?? Number.NaN;
  return {
    requests: times.length,
    durationS,
    rps: durationS > 0 ? times.length / durationS : 0,
    bytes,
    errors: { connect: 0, read: 0, write: 0, status: errors, timeout: 0 },
    errorCount: errors,
    latency: { p50: p.p50, p90: p.p90, p99: p.p99, p999, mean: p.mean, max: p.max },
  };
};
