/** The goals of docs/benchmarks.md evaluated against a run's results, and the commit measured. */
import { resolve } from 'node:path';
import type { Results } from './results.ts';
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

/**
 * The hot path's goals (re-based on floors measured on this machine; bench/HISTORY.md): ratios to
 * the bare Bun proxy of the same run, the added p99 relative to the bare proxy's, RSS per store.
 */
export const evaluateGoals = (r: Results): Results['goals'] => {
  const out: Results['goals'] = [];
  const pct = (v: number) => (Number.isFinite(v) ? `${(v * 100).toFixed(0)}%` : '—');
  const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)} ms` : '—');
  const check = (v: number, ok: (v: number) => boolean) => (Number.isFinite(v) ? ok(v) : undefined);
  const j = r.max['chat-json'];
  const s = r.max['chat-sse'];
  const x = r.max['messages-x-sse'];
  const cpu = (v: number | undefined) => (v === undefined ? '' : ` (${v.toFixed(0)} µs/req, bare ${j?.bare?.cpuUs.toFixed(0)})`);
  const dpRss = Math.max(j?.dataplane?.rssPeakMb ?? 0, s?.dataplane?.rssPeakMb ?? 0);
  if (dpRss) {
    const dpRatio = ratio(j?.dataplane?.rps, j?.bare?.rps);
    out.push({ goal: 'Separate data plane, non-streaming req/s ÷ bare proxy', target: '≥ 65%', value: `${pct(dpRatio)}${cpu(j?.dataplane?.cpuUs)}`, met: check(dpRatio, (v) => v >= 0.65) });
  }
  const gRatio = ratio(j?.gateway?.rps, j?.bare?.rps);
  out.push({ goal: 'Embedded gateway, non-streaming req/s ÷ bare proxy', target: '≥ 55%', value: `${pct(gRatio)}${cpu(j?.gateway?.cpuUs)}`, met: check(gRatio, (v) => v >= 0.55) });
  const pgRatio = ratio(j?.['gateway-pg']?.rps, j?.bare?.rps);
  if (Number.isFinite(pgRatio)) out.push({ goal: 'PostgreSQL-store gateway, non-streaming ÷ bare proxy (no goal of its own)', target: '—', value: `${pct(pgRatio)}${cpu(j?.['gateway-pg']?.cpuUs)}`, met: undefined });
  const sRatio = ratio(s?.gateway?.rps, s?.bare?.rps);
  out.push({ goal: 'Same-format streams/s ÷ bare proxy', target: '≥ 55%', value: pct(sRatio), met: check(sRatio, (v) => v >= 0.55) });
  const xRatio = ratio(x?.gateway?.rps, x?.bare?.rps ?? s?.bare?.rps);
  out.push({ goal: 'Cross-format streams/s (Messages → OpenAI) ÷ bare proxy', target: '≥ 40%', value: pct(xRatio), met: check(xRatio, (v) => v >= 0.4) });
  const inProcess = r.meta.limits?.memoryRatio ?? Number.NaN;
  const onRedis = r.meta.limits?.redisRatio ?? Number.NaN;
  const shown = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'not run');
  out.push({ goal: 'Limits + budgets in process ÷ the same gateway without them', target: '≥ 0.9', value: shown(inProcess), met: check(inProcess, (v) => v >= 0.9) });
  out.push({ goal: 'Limits + budgets on Redis ÷ the same gateway without them', target: '≥ 0.8', value: shown(onRedis), met: check(onRedis, (v) => v >= 0.8) });
  const added = (r.fixed?.runs.gateway?.p99 ?? Number.NaN) - (r.fixed?.runs.direct?.p99 ?? Number.NaN);
  const bareAdded = (r.fixed?.runs.bare?.p99 ?? Number.NaN) - (r.fixed?.runs.direct?.p99 ?? Number.NaN);
  // Relative to the bare proxy of the same run: without it the goal cannot be judged.
  const bareShown = Number.isFinite(bareAdded) ? ms(bareAdded) : 'not run';
  out.push({ goal: `Added p99 at ${r.fixed?.rate ?? 200} req/s over direct`, target: "≤ the bare proxy's + 1 ms", value: `${ms(added)} (bare proxy ${bareShown})`, met: check(added - bareAdded, (v) => v <= 1) });
  const fe = r.firstEvent.find((f) => f.target === 'gateway' && f.kind === 'chat-sse');
  const feAdded = fe?.addedP50 ?? Number.NaN;
  out.push({ goal: 'First-event latency over direct (streams, p50)', target: '≤ 1 ms', value: fe ? `${ms(feAdded)} (p99 ${ms(fe.addedP99)})` : '—', met: check(feAdded, (v) => v <= 1) });
  const rss = Math.max(j?.gateway?.rssPeakMb ?? 0, s?.gateway?.rssPeakMb ?? 0, r.slow?.gateway?.rssPeakMb ?? 0);
  out.push({ goal: 'RSS under load, embedded store (PGlite included)', target: '≤ 400 MB', value: rss ? `${rss.toFixed(0)} MB (idle after start ${r.meta.gatewayIdleRssMb.toFixed(0)} MB)` : '—', met: rss ? rss <= 400 : undefined });
  const pgRss = Math.max(j?.['gateway-pg']?.rssPeakMb ?? 0, s?.['gateway-pg']?.rssPeakMb ?? 0);
  if (pgRss) out.push({ goal: 'RSS under load, PostgreSQL store', target: '≤ 200 MB', value: `${pgRss.toFixed(0)} MB (idle ${r.meta.postgres.idleRssMb?.toFixed(0) ?? '—'} MB)`, met: pgRss <= 200 });
  if (dpRss) out.push({ goal: 'RSS under load, separate data plane', target: '≤ 100 MB', value: `${dpRss.toFixed(0)} MB (idle ${r.meta.dataplane?.idleRssMb?.toFixed(0) ?? '—'} MB)`, met: dpRss <= 100 });
  const pk = ratio(j?.gateway?.rps, j?.portkey?.rps);
  out.push({ goal: 'Non-streaming req/s ÷ Portkey on Bun', target: '≥ 3×', value: Number.isFinite(pk) ? `${pk.toFixed(1)}×` : 'not run', met: check(pk, (v) => v >= 3) });
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
  for (const byTarget of Object.values(res.rounds)) for (const runs of Object.values(byTarget ?? {})) for (const r of runs ?? []) errors += r.errors;
  for (const r of Object.values(res.fixed?.runs ?? {})) errors += r?.errors ?? 0;
  for (const f of res.firstEvent) errors += f.result.errors;
  if (res.churn) errors += res.churn.steady.errors + res.churn.churn.errors;
  for (const r of Object.values(res.slow ?? {})) errors += r?.errors ?? 0;
  for (const runs of Object.values(res.sweep ?? {})) for (const r of runs ?? []) errors += r.errors;
  for (const s of res.soak?.segments ?? []) errors += s.errors;
  return errors;
};

/** The one-line JSON summary printed last by `bench -- --quick` (and by full runs). */
export const quickSummary = (r: Results, ran: { peer: boolean; pg: boolean; dataplane?: boolean }): Record<string, number | null> => {
  const g = r.max['chat-json'];
  const s = r.max['chat-sse'];
  return {
    gateway_rps: Math.round(g?.gateway?.rps ?? Number.NaN),
    bare_rps: Math.round(g?.bare?.rps ?? Number.NaN),
    direct_rps: Math.round(g?.direct?.rps ?? Number.NaN),
    ratio: round3(ratio(g?.gateway?.rps, g?.bare?.rps)),
    gateway_stream_rps: Math.round(s?.gateway?.rps ?? Number.NaN),
    bare_stream_rps: Math.round(s?.bare?.rps ?? Number.NaN),
    stream_ratio: round3(ratio(s?.gateway?.rps, s?.bare?.rps)),
    cross_stream_ratio: round3(ratio(r.max['messages-x-sse']?.gateway?.rps, r.max['messages-x-sse']?.bare?.rps ?? s?.bare?.rps)),
    cpu_us_per_req: round3(g?.gateway?.cpuUs ?? Number.NaN),
    metrics_cpu_us_per_req: round3(r.meta.metricsCpuUsPerReq ?? Number.NaN),
    bare_cpu_us_per_req: round3(g?.bare?.cpuUs ?? Number.NaN),
    added_p50_ms: round3((r.fixed?.runs.gateway?.p50 ?? Number.NaN) - (r.fixed?.runs.direct?.p50 ?? Number.NaN)),
    added_p99_ms: round3((r.fixed?.runs.gateway?.p99 ?? Number.NaN) - (r.fixed?.runs.direct?.p99 ?? Number.NaN)),
    // The same figures for the bare proxy: what Bun's fetch path alone adds at that rate.
    bare_added_p50_ms: round3((r.fixed?.runs.bare?.p50 ?? Number.NaN) - (r.fixed?.runs.direct?.p50 ?? Number.NaN)),
    bare_added_p99_ms: round3((r.fixed?.runs.bare?.p99 ?? Number.NaN) - (r.fixed?.runs.direct?.p99 ?? Number.NaN)),
    first_event_added_ms: round3(r.firstEvent.find((f) => f.target === 'gateway' && f.kind === 'chat-sse')?.addedP50 ?? Number.NaN),
    rss_mb: Math.round(Math.max(g?.gateway?.rssPeakMb ?? 0, s?.gateway?.rssPeakMb ?? 0)),
    portkey_rps: ran.peer ? Math.round(g?.portkey?.rps ?? Number.NaN) : null,
    ...(ran.pg ? { gateway_pg_rps: Math.round(g?.['gateway-pg']?.rps ?? Number.NaN), rss_mb_pg: Math.round(g?.['gateway-pg']?.rssPeakMb ?? Number.NaN) } : {}),
    ...(ran.dataplane
      ? {
          dataplane_ratio: round3(ratio(g?.dataplane?.rps, g?.bare?.rps)),
          dataplane_stream_ratio: round3(ratio(s?.dataplane?.rps, s?.bare?.rps)),
          dataplane_cpu_us_per_req: round3(g?.dataplane?.cpuUs ?? Number.NaN),
          rss_mb_dataplane: Math.round(Math.max(g?.dataplane?.rssPeakMb ?? 0, s?.dataplane?.rssPeakMb ?? 0)),
        }
      : {}),
    // bench/governance.ts in the same run: limits + budgets in process / on Redis ÷ the same gateway without them.
    ...(r.meta.limits ? { limits_ratio: r.meta.limits.memoryRatio, limits_redis_ratio: r.meta.limits.redisRatio } : {}),
    errors: r.errorsTotal,
  };
};
