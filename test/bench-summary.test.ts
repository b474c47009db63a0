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
    const goal = evaluateGoals(r).find((g) => g.goal.startsWith('Added p99 latency'));
    expect(goal?.value).toBe('4.50 ms (bare proxy 3.00 ms)');
    expect(goal?.met).toBe(false);
  });

  test('without a bare run at the fixed rate its figures are null, not invented', () => {
    const r = results({ rate: 200, runs: { direct: run(200, 0.4, 2.1), gateway: run(200, 0.9, 2.6) } });
    const s = quickSummary(r, { peer: false, pg: false });
    expect(s.added_p99_ms).toBe(0.5);
    expect(s.bare_added_p50_ms).toBeNull();
    expect(s.bare_added_p99_ms).toBeNull();
    const goal = evaluateGoals(r).find((g) => g.goal.startsWith('Added p99 latency'));
    expect(goal?.value).toBe('0.50 ms');
    expect(goal?.met).toBe(true);
  });
});
