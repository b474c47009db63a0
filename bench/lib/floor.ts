import { join } from 'node:path';
import { cpuMs, HTTP_THREAD, JS_THREAD, pinned, planCores, settle, spawnService, threadCpuMs, threadUsPerRequest } from './proc.ts';
import { type Kind, upstreamRequests } from './requests.ts';
import { median } from './stats.ts';
import { runWrk } from './wrk.ts';

/**
 * bench/bare-proxy.ts in several modes against one mock upstream, pinned like the main bench,
 * interleaved rounds under wrk (32 connections): the median req/s and the proxy's CPU µs per
 * request of each mode (bench/relay-floor.ts, bench/gateway-floor.ts).
 */
export interface FloorMode {
  name: string;
  /** bare-proxy.ts flags besides `--upstream`. */
  args: string[];
  /** Another drop-in of bare-proxy.ts (same flags, same `{"port":N}` line): bench/product-proxy.ts. */
  script?: string;
}

export interface FloorResult {
  name: string;
  rps: number;
  us: number;
  /** CPU µs per request of each round. */
  rounds: number[];
  /** Median µs per request of the JavaScript thread and of Bun's HTTP client thread. */
  js: number;
  http: number;
}

export const runFloor = async (kind: Kind, modes: readonly FloorMode[], rounds: number, durationS: number): Promise<FloorResult[]> => {
  const cores = planCores();
  const mock = await spawnService('mock', pinned(cores.load, ['bun', join(import.meta.dir, '..', 'mock-upstream.ts')]), {
    ready: /"port":(\d+)/,
  });
  const mockUrl = `http://127.0.0.1:${mock.match[1]}`;
  const proxies: {
    mode: FloorMode;
    s: Awaited<ReturnType<typeof spawnService>>;
    us: number[];
    rps: number[];
    js: number[];
    http: number[];
  }[] = [];
  try {
    for (const mode of modes) {
      const s = await spawnService(
        mode.name,
        pinned(cores.server, ['bun', mode.script ?? join(import.meta.dir, '..', 'bare-proxy.ts'), '--upstream', mockUrl, ...mode.args]),
        { ready: /"port":(\d+)/ },
      );
      proxies.push({ mode, s, us: [], rps: [], js: [], http: [] });
    }
    const reqs = upstreamRequests(kind);
    for (let r = 0; r < rounds; r++)
      for (let i = 0; i < proxies.length; i++) {
        const p = proxies[(i + r) % proxies.length] as (typeof proxies)[number];
        await settle([p.s.service.pid], { maxMs: 3000 });
        const c0 = cpuMs(p.s.service.pid);
        const t0 = threadCpuMs(p.s.service.pid);
        const w = await runWrk({ url: `http://127.0.0.1:${p.s.match[1]}`, requests: reqs, connections: 32, durationS, cpu: cores.load });
        const per = (ms: number): number => (ms * 1000) / Math.max(1, w.requests);
        const threads = threadUsPerRequest(t0, threadCpuMs(p.s.service.pid), w.requests);
        p.us.push(per(cpuMs(p.s.service.pid) - c0));
        p.js.push(threads.get(JS_THREAD) ?? 0);
        p.http.push(threads.get(HTTP_THREAD) ?? 0);
        p.rps.push(w.rps);
        if (w.errorCount) console.log(p.mode.name, 'errors', w.errorCount);
      }
    return proxies.map((p) => ({
      name: p.mode.name,
      rps: median(p.rps),
      us: median(p.us),
      rounds: p.us,
      js: median(p.js),
      http: median(p.http),
    }));
  } finally {
    for (const p of proxies) await p.s.service.stop();
    await mock.service.stop();
  }
};

export const printFloor = (results: readonly FloorResult[], unit: string): void => {
  for (const p of results)
    console.log(
      p.name.padEnd(12),
      `${p.rps.toFixed(0)} req/s`,
      `${p.us.toFixed(1)} µs/${unit}`,
      `(JS thread ${p.js.toFixed(1)} + HTTP client ${p.http.toFixed(1)})`,
      p.rounds.map((x) => x.toFixed(0)).join(','),
    );
};
