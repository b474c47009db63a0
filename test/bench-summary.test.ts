import { describe, expect, test } from 'bun:test';
import { evaluateGoals, quickSummary } from '../bench/lib/goals.ts';
import { emptyResults, type Results, type Run } from '../bench/lib/results.ts';

/** The bench's one-line summary and goal table from a results object (no load is generated). */

const run = (rps: number, p50: number, p99: number, cpuUs = 100): Run => ({
  rps,
  requests: rps * 3,
  errors: 0,
  p50,
  p90: p99,
  p99,
  max: p99,
  cpuUs,
  rssMb: 200,
  rssPeakMb: 250,
  connections: 64,
  durationS: 3,
});

const results = (fixed: Results['fixed']): Results => ({
  ...emptyResults({
    date: '2026-11-26T00:00:00.000Z',
    quick: true,
    machine: { cpus: 2, model: 'test', cores: '2' },
    bun: '1.4.5',
    commit: undefined,
    durationS: 3,
    rounds: 1,
    snapshot: { customers: 1, routes: 1, keys: 1, source: 'test', templateCreatedAt: '' },
    provisioning: undefined,
    gatewayStartMs: 1,
    gatewayIdleRssMb: 200,
    peer: { status: 'skipped', message: '' },
    postgres: { status: 'skipped', message: '' },
    elapsedS: 1,
  }),
  max: { 'chat-json': { direct: run(30000, 2, 4, 20), bare: run(15000, 3, 9, 60), gateway: run(4500, 13, 35, 220) } },
  fixed,
});

describe('bench summary: latency at the fixed rate', () => {
  test('the gateway and the bare proxy are both reported over direct', () => {
    const r = results({ rate: 200, runs: { direct: run(200, 0.4, 2.1), bare: run(200, 1.2, 5.1), gateway: run(200, 1.5, 6.6) } });
    const s = quickSummary(r, { peer: false, pg: false });
    expect(s.added_p50_ms).toBe(1.1);
    expect(s.added_p99_ms).toBe(4.5);
    expect(s.bare_added_p50_ms).toBe(0.8);
    expect(s.bare_added_p99_ms).toBe(3);
    expect(s.ratio).toBe(0.3);
    const goal = evaluateGoals(r).find((g) => g.goal.startsWith('Added p99 at'));
    expect(goal?.value).toBe('4.50 ms (bare proxy 3.00 ms)');
    expect(goal?.met).toBe(false); // 1.5 ms over the bare proxy's
    const close = evaluateGoals(results({ rate: 200, runs: { direct: run(200, 0.4, 2.1), bare: run(200, 1.2, 5.1), gateway: run(200, 1.5, 5.9) } })).find((g) => g.goal.startsWith('Added p99 at'));
    expect(close).toMatchObject({ value: '3.80 ms (bare proxy 3.00 ms)', met: true });
  });

  test('without a bare run at the fixed rate its figures are null, not invented', () => {
    const r = results({ rate: 200, runs: { direct: run(200, 0.4, 2.1), gateway: run(200, 0.9, 2.6) } });
    const s = quickSummary(r, { peer: false, pg: false });
    expect(s.added_p99_ms).toBe(0.5);
    expect(s.bare_added_p50_ms).toBeNull();
    expect(s.bare_added_p99_ms).toBeNull();
    const goal = evaluateGoals(r).find((g) => g.goal.startsWith('Added p99 at'));
    expect(goal?.value).toBe('0.50 ms (bare proxy not run)');
    expect(goal?.met).toBeUndefined();
  });
});

describe('bench summary: the separate data plane', () => {
  test('its ratio, CPU and peak RSS are reported when it ran, with its own goal rows', () => {
    const r = results(undefined);
    r.max['chat-json'] = { ...r.max['chat-json'], dataplane: { ...run(6000, 10, 30, 100), rssPeakMb: 110 } };
    r.max['chat-sse'] = { bare: run(14000, 3, 9, 60), dataplane: { ...run(3500, 15, 40, 180), rssPeakMb: 130 } };
    r.meta.dataplane = { status: 'ran', message: 'test', idleRssMb: 60 };
    const s = quickSummary(r, { peer: false, pg: false, dataplane: true });
    expect(s).toMatchObject({ dataplane_ratio: 0.4, dataplane_stream_ratio: 0.25, dataplane_cpu_us_per_req: 100, rss_mb_dataplane: 130 });
    const goals = evaluateGoals(r);
    expect(goals.find((g) => g.goal.startsWith('Separate data plane, non-streaming'))).toMatchObject({ value: '40% (100 µs/req, bare 60)', target: '≥ 65%', met: false });
    expect(goals.find((g) => g.goal.startsWith('RSS under load, separate data plane'))).toMatchObject({ value: '130 MB (idle 60 MB)', target: '≤ 100 MB', met: false });
  });

  test('not run: no data plane keys and no data plane goal rows', () => {
    const r = results(undefined);
    const s = quickSummary(r, { peer: false, pg: false });
    expect(Object.keys(s).some((k) => k.startsWith('dataplane'))).toBe(false);
    expect(evaluateGoals(r).some((g) => g.goal.includes('data plane'))).toBe(false);
  });
});
