/** The goals of docs/benchmarks.md evaluated against a run's results, and the commit measured. */
import { resolve } from 'node:path';
import type { Kind } from './requests.ts';
import type { Results, Run } from './results.ts';
import { ratio } from './stats.ts';

const ROOT = resolve(import.meta.dir, '..', '..');

/** The commit measured, marked when src/ has uncommitted changes. */
export const gitCommit = (): string | undefined => {
  const head = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: ROOT }).stdout.toString().trim();
  if (!head) return undefined;
  const dirty = Bun.spawnSync(['git', 'status', '--porcelain', 'src'], { cwd: ROOT }).stdout.toString().trim() !== '';
  return dirty ? `${head} + uncommitted changes in src/` : head;
};

export const round3 = (v: number): number | null => (Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null);

/** The thresholds of the hot path's goals: relative to the product floor of the same run, or to the bare proxy. */
export const GOALS = {
  /** Separate data plane, non-streaming req/s ÷ the floor's. */
  dataplaneVsFloor: 0.9,
  /** Separate data plane, streams/s ÷ the floor's streams/s. */
  dataplaneStreamVsFloor: 0.9,
  /** Embedded gateway, same-format streams/s ÷ the floor's streams/s. */
  streamVsFloor: 0.8,
  /** Embedded gateway, non-streaming req/s ÷ the bare proxy's. */
  ratio: 0.5,
  /** Cross-format streams/s ÷ the bare proxy's chat streams/s. */
  crossStreamRatio: 0.35,
  /** At one connection, the gateway's added p99 over direct may exceed the bare proxy's by this many µs. */
  c1P99OverBareUs: 150,
} as const;

/**
 * The product floor of a scenario: the cheaper (higher req/s) of bench/product-proxy.ts with
 * `--bodies json` and `--bodies raw` in the same run, or undefined when it was not measured.
 */
export const productFloor = (r: Results, kind: Kind): { run: Run; bodies: 'json' | 'raw' } | undefined => {
  const json = r.max[kind]?.['floor-json'];
  const raw = r.max[kind]?.['floor-raw'];
  if (json && (!raw || json.rps >= raw.rps)) return { run: json, bodies: 'json' };
  return raw ? { run: raw, bodies: 'raw' } : undefined;
};

/** Gateway (or bare proxy) minus direct at one connection, whole µs (wrk's resolution): p50 and p99. */
const c1Added = (r: Results, n: 'gateway' | 'bare'): { p50: number; p99: number } => {
  const d = r.c1?.runs.direct;
  const t = r.c1?.runs[n];
  const us = (ms: number) => Math.round(ms * 1000);
  return d && t ? { p50: us(t.p50 - d.p50), p99: us(t.p99 - d.p99) } : { p50: Number.NaN, p99: Number.NaN };
};

/** The figures the floor-relative goals judge, and whether each is met (undefined: not measured). */
export const headline = (r: Results) => {
  const j = r.max['chat-json'];
  const s = r.max['chat-sse'];
  const floor = productFloor(r, 'chat-json');
  const floorS = productFloor(r, 'chat-sse');
  const at = (v: number, min: number): boolean | undefined => (Number.isFinite(v) ? v >= min : undefined);
  const dataplaneVsFloor = ratio(j?.dataplane?.rps, floor?.run.rps);
  const dataplaneStreamVsFloor = ratio(s?.dataplane?.rps, floorS?.run.rps);
  const streamVsFloor = ratio(s?.gateway?.rps, floorS?.run.rps);
  const gatewayRatio = ratio(j?.gateway?.rps, j?.bare?.rps);
  const crossStreamRatio = ratio(r.max['messages-x-sse']?.gateway?.rps, r.max['messages-x-sse']?.bare?.rps ?? s?.bare?.rps);
  const c1 = c1Added(r, 'gateway');
  const bareC1 = c1Added(r, 'bare');
  const c1Over = c1.p99 - bareC1.p99;
  return {
    floor,
    floorS,
    floorRatio: ratio(floor?.run.rps, j?.bare?.rps),
    floorStreamRatio: ratio(floorS?.run.rps, s?.bare?.rps),
    dataplaneVsFloor: { value: dataplaneVsFloor, met: at(dataplaneVsFloor, GOALS.dataplaneVsFloor) },
    dataplaneStreamVsFloor: { value: dataplaneStreamVsFloor, met: at(dataplaneStreamVsFloor, GOALS.dataplaneStreamVsFloor) },
    streamVsFloor: { value: streamVsFloor, met: at(streamVsFloor, GOALS.streamVsFloor) },
    ratio: { value: gatewayRatio, met: at(gatewayRatio, GOALS.ratio) },
    crossStreamRatio: { value: crossStreamRatio, met: at(crossStreamRatio, GOALS.crossStreamRatio) },
    c1,
    bareC1,
    c1Met: Number.isFinite(c1Over) ? c1Over <= GOALS.c1P99OverBareUs : undefined,
  };
};

/**
 * The hot path's goals: ratios to the product floor (bench/product-proxy.ts) or to the bare Bun
 * proxy of the same run, the added latency relative to the bare proxy's, RSS per store.
 */
export const evaluateGoals = (r: Results): Results['goals'] => {
  const out: Results['goals'] = [];
  const pct = (v: number) => (Number.isFinite(v) ? `${(v * 100).toFixed(0)}%` : '—');
  const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)} ms` : '—');
  const check = (v: number, ok: (v: number) => boolean) => (Number.isFinite(v) ? ok(v) : undefined);
  const j = r.max['chat-json'];
  const s = r.max['chat-sse'];
  const cpu = (v: number | undefined) => (v === undefined ? '' : ` (${v.toFixed(0)} µs/req, bare ${j?.bare?.cpuUs.toFixed(0)})`);
  const h = headline(r);
  const x1 = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)} × floor` : 'floor not run');
  const floorOf = (f: typeof h.floor, bareRatio: number) => (f ? `; floor ${pct(bareRatio)} of bare, bodies ${f.bodies}` : '');
  const cpuOf = (v: number | undefined) => (v === undefined ? '' : `; ${v.toFixed(0)} µs/req, bare ${j?.bare?.cpuUs.toFixed(0)}`);
  if (h.floor || h.floorS) {
    const both = (k: Kind) =>
      `json ${pct(ratio(r.max[k]?.['floor-json']?.rps, r.max[k]?.bare?.rps))}, raw ${pct(ratio(r.max[k]?.['floor-raw']?.rps, r.max[k]?.bare?.rps))}`;
    out.push({
      goal: 'Product floor ÷ bare proxy, non-streaming / streams (the cheaper of bodies json and raw)',
      target: '—',
      value: `${pct(h.floorRatio)} (${both('chat-json')}${h.floor ? `; ${h.floor.run.cpuUs.toFixed(0)} µs/req` : ''}) / ${pct(h.floorStreamRatio)} (${both('chat-sse')})`,
      met: undefined,
    });
  }
  const dpRss = Math.max(j?.dataplane?.rssPeakMb ?? 0, s?.dataplane?.rssPeakMb ?? 0);
  if (dpRss) {
    const dpRatio = ratio(j?.dataplane?.rps, j?.bare?.rps);
    out.push({
      goal: 'Separate data plane, non-streaming req/s ÷ product floor',
      target: `≥ ${GOALS.dataplaneVsFloor} × floor`,
      value: `${x1(h.dataplaneVsFloor.value)} (${pct(dpRatio)} of bare${cpuOf(j?.dataplane?.cpuUs)}${floorOf(h.floor, h.floorRatio)})`,
      met: h.dataplaneVsFloor.met,
    });
    out.push({
      goal: 'Separate data plane, streams/s ÷ product floor streams',
      target: `≥ ${GOALS.dataplaneStreamVsFloor} × floor`,
      value: `${x1(h.dataplaneStreamVsFloor.value)} (${pct(ratio(s?.dataplane?.rps, s?.bare?.rps))} of bare${floorOf(h.floorS, h.floorStreamRatio)})`,
      met: h.dataplaneStreamVsFloor.met,
    });
  }
  out.push({
    goal: 'Embedded gateway, non-streaming req/s ÷ bare proxy',
    target: `≥ ${pct(GOALS.ratio)}`,
    value: `${pct(h.ratio.value)}${cpu(j?.gateway?.cpuUs)}`,
    met: h.ratio.met,
  });
  const pgRatio = ratio(j?.['gateway-pg']?.rps, j?.bare?.rps);
  if (Number.isFinite(pgRatio))
    out.push({
      goal: 'PostgreSQL-store gateway, non-streaming ÷ bare proxy (no goal of its own)',
      target: '—',
      value: `${pct(pgRatio)}${cpu(j?.['gateway-pg']?.cpuUs)}`,
      met: undefined,
    });
  out.push({
    goal: 'Embedded gateway, same-format streams/s ÷ product floor streams',
    target: `≥ ${GOALS.streamVsFloor} × floor`,
    value: `${x1(h.streamVsFloor.value)} (${pct(ratio(s?.gateway?.rps, s?.bare?.rps))} of bare${floorOf(h.floorS, h.floorStreamRatio)})`,
    met: h.streamVsFloor.met,
  });
  out.push({
    goal: 'Cross-format streams/s (Messages → OpenAI) ÷ bare proxy',
    target: `≥ ${pct(GOALS.crossStreamRatio)}`,
    value: pct(h.crossStreamRatio.value),
    met: h.crossStreamRatio.met,
  });
  const inProcess = r.meta.limits?.memoryRatio ?? Number.NaN;
  const onRedis = r.meta.limits?.redisRatio ?? Number.NaN;
  const shown = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'not run');
  out.push({
    goal: 'Limits + budgets in process ÷ the same gateway without them',
    target: '≥ 0.9',
    value: shown(inProcess),
    met: check(inProcess, (v) => v >= 0.9),
  });
  out.push({
    goal: 'Limits + budgets on Redis ÷ the same gateway without them',
    target: '≥ 0.8',
    value: shown(onRedis),
    met: check(onRedis, (v) => v >= 0.8),
  });
  const added = (r.fixed?.runs.gateway?.p99 ?? Number.NaN) - (r.fixed?.runs.direct?.p99 ?? Number.NaN);
  const bareAdded = (r.fixed?.runs.bare?.p99 ?? Number.NaN) - (r.fixed?.runs.direct?.p99 ?? Number.NaN);
  // Relative to the bare proxy of the same run: without it the goal cannot be judged.
  const bareShown = Number.isFinite(bareAdded) ? ms(bareAdded) : 'not run';
  out.push({
    goal: `Added p99 at ${r.fixed?.rate ?? 200} req/s over direct`,
    target: "≤ the bare proxy's + 1 ms",
    value: `${ms(added)} (bare proxy ${bareShown})`,
    met: check(added - bareAdded, (v) => v <= 1),
  });
  const us = (v: number) => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(0)} µs` : '—');
  out.push({
    goal: `Added latency at one connection (${r.c1?.requests ?? 2000} sequential requests), p99 over direct`,
    target: `≤ the bare proxy's + ${GOALS.c1P99OverBareUs} µs`,
    value: r.c1 ? `${us(h.c1.p99)} (p50 ${us(h.c1.p50)}; bare proxy ${us(h.bareC1.p99)}, p50 ${us(h.bareC1.p50)})` : 'not run',
    met: h.c1Met,
  });
  const fe = r.firstEvent.find((f) => f.target === 'gateway' && f.kind === 'chat-sse');
  const feAdded = fe?.addedP50 ?? Number.NaN;
  out.push({
    goal: 'First-event latency over direct (streams, p50)',
    target: '≤ 1 ms',
    value: fe ? `${ms(feAdded)} (p99 ${ms(fe.addedP99)})` : '—',
    met: check(feAdded, (v) => v <= 1),
  });
  const rss = Math.max(j?.gateway?.rssPeakMb ?? 0, s?.gateway?.rssPeakMb ?? 0, r.slow?.gateway?.rssPeakMb ?? 0);
  out.push({
    goal: 'RSS under load, embedded store (PGlite included)',
    target: '≤ 400 MB',
    value: rss ? `${rss.toFixed(0)} MB (idle after start ${r.meta.gatewayIdleRssMb.toFixed(0)} MB)` : '—',
    met: rss ? rss <= 400 : undefined,
  });
  const pgRss = Math.max(j?.['gateway-pg']?.rssPeakMb ?? 0, s?.['gateway-pg']?.rssPeakMb ?? 0);
  if (pgRss)
    out.push({
      goal: 'RSS under load, PostgreSQL store',
      target: '≤ 200 MB',
      value: `${pgRss.toFixed(0)} MB (idle ${r.meta.postgres.idleRssMb?.toFixed(0) ?? '—'} MB)`,
      met: pgRss <= 200,
    });
  if (dpRss)
    out.push({
      goal: 'RSS under load, separate data plane',
      target: '≤ 100 MB',
      value: `${dpRss.toFixed(0)} MB (idle ${r.meta.dataplane?.idleRssMb?.toFixed(0) ?? '—'} MB)`,
      met: dpRss <= 100,
    });
  const pk = ratio(j?.gateway?.rps, j?.portkey?.rps);
  out.push({
    goal: 'Non-streaming req/s ÷ Portkey on Bun',
    target: '≥ 3×',
    value: Number.isFinite(pk) ? `${pk.toFixed(1)}×` : 'not run',
    met: check(pk, (v) => v >= 3),
  });
  if (r.soak) {
    out.push({
      goal: `RSS flat over a ${Math.round(r.soak.segments.at(-1)?.t ?? 0)} s soak`,
      target: '< 1 MB/min',
      value: `${r.soak.slopeMbPerMin.toFixed(2)} MB/min over the second half; first→last segment ${r.soak.growthMb >= 0 ? '+' : ''}${r.soak.growthMb.toFixed(0)} MB (RSS ${Math.min(...r.soak.segments.map((x) => x.rssMb)).toFixed(0)}–${Math.max(...r.soak.segments.map((x) => x.rssMb)).toFixed(0)} MB)`,
      met: r.soak.slopeMbPerMin < 1,
    });
  } else out.push({ goal: 'RSS flat over a 5-minute soak', target: '< 1 MB/min', value: 'not run (--soak)', met: undefined });
  out.push({ goal: 'Zero errors in every scenario', target: '0', value: String(r.errorsTotal), met: r.errorsTotal === 0 });
  return out;
};

/** Failed requests over every run of a benchmark. */
export const totalErrors = (res: Results): number => {
  let errors = 0;
  for (const byTarget of Object.values(res.rounds))
    for (const runs of Object.values(byTarget ?? {})) for (const r of runs ?? []) errors += r.errors;
  for (const r of Object.values(res.fixed?.runs ?? {})) errors += r?.errors ?? 0;
  for (const r of Object.values(res.c1?.runs ?? {})) errors += r?.errors ?? 0;
  for (const f of res.firstEvent) errors += f.result.errors;
  if (res.churn) errors += res.churn.steady.errors + res.churn.churn.errors;
  for (const r of Object.values(res.slow ?? {})) errors += r?.errors ?? 0;
  for (const runs of Object.values(res.sweep ?? {})) for (const r of runs ?? []) errors += r.errors;
  for (const s of res.soak?.segments ?? []) errors += s.errors;
  return errors;
};

/** The one-line JSON summary printed last by `bench -- --quick` (and by full runs). */
export const quickSummary = (
  r: Results,
  ran: { peer: boolean; pg: boolean; dataplane?: boolean },
): Record<string, number | boolean | null> => {
  const g = r.max['chat-json'];
  const s = r.max['chat-sse'];
  const h = headline(r);
  const us = (v: number) => (Number.isFinite(v) ? Math.round(v) : null);
  return {
    gateway_rps: Math.round(g?.gateway?.rps ?? Number.NaN),
    bare_rps: Math.round(g?.bare?.rps ?? Number.NaN),
    direct_rps: Math.round(g?.direct?.rps ?? Number.NaN),
    ratio: round3(ratio(g?.gateway?.rps, g?.bare?.rps)),
    gateway_stream_rps: Math.round(s?.gateway?.rps ?? Number.NaN),
    bare_stream_rps: Math.round(s?.bare?.rps ?? Number.NaN),
    stream_ratio: round3(ratio(s?.gateway?.rps, s?.bare?.rps)),
    cross_stream_ratio: round3(h.crossStreamRatio.value),
    // The product floor (bench/product-proxy.ts --work product; the cheaper of bodies json and raw) ÷ the bare proxy.
    floor_ratio: round3(h.floorRatio),
    floor_stream_ratio: round3(h.floorStreamRatio),
    floor_cpu_us_per_req: round3(h.floor?.run.cpuUs ?? Number.NaN),
    // The embedded gateway's same-format streams ÷ the floor's, and the goals' flags (null: not measured).
    stream_vs_floor: round3(h.streamVsFloor.value),
    ratio_met: h.ratio.met ?? null,
    stream_vs_floor_met: h.streamVsFloor.met ?? null,
    cross_stream_ratio_met: h.crossStreamRatio.met ?? null,
    cpu_us_per_req: round3(g?.gateway?.cpuUs ?? Number.NaN),
    metrics_cpu_us_per_req: round3(r.meta.metricsCpuUsPerReq ?? Number.NaN),
    bare_cpu_us_per_req: round3(g?.bare?.cpuUs ?? Number.NaN),
    added_p50_ms: round3((r.fixed?.runs.gateway?.p50 ?? Number.NaN) - (r.fixed?.runs.direct?.p50 ?? Number.NaN)),
    added_p99_ms: round3((r.fixed?.runs.gateway?.p99 ?? Number.NaN) - (r.fixed?.runs.direct?.p99 ?? Number.NaN)),
    // The same figures for the bare proxy: what Bun's fetch path alone adds at that rate.
    bare_added_p50_ms: round3((r.fixed?.runs.bare?.p50 ?? Number.NaN) - (r.fixed?.runs.direct?.p50 ?? Number.NaN)),
    bare_added_p99_ms: round3((r.fixed?.runs.bare?.p99 ?? Number.NaN) - (r.fixed?.runs.direct?.p99 ?? Number.NaN)),
    // One connection, 2,000 sequential requests: target minus direct, µs.
    c1_added_p50_us: us(h.c1.p50),
    c1_added_p99_us: us(h.c1.p99),
    bare_c1_added_p50_us: us(h.bareC1.p50),
    bare_c1_added_p99_us: us(h.bareC1.p99),
    c1_met: h.c1Met ?? null,
    first_event_added_ms: round3(r.firstEvent.find((f) => f.target === 'gateway' && f.kind === 'chat-sse')?.addedP50 ?? Number.NaN),
    rss_mb: Math.round(Math.max(g?.gateway?.rssPeakMb ?? 0, s?.gateway?.rssPeakMb ?? 0)),
    portkey_rps: ran.peer ? Math.round(g?.portkey?.rps ?? Number.NaN) : null,
    ...(ran.pg
      ? {
          gateway_pg_rps: Math.round(g?.['gateway-pg']?.rps ?? Number.NaN),
          rss_mb_pg: Math.round(g?.['gateway-pg']?.rssPeakMb ?? Number.NaN),
        }
      : {}),
    ...(ran.dataplane
      ? {
          dataplane_ratio: round3(ratio(g?.dataplane?.rps, g?.bare?.rps)),
          dataplane_stream_ratio: round3(ratio(s?.dataplane?.rps, s?.bare?.rps)),
          dataplane_vs_floor: round3(h.dataplaneVsFloor.value),
          dataplane_stream_vs_floor: round3(h.dataplaneStreamVsFloor.value),
          dataplane_vs_floor_met: h.dataplaneVsFloor.met ?? null,
          dataplane_stream_vs_floor_met: h.dataplaneStreamVsFloor.met ?? null,
          dataplane_cpu_us_per_req: round3(g?.dataplane?.cpuUs ?? Number.NaN),
          rss_mb_dataplane: Math.round(Math.max(g?.dataplane?.rssPeakMb ?? 0, s?.dataplane?.rssPeakMb ?? 0)),
        }
      : {}),
    // bench/governance.ts in the same run: limits + budgets in process / on Redis ÷ the same gateway without them.
    ...(r.meta.limits ? { limits_ratio: r.meta.limits.memoryRatio, limits_redis_ratio: r.meta.limits.redisRatio } : {}),
    errors: r.errorsTotal,
  };
};
