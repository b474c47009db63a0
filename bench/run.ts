#!/usr/bin/env bun
/**
 * `bun run bench` — the gateway against a bare Bun proxy, the product floor (bench/product-proxy.ts),
 * the mock upstream itself ("direct") and, when installed, Portkey's gateway, all in the same run on
 * the same machine. See docs/benchmarks.md.
 *
 *   bun run bench                 full run (~7 min): every scenario, 3 rounds of the headline ones
 *   bun run bench -- --quick      < 1 min: headline scenarios, 1 round; last line is one JSON object
 *   options: --soak[=SECONDS]     add the memory soak (default 300 s)
 *            --fresh              provision a new store even when a template exists
 *            --no-peer            skip Portkey even when installed (quick runs skip it unless --peer)
 *            --postgres[=URL]     also measure the gateway on an external PostgreSQL store (a fresh
 *                                 database on the server at URL; default $BENCH_DATABASE_URL or
 *                                 postgres://gateway:gateway@127.0.0.1:5432/postgres)
 *            --no-governance      skip bench/governance.ts (limits + budgets in process and on Redis,
 *                                 as ratios to the same gateway without them; run by default)
 *            --no-dataplane       skip the separate data plane (`serve --role data` fed by the gateway
 *                                 as its management plane; measured by default)
 *            --no-floor           skip the product floor (bench/product-proxy.ts --work product, bodies
 *                                 json and raw; measured by default beside the bare proxy)
 *            --reuse              full run on the provisioned template instead of provisioning anew
 *            --render             only rewrite the report and plot from the latest results JSON
 *            --only=a,b           run only these scenario groups (max,fixed,c1,first,formats,fallback,churn,slow,sweep)
 *            --duration=S         seconds per measurement (default 5, quick 3)
 *            --rounds=N           rounds of the headline scenarios (default 3, quick 1)
 */
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { CUSTOMERS, KEYS_PER_CUSTOMER, removeScratchDirs, ROUTES_PER_CUSTOMER } from './lib/gateway.ts';
import { evaluateGoals, gitCommit, quickSummary, totalErrors } from './lib/goals.ts';
import { measureMetricsCost } from './lib/metrics-cost.ts';
import { renderLatest, writeResults } from './lib/output.ts';
import { checkBody } from './lib/probe.ts';
import {
  ALLOCATOR_PURGE_DELAY,
  cpuMs,
  DATAPLANE_JSC_RAM_SIZE,
  pinSelf,
  planCores,
  POSTGRES_JSC_RAM_SIZE,
  rssMb,
  rssSampler,
  settle,
} from './lib/proc.ts';
import { emptyResults, type Results, type Run } from './lib/results.ts';
import { CROSS_FORMAT_SSE, isFloor, KIND_LABEL, type Kind, streamKind, type TargetName } from './lib/requests.ts';
import { failingPrimaryLine, type MeasureOptions, runChurn, runFirstEvent, runSoak, type Target } from './lib/scenarios.ts';
import { medianOf } from './lib/stats.ts';
import { runSequential } from './lib/sequential.ts';
import { type Started, startTargets } from './lib/targets.ts';
import { runWrk } from './lib/wrk.ts';

const ROOT = resolve(import.meta.dir, '..');

// ---- options --------------------------------------------------------------------------------------

const argv = process.argv.slice(2);
const has = (name: string) => argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
const value = (name: string): string | undefined => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = has('quick');
const opts = {
  quick,
  fresh: has('fresh'),
  // Quick runs leave the peer out unless asked (--peer) to stay under a minute.
  peer: quick ? has('peer') : !has('no-peer'),
  soakS: has('soak') ? Number(value('soak') ?? 300) : 0,
  durationS: Number(value('duration') ?? (quick ? 3 : 5)),
  rounds: Number(value('rounds') ?? (quick ? 1 : 3)),
  only: value('only')?.split(',') ?? undefined,
  dataplane: !has('no-dataplane'),
  floor: !has('no-floor'),
  postgres: has('postgres')
    ? (value('postgres') ?? process.env.BENCH_DATABASE_URL ?? 'postgres://gateway:gateway@127.0.0.1:5432/postgres')
    : undefined,
};
const groupOn = (g: string, inQuick: boolean): boolean => (opts.only ? opts.only.includes(g) : quick ? inQuick : true);

const log = (s: string) => process.stderr.write(`${s}\n`);

const main = async (): Promise<void> => {
  const t0 = performance.now();
  if (!Bun.which('wrk')) {
    log('bench: wrk is not installed. It is the load generator (Debian package "wrk"):');
    log('  sudo apt-get install -y wrk        (or: apt-get install -y wrk as root)');
    process.exit(1);
  }
  const cores = planCores();
  pinSelf(cores.load);
  log(`bench: ${quick ? 'quick' : 'full'} run; ${cores.note}`);
  const started: Started = { services: [], drops: [] };
  const stopAll = async () => {
    for (const s of started.services.reverse()) await s.stop().catch(() => undefined);
  };
  process.on('SIGINT', () => {
    void stopAll().then(() => process.exit(130));
  });

  try {
    const { targets, store, gw, peer, peerStatus, pg, pgStatus, dp, dpStatus, floorStatus } = await startTargets(
      {
        quick,
        fresh: opts.fresh || (!quick && !has('reuse')),
        peer: opts.peer,
        postgres: opts.postgres,
        dataplane: opts.dataplane,
        floor: opts.floor,
      },
      cores,
      started,
      log,
    );
    const target = (n: TargetName) => targets.find((t) => t.name === n);

    // Sanity: one request of each kind through every target must succeed.
    const KINDS = Object.keys(KIND_LABEL) as Kind[];
    for (const t of targets) {
      for (const k of KINDS) {
        const gatewayOnly = CROSS_FORMAT_SSE.has(k) || k === 'fallback-json' || k === 'churn-json';
        if (!t.name.startsWith('gateway') && t.name !== 'dataplane' && gatewayOnly) continue;
        if (k === 'failing-primary' && t.name !== 'gateway') continue; // its key is the gateway store's
        const r = t.requests(k)?.[0];
        if (!r) continue;
        const res = await fetch(`${t.url}${r.path}`, { method: 'POST', headers: r.headers, body: r.body });
        const why = checkBody(streamKind(k), res.status, await res.text());
        if (why) throw new Error(`sanity check failed: ${t.name} ${k}: ${why}`);
      }
    }
    const gatewayIdleRssMb = rssMb(gw.service.pid);
    if (pg) pgStatus.idleRssMb = rssMb(pg.gw.service.pid);
    if (dp) dpStatus.idleRssMb = rssMb(dp.pid);

    // One wrk run against a target, with the target's CPU and memory.
    const measure = async (t: Target, kind: Kind, o: MeasureOptions): Promise<Run> => {
      const requests = t.requests(kind);
      if (!requests) throw new Error(`${t.name} has no ${kind} requests`);
      // Every server idle first (no deferred work of an earlier run on the shared core)…
      await settle(targets.map((x) => x.pid));
      const c0 = cpuMs(t.pid);
      const sampler = rssSampler(t.pid, 250);
      // A counted run is sequential on one connection, timed in this process on the monotonic clock (bench/lib/sequential.ts).
      const w = o.count
        ? await runSequential({ url: t.url, requests, count: o.count })
        : await runWrk({
            url: t.url,
            requests,
            connections: o.connections,
            durationS: o.durationS,
            cpu: cores.load,
            ...(o.delayMs ? { delayMs: o.delayMs } : {}),
            timeoutS: o.timeoutS ?? 10,
          });
      // …and the CPU figure includes the work a run leaves behind (batched record writes).
      await settle([t.pid]);
      const c1 = cpuMs(t.pid);
      const peak = sampler.stop();
      return {
        rps: w.rps,
        requests: w.requests,
        errors: w.errorCount,
        p50: w.latency.p50,
        p90: w.latency.p90,
        p99: w.latency.p99,
        max: w.latency.max,
        cpuUs: w.requests > 0 ? ((c1 - c0) * 1000) / w.requests : Number.NaN,
        rssMb: rssMb(t.pid),
        rssPeakMb: peak,
        connections: o.connections,
        durationS: w.durationS,
      };
    };
    const say = (label: string, t: TargetName, r: Run) =>
      log(
        `  ${label.padEnd(16)} ${t.padEnd(8)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(7)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms  cpu ${r.cpuUs.toFixed(1).padStart(6)} µs/req  rss ${r.rssMb.toFixed(0)} MB  errors ${r.errors}`,
      );

    const warm = async (kinds: Kind[], seconds: number) => {
      for (const t of targets) for (const k of kinds) if (t.requests(k)) await measure(t, k, { connections: 64, durationS: seconds });
    };

    const results: Results = emptyResults({
      date: new Date().toISOString(),
      quick,
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', cores: cores.note },
      bun: Bun.version,
      allocatorPurgeDelay: ALLOCATOR_PURGE_DELAY,
      jscRamSize: { gateway: process.env.BUN_JSC_forceRAMSize ?? '', postgres: POSTGRES_JSC_RAM_SIZE, dataplane: DATAPLANE_JSC_RAM_SIZE },
      commit: gitCommit(),
      durationS: opts.durationS,
      rounds: opts.rounds,
      snapshot: {
        customers: CUSTOMERS,
        routes: CUSTOMERS * ROUTES_PER_CUSTOMER,
        keys: CUSTOMERS * KEYS_PER_CUSTOMER,
        source: store.source === 'fresh' ? 'provisioned in this run' : 'copy of a store provisioned through the API by an earlier run',
        templateCreatedAt: store.templateCreatedAt,
      },
      provisioning: store.timings,
      gatewayStartMs: gw.startMs,
      gatewayIdleRssMb,
      peer: peerStatus,
      postgres: pgStatus,
      dataplane: dpStatus,
      floor: floorStatus,
      elapsedS: 0,
    });

    // ---- warm-up: JIT, connection pools — every path the headline measures (the cross-format
    // stream's code was cold in its first round before, its JIT compiling inside the window) ----
    log('warm-up…');
    await warm(['chat-json', 'chat-sse', 'messages-x-sse'], 3);

    // ---- max rate, headline: rounds interleaved across targets ----
    const maxRate = async (kind: Kind, names: TargetName[], rounds: number) => {
      const perTarget: Partial<Record<TargetName, Run[]>> = {};
      for (let r = 0; r < rounds; r++) {
        for (const n of names) {
          const t = target(n);
          if (!t?.requests(kind)) continue;
          const run = await measure(t, kind, { connections: 64, durationS: opts.durationS });
          say(`${kind} r${r + 1}`, n, run);
          const runs = perTarget[n] ?? [];
          perTarget[n] = runs;
          runs.push(run);
        }
      }
      results.rounds[kind] = perTarget;
      const med: Partial<Record<TargetName, Run>> = {};
      for (const [n, runs] of Object.entries(perTarget) as [TargetName, Run[]][]) med[n] = medianOf(runs);
      results.max[kind] = { ...results.max[kind], ...med };
    };
    if (groupOn('max', true)) {
      log('max rate @64 connections…');
      // The product floor in the same interleaved rounds: the goals are ratios to it.
      await maxRate(
        'chat-json',
        ['direct', 'bare', 'floor-json', 'floor-raw', 'gateway', 'gateway-pg', 'dataplane', 'portkey'],
        opts.rounds,
      );
      await maxRate(
        'chat-sse',
        ['direct', 'bare', 'floor-json', 'floor-raw', 'gateway', 'gateway-pg', 'dataplane', 'portkey'],
        opts.rounds,
      );
      // Cross-format streaming (Messages client → OpenAI upstream): the bare proxy's request for it
      // is the same-wire chat stream, so its chat-sse figure of this run is the reference.
      if (quick) await maxRate('messages-x-sse', ['gateway'], opts.rounds);
    }

    // ---- other formats and the fallback path ----
    if (groupOn('formats', false)) {
      log('formats @64 connections…');
      // gemini-sse and converse-sse: cross-format streams of the §13 clients, to set beside messages-x-sse.
      for (const kind of ['messages-sse', 'messages-x-sse', 'responses-sse', 'gemini-sse', 'converse-sse'] as Kind[]) {
        await measure(target('gateway') as Target, kind, { connections: 64, durationS: 2 });
        await maxRate(kind, kind === 'messages-sse' ? ['direct', 'bare', 'gateway'] : ['gateway'], Math.min(2, opts.rounds));
      }
    }
    if (groupOn('fallback', false)) {
      log('fallback @64 connections…');
      await measure(target('gateway') as Target, 'fallback-json', { connections: 64, durationS: 2 });
      await maxRate('fallback-json', ['gateway'], Math.min(2, opts.rounds));
      // The sanity requests opened the primary's breaker: goal ≤ 1.10× chat-json's CPU per request.
      await maxRate('failing-primary', ['gateway'], Math.min(2, opts.rounds));
      log(failingPrimaryLine(results));
    }

    // ---- fixed moderate rate: added latency over direct ----
    if (groupOn('fixed', true)) {
      const rate = 200;
      const conns = 4;
      log(`fixed rate ${rate} req/s (${conns} connections, paced)…`);
      const runs: Partial<Record<TargetName, Run>> = {};
      for (const t of targets) {
        // The bare proxy too: the same Bun fetch path, so "added over bare" is the gateway's own share.
        if ((quick && t.name !== 'direct' && t.name !== 'bare' && t.name !== 'gateway') || isFloor(t.name)) continue;
        // Pace each connection so that conns / (delay + latency) ≈ rate.
        const run = await measure(t, 'chat-json', {
          connections: conns,
          durationS: quick ? 3 : Math.max(8, opts.durationS),
          delayMs: (conns * 1000) / rate - 0.3,
        });
        say('fixed 200/s', t.name, run);
        runs[t.name] = run;
      }
      results.fixed = { rate, runs };
    }

    // ---- one connection: added latency of sequential requests over direct ----
    if (groupOn('c1', true)) {
      const count = 2000;
      log(`one connection, ${count} sequential requests…`);
      const runs: Partial<Record<TargetName, Run>> = {};
      for (const n of ['direct', 'bare', 'gateway'] as TargetName[]) {
        const t = target(n);
        if (!t) continue;
        const run = await measure(t, 'chat-json', { connections: 1, durationS: 0, count });
        say('c1 ×2000', n, run);
        runs[n] = run;
      }
      results.c1 = { requests: count, runs };
    }

    // ---- first-event latency at 100 streams/s ----
    if (groupOn('first', true))
      results.firstEvent.push(...(await runFirstEvent(target, () => settle(targets.map((x) => x.pid)), quick, log)));

    // ---- configuration churn under load ----
    if (groupOn('churn', false)) results.churn = await runChurn(measure, target('gateway') as Target, gw, opts.durationS, say, log);

    // ---- slow upstream, 1k concurrent streams ----
    if (groupOn('slow', false)) {
      log('slow upstream, 1,000 concurrent streams…');
      const slow: Partial<Record<TargetName, Run>> = {};
      for (const t of targets) {
        if (!t.requests('slow-sse')) continue;
        const run = await measure(t, 'slow-sse', { connections: 1000, durationS: Math.max(8, opts.durationS * 2), timeoutS: 30 });
        say('slow 1k', t.name, run);
        slow[t.name] = run;
      }
      results.slow = slow;
    }

    // ---- latency vs load ----
    if (groupOn('sweep', false)) {
      log('latency vs load (connections 1, 4, 16, 64, 256)…');
      const sweep: Partial<Record<TargetName, Run[]>> = {};
      for (const c of [1, 4, 16, 64, 256]) {
        for (const t of targets) {
          if (isFloor(t.name)) continue;
          const run = await measure(t, 'chat-json', { connections: c, durationS: 3 });
          say(`sweep c=${c}`, t.name, run);
          const runs = sweep[t.name] ?? [];
          sweep[t.name] = runs;
          runs.push(run);
        }
      }
      results.sweep = sweep;
    }

    // ---- soak ----
    if (opts.soakS > 0) results.soak = await runSoak(measure, target('gateway') as Target, store.keys, opts.soakS, log);

    // ---- totals, goals, output ----
    const errors = totalErrors(results);
    results.errorsTotal = errors;
    // In this process, after the load runs: what the metrics observer adds per request.
    results.meta.metricsCpuUsPerReq = await measureMetricsCost();
    if (!has('no-governance')) results.meta.limits = await measureGovernance(quick ? 3 : opts.durationS);
    results.goals = evaluateGoals(results);
    results.meta.elapsedS = (performance.now() - t0) / 1000;

    log(writeResults(results));

    const summary = quickSummary(results, { peer: peer !== undefined, pg: pg !== undefined, dataplane: dp !== undefined });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    await stopAll();
    for (const drop of started.drops) await drop().catch(() => undefined);
    removeScratchDirs();
  }
};

/** bench/governance.ts as a child process (its own gateways, mock and Redis); its last line is JSON. */
const measureGovernance = async (durationS: number): Promise<{ memoryRatio: number | null; redisRatio: number | null }> => {
  log('governance: limits + budgets in process and on Redis (bench/governance.ts)…');
  const p = Bun.spawn(['bun', join(import.meta.dir, 'governance.ts'), `--duration=${durationS}`], { stdout: 'pipe', stderr: 'inherit' });
  const out = await new Response(p.stdout).text();
  await p.exited;
  const last = out.trim().split('\n').at(-1) ?? '';
  try {
    const j: unknown = JSON.parse(last);
    const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
    if (typeof j === 'object' && j !== null)
      return { memoryRatio: num(Reflect.get(j, 'limits_memory_vs_gateway')), redisRatio: num(Reflect.get(j, 'limits_redis_vs_gateway')) };
  } catch {
    log(`governance: no JSON line (exit ${p.exitCode})`);
  }
  return { memoryRatio: null, redisRatio: null };
};

if (!existsSync(join(ROOT, 'src', 'main.ts'))) {
  log('bench: run from the repository (src/main.ts not found)');
  process.exit(2);
}
await (has('render') ? renderLatest(quick) : main()).catch((e: unknown) => {
  log(`bench: failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
