#!/usr/bin/env bun
/**
 * CPU µs per request of the separate data plane alone, per kind, with its management plane (the
 * gateway) pinned to the load core so that the data plane's core runs nothing else; with
 * `BENCH_DATAPLANE_BUN_ARGS="--cpu-prof-md --cpu-prof-dir=DIR"` this is the profile of that work.
 *   bun bench/dp-profile.ts [--kinds=chat-json] [--duration=8] [--stages] [--target=gateway]
 * `--stages` (one kind) profiles the process under test and prints where its request thread's µs
 * go by pipeline stage (bench/lib/stages.ts), and every thread's µs per request (Bun's HTTP
 * client, the embedded store's and the propagation's workers, the JIT, the allocator); the last
 * line is JSON. `--target=gateway` measures the embedded gateway (PGlite) on that core instead.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDataplane } from './lib/dataplane.ts';
import { launchGateway, prepareStore, removeScratchDirs, repoint } from './lib/gateway.ts';
import { cpuMs, JS_THREAD, pinned, planCores, settle, spawnService, threadCpuMs, threadUsPerRequest } from './lib/proc.ts';
import { gatewayRequests, type Kind } from './lib/requests.ts';
import { attribute, type CpuProfile } from './lib/stages.ts';
import { runWrk } from './lib/wrk.ts';

const argv = process.argv.slice(2);
const value = (name: string): string | undefined => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const kinds = (value('kinds') ?? 'chat-json').split(',') as Kind[];
const durationS = Number(value('duration') ?? 8);
const stages = argv.includes('--stages');
const target = value('target') ?? 'dataplane';
if (target !== 'dataplane' && target !== 'gateway') throw new Error('--target: dataplane or gateway');
if (stages && kinds.length !== 1) throw new Error('--stages: one kind at a time');
const profileDir = stages ? mkdtempSync(join(tmpdir(), 'dp-stages-')) : undefined;
const profileArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--cpu-prof-interval=200'] : [];
const log = (s: string) => process.stderr.write(`${s}\n`);
const cores = planCores();
const mock = await spawnService('mock', pinned(cores.load, ['bun', join(import.meta.dir, 'mock-upstream.ts')]), { ready: /"port":(\d+)/ });
const mockUrl = `http://127.0.0.1:${mock.match[1]}`;
const store = await prepareStore({ mock: mockUrl, cpu: cores.load, fresh: false, log });
// The gateway under test has the server core; as a data plane's management plane, the load core.
const gw = await launchGateway(store.setup, target === 'gateway' ? { cpu: cores.server, bunArgs: profileArgs } : { cpu: cores.load });
if (store.source === 'template') await repoint(gw, mockUrl);
const dp =
  target === 'dataplane'
    ? await startDataplane(gw, cores.server, store.keys[0] as string, {}, profileDir ? { bunArgs: profileArgs } : {})
    : undefined;
const tested = dp ? { url: dp.url, pid: dp.service.pid } : { url: gw.url, pid: gw.service.pid };
/** µs per request of each thread (by name) of the process under test, in the measured run. */
let threads = new Map<string, number>();
try {
  for (const k of kinds) {
    await runWrk({ url: tested.url, requests: gatewayRequests(k, store.keys), connections: 32, durationS: 2, cpu: cores.load });
    await settle([tested.pid], { maxMs: 3_000 });
    const c0 = cpuMs(tested.pid);
    const t0 = threadCpuMs(tested.pid);
    const w = await runWrk({ url: tested.url, requests: gatewayRequests(k, store.keys), connections: 32, durationS, cpu: cores.load });
    const per = (ms: number): number => (ms * 1000) / Math.max(1, w.requests);
    threads = new Map([...threadUsPerRequest(t0, threadCpuMs(tested.pid), w.requests)].filter(([, us]) => us >= 0.05));
    console.log(
      JSON.stringify({
        target,
        kind: k,
        rps: Math.round(w.rps),
        us_per_req: Number(per(cpuMs(tested.pid) - c0).toFixed(1)),
        errors: w.errorCount,
      }),
    );
  }
} finally {
  await dp?.service.stop();
  await gw.service.stop();
  await mock.service.stop();
  removeScratchDirs();
}
if (profileDir) {
  // The main thread's profile (workers, when they write one, name theirs after their own thread).
  const files = readdirSync(profileDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  const file = files[0];
  if (!file) throw new Error(`no profile written to ${profileDir}`);
  const samples = attribute(JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile);
  rmSync(profileDir, { recursive: true, force: true });
  const js = threads.get(JS_THREAD) ?? 0;
  const total = [...samples.values()].reduce((a, b) => a + b, 0);
  const rows = [...samples].sort((a, b) => b[1] - a[1]).map(([stage, n]) => ({ stage, us: (js * n) / total, share: n / total }));
  const others = [...threads].filter(([name]) => name !== JS_THREAD).sort((a, b) => b[1] - a[1]);
  console.log(`\n${target}, ${kinds[0]}: request thread ${js.toFixed(1)} µs per request (${total} samples)`);
  for (const r of rows) console.log(`${r.us.toFixed(1).padStart(6)} µs  ${(100 * r.share).toFixed(1).padStart(5)} %  ${r.stage}`);
  console.log('other threads:');
  for (const [name, us] of others) console.log(`${us.toFixed(1).padStart(6)} µs  ${name}`);
  console.log(
    JSON.stringify({
      target,
      kind: kinds[0],
      request_thread_us: Number(js.toFixed(1)),
      stages: Object.fromEntries(rows.map((r) => [r.stage, Number(r.us.toFixed(2))])),
      threads: Object.fromEntries(others.map(([name, us]) => [name, Number(us.toFixed(2))])),
    }),
  );
}
