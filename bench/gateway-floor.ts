#!/usr/bin/env bun
/**
 * The floor of a gateway on Bun, non-streaming: bench/bare-proxy.ts as the bare proxy and with
 * `--work minimal` (parse, key and target lookup, serialize, parse the answer, a record object),
 * and the separate data plane is not involved: this says what the least gateway work costs on
 * this machine, against which `dataplane_ratio` and `ratio` of `bun run bench` can be read.
 * Pinned like the main bench, interleaved rounds; medians of req/s under wrk (chat-json,
 * 32 connections) and of the proxy's CPU µs per request.
 *   bun bench/gateway-floor.ts [--rounds=5] [--duration=3]
 */
import { join } from 'node:path';
import { cpuMs, pinned, planCores, settle, spawnService } from './lib/proc.ts';
import { upstreamRequests } from './lib/requests.ts';
import { median } from './lib/stats.ts';
import { runWrk } from './lib/wrk.ts';
const value = (name: string): string | undefined => process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const rounds = Number(value('rounds') ?? 5);
const durationS = Number(value('duration') ?? 3);
const cores = planCores();
const mock = await spawnService('mock', pinned(cores.load, ['bun', join(import.meta.dir, 'mock-upstream.ts')]), { ready: /"port":(\d+)/ });
const mockUrl = `http://127.0.0.1:${mock.match[1]}`;
const modes = ['none', 'minimal'];
const proxies = [] as { mode: string; s: Awaited<ReturnType<typeof spawnService>>; us: number[]; rps: number[] }[];
for (const mode of modes) {
  const s = await spawnService(mode, pinned(cores.server, ['bun', join(import.meta.dir, 'bare-proxy.ts'), '--upstream', mockUrl, '--work', mode]), { ready: /"port":(\d+)/ });
  proxies.push({ mode, s, us: [], rps: [] });
}
const reqs = upstreamRequests('chat-json');
for (let r = 0; r < rounds; r++)
  for (let i = 0; i < proxies.length; i++) {
    const p = proxies[(i + r) % proxies.length] as (typeof proxies)[number];
    const url = `http://127.0.0.1:${p.s.match[1]}`;
    await settle([p.s.service.pid], { maxMs: 3000 });
    const c0 = cpuMs(p.s.service.pid);
    const w = await runWrk({ url, requests: reqs, connections: 32, durationS, cpu: cores.load });
    p.us.push(((cpuMs(p.s.service.pid) - c0) * 1000) / Math.max(1, w.requests));
    p.rps.push(w.rps);
    if (w.errorCount) console.log(p.mode, 'errors', w.errorCount);
  }
const [bare, least] = proxies as [(typeof proxies)[number], (typeof proxies)[number]];
for (const p of proxies) console.log(p.mode.padEnd(8), `${median(p.rps).toFixed(0)} req/s`, `${median(p.us).toFixed(1)} µs/req`, p.us.map((x) => x.toFixed(0)).join(','));
console.log(JSON.stringify({ floor_ratio: Number((median(least.rps) / median(bare.rps)).toFixed(3)), bare_us: Number(median(bare.us).toFixed(1)), minimal_us: Number(median(least.us).toFixed(1)) }));
for (const p of proxies) await p.s.service.stop();
await mock.service.stop();
