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

export const evaluateGoals = (r: Results): Results['goals'] => {
  const out: Results['goals'] = [];
  const pct = (v: number) => (Number.isFinite(v) ? `${(v * 100).toFixed(0)}%` : '—');
  const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)} ms` : '—');
  const check = (v: number, ok: (v: number) => boolean) => (Number.isFinite(v) ? ok(v) : undefined);
  const j = r.max['chat-json'];
  const s = r.max['chat-sse'];
  const x = r.max['messages-x-sse'];
  const gRatio = ratio(j?.gateway?.rps, j?.bare?.rps);
  out.push({ goal: 'Non-streaming req/s vs bare proxy (same run)', target: '≥ 80%', value: pct(gRatio), met: check(gRatio, (v) => v >= 0.8) });
  const cpu = j?.gateway?.cpuUs ?? Number.NaN;
  out.push({ goal: 'CPU per non-streaming request', target: '≤ ~40 µs', value: Number.isFinite(cpu) ? `${cpu.toFixed(0)} µs (bare ${j?.bare?.cpuUs.toFixed(0)} µs)` : '—', met: check(cpu, (v) => v <= 40) });
  const pk = ratio(j?.gateway?.rps, j?.portkey?.rps);
  out.push({ goal: 'Non-streaming req/s vs Portkey on Bun', target: '≥ 4×', value: Number.isFinite(pk) ? `${pk.toFixed(1)}×` : 'not run', met: check(pk, (v) => v >= 4) });
  const added = (r.fixed?.runs.gateway?.p99 ?? Number.NaN) - (r.fixed?.runs.direct?.p99 ?? Number.NaN);
  const bareAdded = (r.fixed?.runs.bare?.p99 ?? Number.NaN) - (r.fixed?.runs.direct?.p99 ?? Number.NaN);
  const addedValue = Number.isFinite(bareAdded) ? `${ms(added)} (bare proxy ${ms(bareAdded)})` : ms(added);
  out.push({ goal: `Added p99 latency at ${r.fixed?.rate ?? 200} req/s over direct`, target: '≤ 1 ms', value: addedValue, met: check(added, (v) => v <= 1) });
  const fe = r.firstEvent.find((f) => f.target === 'gateway' && f.kind === 'chat-sse');
  const feAdded = fe?.addedP50 ?? Number.NaN;
  out.push({ goal: 'First-event latency over direct (streams, p50)', target: '≤ 1 ms', value: fe ? `${ms(feAdded)} (p99 ${ms(fe.addedP99)})` : '—', met: check(feAdded, (v) => v <= 1) });
  const sRatio = ratio(s?.gateway?.rps, s?.bare?.rps);
  out.push({ goal: 'Streaming streams/s vs bare (same format)', target: '≥ 80%', value: pct(sRatio), met: check(sRatio, (v) => v >= 0.8) });
  const xRatio = ratio(x?.gateway?.rps, s?.bare?.rps);
  out.push({ goal: 'Cross-format streaming (Messages → OpenAI) vs bare', target: '≥ 50%', value: pct(xRatio), met: check(xRatio, (v) => v >= 0.5) });
  const rss = Math.max(j?.gateway?.rssPeakMb ?? 0, s?.gateway?.rssPeakMb ?? 0, r.slow?.gateway?.rssPeakMb ?? 0);
  out.push({ goal: 'Gateway RSS under load (whole process, embedded PGlite included)', target: '≤ 300 MB', value: rss ? `${rss.toFixed(0)} MB (idle after start ${r.meta.gatewayIdleRssMb.toFixed(0)} MB)` : '—', met: rss ? rss <= 300 : undefined });
  const pgRss = Math.max(j?.['gateway-pg']?.rssPeakMb ?? 0, s?.['gateway-pg']?.rssPeakMb ?? 0);
  if (pgRss) {
    out.push({ goal: 'Gateway RSS under load, external Postgres store', target: '≤ 120 MB', value: `${pgRss.toFixed(0)} MB (idle ${r.meta.postgres.idleRssMb?.toFixed(0) ?? '—'} MB)`, met: pgRss <= 120 });
    const pgRatio = ratio(j?.['gateway-pg']?.rps, j?.bare?.rps);
    out.push({ goal: 'Non-streaming req/s vs bare, external Postgres store', target: '≥ 80%', value: `${pct(pgRatio)} (${j?.['gateway-pg']?.cpuUs.toFixed(0)} µs/req)`, met: check(pgRatio, (v) => v >= 0.8) });
  }
  const dpRss = Math.max(j?.dataplane?.rssPeakMb ?? 0, s?.dataplane?.rssPeakMb ?? 0);
  if (dpRss) {
    const dpRatio = ratio(j?.dataplane?.rps, j?.bare?.rps);
    out.push({ goal: 'Non-streaming req/s vs bare, separate data plane', target: '≥ 80%', value: `${pct(dpRatio)} (${j?.dataplane?.cpuUs.toFixed(0)} µs/req)`, met: check(dpRatio, (v) => v >= 0.8) });
    out.push({ goal: 'Separate data plane RSS under load (no database in the process)', target: '≤ 120 MB', value: `${dpRss.toFixed(0)} MB (idle ${r.meta.dataplane?.idleRssMb?.toFixed(0) ?? '—'} MB)`, met: dpRss <= 120 });
  }
  if (r.soak) {
    out.push({
      goal: `No memory growth over a ${Math.round(r.soak.segments.at(-1)?.t ?? 0)} s soak`,
      target: '< 1 MB/min',
      value: `${r.soak.slopeMbPerMin.toFixed(2)} MB/min over the second half; first→last segment ${r.soak.growthMb >= 0 ? '+' : ''}${r.soak.growthMb.toFixed(0)} MB (RSS ${Math.min(...r.soak.segments.map((x) => x.rssMb)).toFixed(0)}–${Math.max(...r.soak.segments.map((x) => x.rssMb)).toFixed(0)} MB)`,
      met: r.soak.slopeMbPerMin < 1,
    });
  } else out.push({ goal: 'No memory growth over a 5-minute soak', target: '< 1 MB/min', value: 'not run (--soak)', met: undefined });
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
