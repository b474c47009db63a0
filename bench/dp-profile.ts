#!/usr/bin/env bun
/**
 * CPU µs per request of the separate data plane alone, per kind, with its management plane (the
 * gateway) pinned to the load core so that the data plane's core runs nothing else; with
 * `BENCH_DATAPLANE_BUN_ARGS="--cpu-prof-md --cpu-prof-dir=DIR"` this is the profile of that work.
 *   bun bench/dp-profile.ts [--kinds=chat-json] [--duration=8]
 */
import { join } from 'node:path';
import { startDataplane } from './lib/dataplane.ts';
import { launchGateway, prepareStore, removeScratchDirs, repoint } from './lib/gateway.ts';
import { cpuMs, pinned, planCores, settle, spawnService } from './lib/proc.ts';
import { gatewayRequests, type Kind } from './lib/requests.ts';
import { runWrk } from './lib/wrk.ts';

const value = (name: string): string | undefined => process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const kinds = (value('kinds') ?? 'chat-json').split(',') as Kind[];
const durationS = Number(value('duration') ?? 8);
const log = (s: string) => process.stderr.write(`${s}\n`);
const cores = planCores();
const mock = await spawnService('mock', pinned(cores.load, ['bun', join(import.meta.dir, 'mock-upstream.ts')]), { ready: /"port":(\d+)/ });
const mockUrl = `http://127.0.0.1:${mock.match[1]}`;
const store = await prepareStore({ mock: mockUrl, cpu: cores.load, fresh: false, log });
const gw = await launchGateway(store.setup, { cpu: cores.load });
if (store.source === 'template') await repoint(gw, mockUrl);
const dp = await startDataplane(gw, cores.server, store.keys[0] as string);
try {
  for (const k of kinds) {
    await runWrk({ url: dp.url, requests: gatewayRequests(k, store.keys), connections: 32, durationS: 2, cpu: cores.load });
    await settle([dp.service.pid], { maxMs: 3_000 });
    const c0 = cpuMs(dp.service.pid);
    const w = await runWrk({ url: dp.url, requests: gatewayRequests(k, store.keys), connections: 32, durationS, cpu: cores.load });
    console.log(JSON.stringify({ kind: k, rps: Math.round(w.rps), us_per_req: Number((((cpuMs(dp.service.pid) - c0) * 1000) / Math.max(1, w.requests)).toFixed(1)), errors: w.errorCount }));
  }
} finally {
  await dp.service.stop();
  await gw.service.stop();
  await mock.service.stop();
  removeScratchDirs();
}
