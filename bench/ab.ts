#!/usr/bin/env bun
/**
 * Paired, interleaved A/B of the gateway's CPU per request between source trees (the load side and
 * the machine are shared by both, so the noise of a shared machine mostly cancels):
 *   bun bench/ab.ts --a=/path/to/tree-a --b=/path/to/tree-b [--rounds=5] [--duration=3] [--kinds=chat-json,chat-sse,messages-x-sse]
 *                   [--a-args=--smol] [--b-args=…]   (Bun flags for that side's gateway; the trees may be the same)
 *                   [--a-env=K=V,K=V] [--b-env=…]    (environment for that side's gateway)
 *                   [--target=dataplane]             (each side a separate data plane of its tree, fed by
 *                                                     one management plane of this tree on the load core)
 * Each tree is a checkout of this repository (with node_modules). Every round runs every kind on
 * every tree in rotating order against the same mock upstream with wrk; the gateway under test is
 * pinned to one core and its CPU (all threads, /proc) is divided by the requests served. Prints the
 * median µs/request per tree and kind, their difference and the median of the per-round
 * differences (robust when the machine's speed drifts during the run), each side's peak RSS, and
 * the median split of the CPU between its JavaScript thread and Bun's HTTP client thread.
 */
import { join, resolve } from 'node:path';
import { startDataplane } from './lib/dataplane.ts';
import { launchGateway, prepareStore, removeScratchDirs, repoint } from './lib/gateway.ts';
import {
  cpuMs,
  HTTP_THREAD,
  JS_THREAD,
  pinned,
  planCores,
  rssSampler,
  type Service,
  settle,
  spawnService,
  threadCpuMs,
  threadUsPerRequest,
} from './lib/proc.ts';
import { gatewayRequests, type Kind } from './lib/requests.ts';
import { median } from './lib/stats.ts';
import { runWrk } from './lib/wrk.ts';

const argv = process.argv.slice(2);
const value = (name: string): string | undefined => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const sides = (['a', 'b'] as const).flatMap((side) => {
  const tree = value(side);
  const env = Object.fromEntries(
    (value(`${side}-env`) ?? '')
      .split(',')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  return tree ? [{ tree: resolve(tree), bunArgs: value(`${side}-args`)?.split(' ').filter(Boolean) ?? [], env }] : [];
});
const trees = sides.map((s) => [s.tree, ...s.bunArgs, ...Object.entries(s.env).map(([k, v]) => `${k}=${v}`)].join(' '));
const rounds = Number(value('rounds') ?? 5);
const durationS = Number(value('duration') ?? 3);
const kinds = (value('kinds') ?? 'chat-json,chat-sse,messages-x-sse').split(',') as Kind[];
const log = (s: string) => process.stderr.write(`${s}\n`);
if (trees.length === 0) throw new Error('usage: bun bench/ab.ts --a=TREE --b=TREE');

const cores = planCores();
const mock = await spawnService('mock', pinned(cores.load, ['bun', join(import.meta.dir, 'mock-upstream.ts')]), { ready: /"port":(\d+)/ });
const mockUrl = `http://127.0.0.1:${mock.match[1]}`;
const target = value('target') ?? 'gateway';
if (target !== 'gateway' && target !== 'dataplane') throw new Error('--target: gateway or dataplane');
interface Side {
  tree: string;
  url: string;
  service: Service;
  keys: string[];
  us: Map<Kind, number[]>;
  /** µs per request of the JavaScript thread and of Bun's HTTP client thread, per round. */
  split: Map<Kind, [number, number][]>;
  rssPeakMb: number;
}
const gateways: Side[] = [];
const others: Service[] = [];
if (target === 'dataplane') {
  const store = await prepareStore({ mock: mockUrl, cpu: cores.load, fresh: false, log });
  const mp = await launchGateway(store.setup, { cpu: cores.load });
  others.push(mp.service);
  if (store.source === 'template') await repoint(mp, mockUrl);
  for (const [i, side] of sides.entries()) {
    const dp = await startDataplane(mp, cores.server, store.keys[0] as string, side.env, { root: side.tree, bunArgs: side.bunArgs });
    gateways.push({
      tree: trees[i] as string,
      url: dp.url,
      service: dp.service,
      keys: store.keys,
      us: new Map(),
      split: new Map(),
      rssPeakMb: 0,
    });
  }
} else
  for (const [i, side] of sides.entries()) {
    const store = await prepareStore({ mock: mockUrl, cpu: cores.server, fresh: false, log });
    const gw = await launchGateway(store.setup, { cpu: cores.server, root: side.tree, bunArgs: side.bunArgs, env: side.env });
    if (store.source === 'template') await repoint(gw, mockUrl);
    gateways.push({
      tree: trees[i] as string,
      url: gw.url,
      service: gw.service,
      keys: store.keys,
      us: new Map(),
      split: new Map(),
      rssPeakMb: 0,
    });
  }
try {
  for (const g of gateways)
    for (const k of kinds)
      await runWrk({ url: g.url, requests: gatewayRequests(k, g.keys), connections: 32, durationS: 1, cpu: cores.load });
  for (let r = 0; r < rounds; r++) {
    for (const k of kinds) {
      for (let i = 0; i < gateways.length; i++) {
        const g = gateways[(i + r) % gateways.length] as Side;
        await settle([g.service.pid], { maxMs: 3_000 });
        const c0 = cpuMs(g.service.pid);
        const t0 = threadCpuMs(g.service.pid);
        const rss = rssSampler(g.service.pid, 250);
        const w = await runWrk({ url: g.url, requests: gatewayRequests(k, g.keys), connections: 32, durationS, cpu: cores.load });
        const per = (ms: number): number => (ms * 1000) / Math.max(1, w.requests);
        const us = per(cpuMs(g.service.pid) - c0);
        const t1 = threadCpuMs(g.service.pid);
        const threads = threadUsPerRequest(t0, t1, w.requests);
        g.rssPeakMb = Math.max(g.rssPeakMb, rss.stop());
        if (w.errorCount > 0) log(`${g.tree} ${k}: ${w.errorCount} errors`);
        g.us.set(k, [...(g.us.get(k) ?? []), us]);
        g.split.set(k, [...(g.split.get(k) ?? []), [threads.get(JS_THREAD) ?? 0, threads.get(HTTP_THREAD) ?? 0]]);
      }
    }
    log(`round ${r + 1}/${rounds} done`);
  }
  const rows = kinds.map((k) => {
    const m = gateways.map((g) => median(g.us.get(k) ?? []));
    const all = gateways.map((g) => (g.us.get(k) ?? []).map((x) => x.toFixed(0)).join(',')).join(' | ');
    // Δ of the medians, and the median of the per-round differences (each round runs both sides
    // back to back, so it holds when this machine's speed drifts between rounds).
    const [a, b] = gateways.map((g) => g.us.get(k) ?? []);
    const paired = a && b ? median(b.map((x, i) => x - (a[i] as number))) : undefined;
    const delta =
      m.length === 2 ? `   Δ ${((m[1] as number) - (m[0] as number)).toFixed(1)} µs, paired Δ ${(paired ?? 0).toFixed(1)} µs` : '';
    const split = gateways
      .map((g) => {
        const rows = g.split.get(k) ?? [];
        return `JS ${median(rows.map((x) => x[0])).toFixed(1)} + HTTP client ${median(rows.map((x) => x[1])).toFixed(1)}`;
      })
      .join(' | ');
    return `${k.padEnd(16)} ${m.map((x) => `${x.toFixed(1).padStart(8)} µs`).join('  ')}${delta}   (${all})\n${''.padEnd(16)} threads: ${split}`;
  });
  const peaks = gateways.map((g) => `${g.rssPeakMb.toFixed(0)} MB`).join('  |  ');
  console.log(`trees: ${trees.join('  |  ')}\n${rows.join('\n')}\npeak RSS: ${peaks}`);
} finally {
  for (const g of gateways) await g.service.stop();
  for (const o of others) await o.stop();
  await mock.service.stop();
  removeScratchDirs();
}
