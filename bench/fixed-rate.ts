#!/usr/bin/env bun
/**
 * Added latency at a moderate rate, gateway against the bare proxy, in paired rounds: each round
 * saturates the target for 3 s (so the run meets what a busy gateway leaves behind: record batches,
 * collections), waits until it is idle, then sends chat-json at 200 req/s for 5 s on 4 paced
 * connections, and prints p50/p90/p99/max — the gateway (embedded store) and the bare proxy in turn,
 * both pinned to the server core.
 *   bun bench/fixed-rate.ts [--rounds=4]
 */
import { join } from 'node:path';
import { launchGateway, prepareStore, removeScratchDirs, repoint } from './lib/gateway.ts';
import { pinned, planCores, settle, spawnService } from './lib/proc.ts';
import { gatewayRequests, upstreamRequests } from './lib/requests.ts';
import { runWrk } from './lib/wrk.ts';

const rounds = Number(
  process.argv
    .slice(2)
    .find((a) => a.startsWith('--rounds='))
    ?.slice(9) ?? 4,
);
const cores = planCores();
const log = (s: string) => process.stderr.write(`${s}\n`);
const mock = await spawnService('mock', pinned(cores.load, ['bun', join(import.meta.dir, 'mock-upstream.ts')]), { ready: /"port":(\d+)/ });
const mockUrl = `http://127.0.0.1:${mock.match[1]}`;
const store = await prepareStore({ mock: mockUrl, cpu: cores.server, fresh: false, log });
const gw = await launchGateway(store.setup, { cpu: cores.server });
if (store.source === 'template') await repoint(gw, mockUrl);
const bare = await spawnService('bare', pinned(cores.server, ['bun', join(import.meta.dir, 'bare-proxy.ts'), '--upstream', mockUrl]), {
  ready: /"port":(\d+)/,
});
const targets = [
  { name: 'gateway', url: gw.url, requests: gatewayRequests('chat-json', store.keys), pid: gw.service.pid },
  { name: 'bare', url: `http://127.0.0.1:${bare.match[1]}`, requests: upstreamRequests('chat-json'), pid: bare.service.pid },
];
try {
  for (let r = 0; r < rounds; r++)
    for (const t of targets) {
      await runWrk({ url: t.url, requests: t.requests, connections: 32, durationS: 3, cpu: cores.load });
      await settle([t.pid]);
      const w = await runWrk({
        url: t.url,
        requests: t.requests,
        connections: 4,
        durationS: 5,
        cpu: cores.load,
        delayMs: (4 * 1000) / 200 - 0.3,
      });
      console.log(
        JSON.stringify({
          round: r + 1,
          target: t.name,
          rps: Math.round(w.rps),
          p50_ms: w.latency.p50,
          p90_ms: w.latency.p90,
          p99_ms: w.latency.p99,
          max_ms: w.latency.max,
          errors: w.errorCount,
        }),
      );
    }
} finally {
  await bare.service.stop();
  await gw.service.stop();
  await mock.service.stop();
  removeScratchDirs();
}
