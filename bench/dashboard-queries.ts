/**
 * The dashboard rendered without Grafana (issue 47): a gateway in this process (real listeners,
 * mock upstreams, an MCP profile) with traffic, a real Prometheus (Debian's `prometheus` binary)
 * scraping its `/metrics` every second and evaluating deploy/prometheus/alerts.yml, and every
 * panel query of deploy/grafana/gateway.json run against that Prometheus (`$__rate_interval` as
 * 30s, `$project` and `$model` as All). Prints each panel's series as Prometheus answers them,
 * then the alert rules' health and state.
 *
 *   bun bench/dashboard-queries.ts [--seconds 40] [--out FILE]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALERTS_FILE, alertQueries, dashboardQueries, sendOpsTraffic, startOpsWorld } from '../test/support/ops-traffic.ts';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const SECONDS = Number(arg('--seconds') ?? 40);
const OUT = arg('--out');

const freePort = (): number => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = s.port ?? 0;
  void s.stop(true);
  return port;
};

interface Series {
  metric: Record<string, string>;
  value: [number, string];
}
const isSeriesList = (v: unknown): v is Series[] => Array.isArray(v);

const legendOf = (legend: string | undefined, labels: Record<string, string>): string =>
  legend ? legend.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k: string) => labels[k] ?? '') : JSON.stringify(labels);

const fmt = (v: string): string => {
  const n = Number(v);
  if (!Number.isFinite(n)) return v;
  return Math.abs(n) >= 1000 || n === 0 ? String(Math.round(n * 1000) / 1000) : n.toPrecision(4);
};

const prometheusBin = Bun.which('prometheus');
if (!prometheusBin) throw new Error('prometheus is not installed (Debian package `prometheus`)');

const metricsPort = freePort();
const promPort = freePort();
const dir = mkdtempSync(join(tmpdir(), 'dashboard-'));
const lines: string[] = [];
const say = (s: string): void => {
  lines.push(s);
  process.stdout.write(`${s}\n`);
};

const world = await startOpsWorld(metricsPort);
writeFileSync(
  join(dir, 'prometheus.yml'),
  [
    'global: { scrape_interval: 1s, evaluation_interval: 1s }',
    `rule_files: [${JSON.stringify(ALERTS_FILE)}]`,
    'scrape_configs:',
    '  - job_name: ai-gateway',
    '    metrics_path: /metrics',
    `    static_configs: [{ targets: ['127.0.0.1:${metricsPort}'] }]`,
    '',
  ].join('\n'),
);
const prom = Bun.spawn(
  [
    prometheusBin,
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${promPort}`,
  ],
  { stdout: 'ignore', stderr: 'ignore' },
);
const api = `http://127.0.0.1:${promPort}`;

try {
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(`${api}/-/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await Bun.sleep(200);
  }
  const until = performance.now() + SECONDS * 1000;
  let rounds = 0;
  while (performance.now() < until) {
    await sendOpsTraffic(world);
    rounds++;
    await Bun.sleep(250);
  }
  await Bun.sleep(2500);

  const version = ((await (await fetch(`${api}/api/v1/status/buildinfo`)).json()) as { data: { version: string } }).data.version;
  say(`Prometheus ${version} scraping ${world.metricsUrl} every 1 s; ${rounds} rounds of traffic over ${SECONDS} s`);
  say(
    '(each round: 2 chat completions + 1 failing with an upstream 500, a Messages stream, a hosted-MCP Responses stream, a direct MCP tool call)',
  );
  let lastPanel = '';
  for (const q of dashboardQueries()) {
    const expr = q.expr.replaceAll('$__rate_interval', '30s').replaceAll('$project', '.*').replaceAll('$model', '.*');
    const res = (await (await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as {
      status: string;
      error?: string;
      data?: { result: unknown };
    };
    if (q.source !== lastPanel) say(`\n## ${q.source}`);
    lastPanel = q.source;
    if (res.status !== 'success') {
      say(`  ERROR ${res.error ?? ''}: ${expr}`);
      continue;
    }
    const result = res.data?.result;
    const series = isSeriesList(result) ? result : [];
    if (series.length === 0) say(`  (no data) ${expr}`);
    for (const s of series.slice(0, 8)) say(`  ${legendOf(q.legend, s.metric).padEnd(44)} ${fmt(s.value[1])}`);
    if (series.length > 8) say(`  … ${series.length - 8} more series`);
  }
  const rules = (await (await fetch(`${api}/api/v1/rules`)).json()) as {
    data: { groups: { rules: { name: string; health: string; state: string; lastError?: string }[] }[] };
  };
  say('\n## Alert rules (deploy/prometheus/alerts.yml)');
  const names = new Set(alertQueries().map((a) => a.source));
  for (const r of rules.data.groups.flatMap((g) => g.rules))
    if (names.has(r.name)) say(`  ${r.name.padEnd(34)} health=${r.health} state=${r.state}${r.lastError ? ` error=${r.lastError}` : ''}`);
} finally {
  prom.kill();
  await prom.exited;
  await world.stop();
  rmSync(dir, { recursive: true, force: true });
}
if (OUT) writeFileSync(OUT, `${lines.join('\n')}\n`);
