#!/usr/bin/env bun
/**
 * What relaying a stream in JavaScript costs on Bun, before any gateway work: bench/bare-proxy.ts
 * in its three modes under wrk (chat-sse, 21 events, 32 connections), pinned like the main bench,
 * interleaved rounds; CPU µs per stream of the proxy process (all threads), medians.
 *   bun bench/relay-floor.ts [--rounds=5] [--duration=3]
 * Measured 2026-11-26 (2-core VM): native 61.4, js 83.1, jstext 87.5 µs/stream.
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
const modes = ['native', 'js', 'jstext'];
const proxies = [] as { mode: string; s: Awaited<ReturnType<typeof spawnService>>; us: number[] }[];
for (const mode of modes) {
  const s = await spawnService(mode, pinned(cores.server, ['bun', join(import.meta.dir, 'bare-proxy.ts'), '--upstream', mockUrl, '--relay', mode]), { ready: /"port":(\d+)/ });
  proxies.push({ mode, s, us: [] });
}
const reqs = upstreamRequests('chat-sse');
for (let r = 0; r < rounds; r++) for (let i = 0; i < proxies.length; i++) {
  const p = proxies[(i + r) % proxies.length] as (typeof proxies)[number];
  const url = `http://127.0.0.1:${p.s.match[1]}`;
  await settle([p.s.service.pid], { maxMs: 3000 });
  const c0 = cpuMs(p.s.service.pid);
  const w = await runWrk({ url, requests: reqs, connections: 32, durationS, cpu: cores.load });
  p.us.push(((cpuMs(p.s.service.pid) - c0) * 1000) / Math.max(1, w.requests));
  if (w.errorCount) console.log(p.mode, 'errors', w.errorCount);
}
for (const p of proxies) console.log(p.mode.padEnd(8), median(p.us).toFixed(1), 'µs/stream', p.us.map((x) => x.toFixed(0)).join(','));
for (const p of proxies) await p.s.service.stop();
await mock.service.stop();
