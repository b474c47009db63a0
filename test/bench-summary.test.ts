import { describe, expect, test } from 'bun:test';
import { evaluateGoals, quickSummary, totalErrors } from '../bench/lib/goals.ts';
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
    const close = evaluateGoals(
      results({ rate: 200, runs: { direct: run(200, 0.4, 2.1), bare: run(200, 1.2, 5.1), gateway: run(200, 1.5, 5.9) } }),
    ).find((g) => g.goal.startsWith('Added p99 at'));
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
    // Without the product floor its floor-relative goals are not judged (null / undefined), never invented.
    expect(s).toMatchObject({
      dataplane_vs_floor: null,
      dataplane_vs_floor_met: null,
      dataplane_stream_vs_floor: null,
      dataplane_stream_vs_floor_met: null,
    });
    const goals = evaluateGoals(r);
    expect(goals.find((g) => g.goal.startsWith('Separate data plane, non-streaming'))).toMatchObject({
      value: 'floor not run (40% of bare; 100 µs/req, bare 60)',
      target: '≥ 0.9 × floor',
      met: undefined,
    });
    expect(goals.find((g) => g.goal.startsWith('RSS under load, separate data plane'))).toMatchObject({
      value: '130 MB (idle 60 MB)',
      target: '≤ 100 MB',
      met: false,
    });
  });

  test('not run: no data plane keys and no data plane goal rows', () => {
    const r = results(undefined);
    const s = quickSummary(r, { peer: false, pg: false });
    expect(Object.keys(s).some((k) => k.startsWith('dataplane'))).toBe(false);
    expect(evaluateGoals(r).some((g) => g.goal.includes('data plane'))).toBe(false);
  });
});

describe('bench summary: goals relative to the product floor (issue 40)', () => {
  /** Bare 15k / 14k; floor json 11k / 7.2k, raw 10.5k / 7.5k: the cheaper is json non-streaming and raw for streams. */
  const withFloor = (dp: number, dpStream: number, gwStream: number, cross: number): Results => {
    const r = results(undefined);
    r.max['chat-json'] = {
      ...r.max['chat-json'],
      'floor-json': run(11000, 5, 12, 40),
      'floor-raw': run(10500, 5, 12, 42),
      dataplane: { ...run(dp, 10, 30, 100), rssPeakMb: 90 },
    };
    r.max['chat-sse'] = {
      bare: run(14000, 3, 9, 60),
      'floor-json': run(7200, 8, 20, 90),
      'floor-raw': run(7500, 8, 20, 88),
      gateway: run(gwStream, 15, 40, 180),
      dataplane: { ...run(dpStream, 15, 40, 180), rssPeakMb: 95 },
    };
    r.max['messages-x-sse'] = { gateway: run(cross, 20, 50, 250) };
    r.meta.dataplane = { status: 'ran', message: 'test', idleRssMb: 60 };
    return r;
  };

  test('the floor is the cheaper of bodies json and raw per scenario; each goal is a ratio to it (or to bare) with a flag', () => {
    const r = withFloor(9900, 6000, 6000, 4200);
    const s = quickSummary(r, { peer: false, pg: false, dataplane: true });
    expect(s).toMatchObject({
      floor_ratio: 0.733, // 11000 (json) / 15000
      floor_stream_ratio: 0.536, // 7500 (raw) / 14000
      floor_cpu_us_per_req: 40,
      dataplane_vs_floor: 0.9, // 9900 / 11000
      dataplane_vs_floor_met: true,
      dataplane_stream_vs_floor: 0.8, // 6000 / 7500
      dataplane_stream_vs_floor_met: false,
      stream_vs_floor: 0.8,
      stream_vs_floor_met: true, // ≥ 0.8 × floor
      ratio: 0.3,
      ratio_met: false, // embedded non-streaming ≥ 0.5 of bare
      cross_stream_ratio: 0.3, // 4200 / 14000
      cross_stream_ratio_met: false, // ≥ 0.35
    });
    const goals = evaluateGoals(r);
    const row = (start: string) => goals.find((g) => g.goal.startsWith(start));
    expect(row('Product floor ÷ bare proxy')).toMatchObject({
      value: '73% (json 73%, raw 70%; 40 µs/req) / 54% (json 51%, raw 54%)',
      met: undefined,
    });
    expect(row('Separate data plane, non-streaming')).toMatchObject({
      target: '≥ 0.9 × floor',
      value: '0.90 × floor (66% of bare; 100 µs/req, bare 60; floor 73% of bare, bodies json)',
      met: true,
    });
    expect(row('Separate data plane, streams')).toMatchObject({
      target: '≥ 0.9 × floor',
      value: '0.80 × floor (43% of bare; floor 54% of bare, bodies raw)',
      met: false,
    });
    expect(row('Embedded gateway, same-format streams')).toMatchObject({ target: '≥ 0.8 × floor', met: true });
    expect(row('Embedded gateway, non-streaming')).toMatchObject({ target: '≥ 50%', value: '30% (220 µs/req, bare 60)', met: false });
    expect(row('Cross-format streams')).toMatchObject({ target: '≥ 35%', value: '30%', met: false });
    const better = quickSummary(withFloor(9800, 6800, 5900, 5000), { peer: false, pg: false, dataplane: true });
    expect(better).toMatchObject({
      dataplane_vs_floor_met: false,
      dataplane_stream_vs_floor_met: true,
      stream_vs_floor_met: false,
      cross_stream_ratio_met: true,
    });
  });

  test('without the floor: its keys are null and its goal rows say so', () => {
    const r = results(undefined);
    const s = quickSummary(r, { peer: false, pg: false });
    expect(s).toMatchObject({
      floor_ratio: null,
      floor_stream_ratio: null,
      floor_cpu_us_per_req: null,
      stream_vs_floor: null,
      stream_vs_floor_met: null,
    });
    expect(evaluateGoals(r).find((g) => g.goal.startsWith('Embedded gateway, same-format streams'))).toMatchObject({
      value: 'floor not run (— of bare)',
      met: undefined,
    });
    expect(evaluateGoals(r).some((g) => g.goal.startsWith('Product floor'))).toBe(false);
  });
});

describe('bench summary: added latency at one connection (issue 40)', () => {
  const c1 = (gatewayP99: number): Results['c1'] => ({
    requests: 2000,
    runs: {
      direct: { ...run(5000, 0.1, 0.2), connections: 1 },
      bare: { ...run(3000, 0.16, 0.3), connections: 1 },
      gateway: { ...run(1500, 0.35, gatewayP99), connections: 1, errors: 2 },
    },
  });

  test('gateway and bare proxy minus direct in µs; the goal is the bare proxy’s p99 + 150 µs', () => {
    const r = { ...results(undefined), c1: c1(0.5) };
    const s = quickSummary(r, { peer: false, pg: false });
    expect(s).toMatchObject({
      c1_added_p50_us: 250,
      c1_added_p99_us: 300,
      bare_c1_added_p50_us: 60,
      bare_c1_added_p99_us: 100,
      c1_met: false,
    });
    const goal = evaluateGoals(r).find((g) => g.goal.startsWith('Added latency at one connection'));
    expect(goal).toMatchObject({
      target: "≤ the bare proxy's + 150 µs",
      value: '+300 µs (p50 +250 µs; bare proxy +100 µs, p50 +60 µs)',
      met: false,
    });
    expect(quickSummary({ ...r, c1: c1(0.45) }, { peer: false, pg: false }).c1_met).toBe(true); // +250 ≤ +100 + 150
    expect(totalErrors(r)).toBe(2); // the one-connection runs' errors count
  });

  test('not run: null figures and no verdict', () => {
    const r = results(undefined);
    expect(quickSummary(r, { peer: false, pg: false })).toMatchObject({
      c1_added_p50_us: null,
      c1_added_p99_us: null,
      bare_c1_added_p50_us: null,
      bare_c1_added_p99_us: null,
      c1_met: null,
    });
    expect(evaluateGoals(r).find((g) => g.goal.startsWith('Added latency at one connection'))).toMatchObject({
      value: 'not run',
      met: undefined,
    });
  });
});
