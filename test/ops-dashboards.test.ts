import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseExposition } from './support/prometheus-text.ts';
import {
  ALERTS_FILE,
  alertQueries,
  DASHBOARD_FILE,
  dashboardQueries,
  metricsOf,
  type OpsWorld,
  sendOpsTraffic,
  startOpsWorld,
} from './support/ops-traffic.ts';

/**
 * Contract §17 "Dashboards and alerts": deploy/prometheus/alerts.yml passes `promtool check rules`
 * and its unit tests (`promtool test rules`: each alert fires on the series that should raise it),
 * deploy/grafana/gateway.json is a well-formed dashboard, and every metric a panel or a rule
 * queries exists on the `/metrics` of a live gateway after ordinary traffic.
 */

const promtool = Bun.which('promtool');

const run = async (args: string[]): Promise<{ code: number; output: string }> => {
  if (!promtool) throw new Error('promtool is not installed (Debian package `prometheus`; .ci/run installs it)');
  const p = Bun.spawn([promtool, ...args], { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, output: `${out}${err}` };
};

describe('alert rules', () => {
  test('promtool check rules: valid, five rules', async () => {
    const r = await run(['check', 'rules', ALERTS_FILE]);
    expect(r.output).toContain('SUCCESS: 5 rules found');
    expect(r.code).toBe(0);
  });

  test('promtool test rules: each alert fires on the series that should raise it, and not on healthy ones', async () => {
    const r = await run(['test', 'rules', join(ALERTS_FILE, '..', 'alerts.test.yml')]);
    expect(r.output).toContain('SUCCESS');
    expect(r.code).toBe(0);
  });

  test('the rules cover error ratio, p99 latency, upstream failures, records queued and revision lag', () => {
    expect(alertQueries().map((q) => q.source)).toEqual([
      'GatewayHighErrorRatio',
      'GatewayHighLatencyP99',
      'GatewayUpstreamAttemptsFailing',
      'GatewayRecordsQueued',
      'GatewayConfigRevisionLag',
    ]);
  });
});

describe('dashboard', () => {
  test('well-formed: unique panel ids, every panel has a query on the data source variable, variables defined', () => {
    const d = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as {
      uid: string;
      panels: { id: number; type: string; title: string; datasource?: { uid: string }; targets?: { expr: string }[] }[];
      templating: { list: { name: string }[] };
    };
    expect(d.uid).toBe('ai-gateway');
    const ids = d.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const panels = d.panels.filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(20);
    for (const p of panels) {
      expect(p.datasource?.uid).toBe('${datasource}');
      expect(p.targets?.length ?? 0).toBeGreaterThan(0);
    }
    const vars = new Set(d.templating.list.map((v) => v.name));
    for (const q of dashboardQueries())
      for (const [, v = ''] of q.expr.matchAll(/\$(\w+)/g)) if (!v.startsWith('__')) expect(vars).toContain(v);
    // The panels the issue lists, by their titles.
    const titles = panels.map((p) => p.title).join('\n');
    for (const t of [
      'Requests / s by API',
      'Error ratio',
      'Request duration quantiles',
      'Time to first token',
      'Tokens',
      'Cost',
      'Upstream attempts',
      'records queued',
      'revision lag',
      'MCP',
    ])
      expect(titles).toContain(t);
  });
});

describe('on a live gateway', () => {
  let o: OpsWorld;
  beforeAll(async () => {
    const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
    const port = s.port ?? 0;
    void s.stop(true);
    o = await startOpsWorld(port);
    await sendOpsTraffic(o);
  }, 60_000);
  afterAll(async () => {
    await o?.stop();
  });

  test('every metric a panel or a rule queries is on /metrics', async () => {
    const families = new Set(parseExposition(await (await fetch(o.metricsUrl)).text()).map((f) => f.name));
    const queries = [...dashboardQueries(), ...alertQueries()];
    const missing: string[] = [];
    for (const q of queries) {
      const names = metricsOf(q.expr);
      expect(names.length).toBeGreaterThan(0);
      for (const n of names) if (!families.has(n)) missing.push(`${q.source}: ${n}`);
    }
    expect(missing).toEqual([]);
    // The set is not trivially small: histograms, counters, gauges and process metrics are read.
    const read = new Set(queries.flatMap((q) => metricsOf(q.expr)));
    expect(read.size).toBeGreaterThanOrEqual(14);
  });
});
