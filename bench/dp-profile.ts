#!/usr/bin/env bun
/**
 * CPU µs per request of the separate data plane alone, per kind, with its management plane (the
 * gateway) pinned to the load core so that the data plane's core runs nothing else; with
 * `BENCH_DATAPLANE_BUN_ARGS="--cpu-prof-md --cpu-prof-dir=DIR"` this is the profile of that work.
 *   bun bench/dp-profile.ts [--kinds=chat-json] [--duration=8] [--stages]
 * `--stages` (one kind) profiles the data plane itself and prints where its request thread's µs go
 * by pipeline stage (bench/lib/stages.ts), beside Bun's HTTP client thread; the last line is JSON.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDataplane } from './lib/dataplane.ts';
import { launchGateway, prepareStore, removeScratchDirs, repoint } from './lib/gateway.ts';
import { cpuMs, pinned, planCores, settle, spawnService, threadCpuMs } from './lib/proc.ts';
import { gatewayRequests, type Kind } from './lib/requests.ts';
import { attribute, type CpuProfile } from './lib/stages.ts';
import { runWrk } from './lib/wrk.ts';

const argv = process.argv.slice(2);
const value = (name: string): string | undefined => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const kinds = (value('kinds') ?? 'chat-json').split(',') as Kind[];
const durationS = Number(value('duration') ?? 8);
const stages = argv.includes('--stages');
if (stages && kinds.length !== 1) throw new Error('--stages: one kind at a time');
const profileDir = stages ? mkdtempSync(join(tmpdir(), 'dp-stages-')) : undefined;
if (profileDir) process.env.BENCH_DATAPLANE_BUN_ARGS = `--cpu-prof --cpu-prof-dir=${profileDir} --cpu-prof-interval=200`;
const log = (s: string) => process.stderr.write(`${s}\n`);
const cores = planCores();
const mock = await spawnService('mock', pinned(cores.load, ['bun', join(import.meta.dir, 'mock-upstream.ts')]), { ready: /"port":(\d+)/ });
const mockUrl = `http://127.0.0.1:${mock.match[1]}`;
const store = await prepareStore({ mock: mockUrl, cpu: cores.load, fresh: false, log });
const gw = await launchGateway(store.setup, { cpu: cores.load });
if (store.source === 'template') await repoint(gw, mockUrl);
const dp = await startDataplane(gw, cores.server, store.keys[0] as string);
/** µs per request of the request (JavaScript) thread and of Bun's HTTP client thread, in the measured run. */
const split = { js: 0, http: 0 };
try {
  for (const k of kinds) {
    await runWrk({ url: dp.url, requests: gatewayRequests(k, store.keys), connections: 32, durationS: 2, cpu: cores.load });
    await settle([dp.service.pid], { maxMs: 3_000 });
    const c0 = cpuMs(dp.service.pid);
    const t0 = threadCpuMs(dp.service.pid);
    const w = await runWrk({ url: dp.url, requests: gatewayRequests(k, store.keys), connections: 32, durationS, cpu: cores.load });
    const per = (ms: number): number => (ms * 1000) / Math.max(1, w.requests);
    const t1 = threadCpuMs(dp.service.pid);
    split.js = per((t1.get('bun') ?? 0) - (t0.get('bun') ?? 0));
    split.http = per((t1.get('HTTP Client') ?? 0) - (t0.get('HTTP Client') ?? 0));
    console.log(JSON.stringify({ kind: k, rps: Math.round(w.rps), us_per_req: Number(per(cpuMs(dp.service.pid) - c0).toFixed(1)), errors: w.errorCount }));
  }
} finally {
  await dp.service.stop();
  await gw.service.stop();
  await mock.service.stop();
  removeScratchDirs();
}
if (profileDir) {
  const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile written to ${profileDir}`);
  const samples = attribute(JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile);
  rmSync(profileDir, { recursive: true, force: true });
  const total = [...samples.values()].reduce((a, b) => a + b, 0);
  const rows = [...samples].sort((a, b) => b[1] - a[1]).map(([stage, n]) => ({ stage, share: n / total, us: (split.js * n) / total }));
  console.log(`\n${kinds[0]}: request thread ${split.js.toFixed(1)} µs per request, Bun's HTTP client thread ${split.http.toFixed(1)} µs (${total} samples)`);
  for (const r of rows) console.log(`${r.us.toFixed(1).padStart(6)} µs  ${(100 * r.share).toFixed(1).padStart(5)} %  ${r.stage}`);
  console.log(JSON.stringify({ kind: kinds[0], js_us: Number(split.js.toFixed(1)), http_client_us: Number(split.http.toFixed(1)), stages: Object.fromEntries(rows.map((r) => [r.stage, Number(r.us.toFixed(2))])) }));
}
