import { describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { ALERTS, DASHBOARD, monitoringTemplates } from '../deploy/chart-monitoring.ts';
import { documents, Renderer, toYaml } from '../deploy/chart-render.ts';
import { CHART, VALUES } from '../deploy/chart-values.ts';

/**
 * Contract §17: the chart renders the shipped dashboard as a ConfigMap with the Grafana sidecar's
 * label and the shipped alert rules as a PrometheusRule, when enabled (off by default); both carry
 * the files' content unchanged (Grafana legends and alert templates survive Helm's templating), and
 * the rendered rules pass `promtool check rules`.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const merge = (a: unknown, b: unknown): unknown => {
  if (!isObj(a) || !isObj(b)) return b;
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = merge(a[k], v);
  return out;
};

const templates = (): Record<string, string> => {
  const dir = join(CHART, 'templates');
  return Object.fromEntries(readdirSync(dir).map((f) => [`templates/${f}`, readFileSync(join(dir, f), 'utf8')]));
};
const chartYaml = Bun.YAML.parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as Obj;
const defaults = Bun.YAML.parse(readFileSync(VALUES, 'utf8'));
const minimal = {
  serveUrl: 'https://gw.example',
  certificateMap: { name: 'm' },
  secretSettings: { DATABASE_URL: { value: 'postgres://x@y/z' }, GATEWAY_KEK: { existingSecret: 'kek' } },
};

const render = (values: unknown): Obj[] => {
  const root = {
    Values: merge(defaults, merge(minimal, values)),
    Release: { Name: 'gw', Namespace: 'router-gateway', Service: 'Helm', Revision: 1, IsInstall: true, IsUpgrade: false },
    Chart: { Name: chartYaml.name, Version: chartYaml.version, AppVersion: chartYaml.appVersion },
    Capabilities: {},
  };
  return Object.values(new Renderer(templates()).render(root))
    .flatMap((text) => documents(text))
    .filter(isObj);
};

const of = (docs: Obj[], kind: string): Obj[] => docs.filter((d) => d.kind === kind);

describe('monitoring in the chart', () => {
  test('off by default: no dashboard ConfigMap, no PrometheusRule', () => {
    const docs = render({});
    expect(of(docs, 'PrometheusRule')).toEqual([]);
    expect(of(docs, 'ConfigMap')).toEqual([]);
  });

  test('grafanaDashboard.enabled: a valid ConfigMap with the sidecar label holding deploy/grafana/gateway.json as is', () => {
    const docs = render({ grafanaDashboard: { enabled: true, annotations: { grafana_folder: 'AI gateway' } } });
    const cm = of(docs, 'ConfigMap')[0];
    if (!cm) throw new Error('no ConfigMap rendered');
    expect(() => Object.assign(new ConfigMap(), cm).validate()).not.toThrow();
    const meta = cm.metadata as { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
    expect(meta.name).toBe('gw-gateway-dashboard');
    expect(meta.namespace).toBe('router-system');
    expect(meta.labels.grafana_dashboard).toBe('1');
    expect(meta.annotations.grafana_folder).toBe('AI gateway');
    const json = (cm.data as Record<string, string>)['ai-gateway.json'] ?? '';
    expect(JSON.parse(json)).toEqual(JSON.parse(readFileSync(DASHBOARD, 'utf8')));
    expect(json).toContain('"legendFormat": "{{gateway_api}}"');
  });

  test('prometheusRule.enabled: a valid PrometheusRule with the groups of deploy/prometheus/alerts.yml, passing promtool check rules', async () => {
    const docs = render({ prometheusRule: { enabled: true, labels: { release: 'kube-prometheus-stack' } } });
    const rule = of(docs, 'PrometheusRule')[0];
    if (!rule) throw new Error('no PrometheusRule rendered');
    expect(() => Object.assign(new PrometheusRule(), rule).validate()).not.toThrow();
    expect((rule.metadata as { labels: Record<string, string> }).labels.release).toBe('kube-prometheus-stack');
    const spec = rule.spec as Obj;
    expect(spec).toEqual(Bun.YAML.parse(readFileSync(ALERTS, 'utf8')) as Obj);
    expect(JSON.stringify(spec)).toContain('{{ $labels.gen_ai_provider_name }}');

    const promtool = Bun.which('promtool');
    if (!promtool) throw new Error('promtool is not installed (Debian package `prometheus`; .ci/run installs it)');
    const dir = mkdtempSync(join(tmpdir(), 'rules-'));
    try {
      const file = join(dir, 'rendered.yml');
      writeFileSync(file, toYaml(spec));
      const p = Bun.spawn([promtool, 'check', 'rules', file], { stdout: 'pipe', stderr: 'pipe' });
      const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
      expect(out).toContain('SUCCESS: 5 rules found');
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the generated templates are fresh (bun run chart:values)', () => {
    for (const [file, text] of Object.entries(monitoringTemplates())) expect(readFileSync(file, 'utf8')).toBe(text);
  });
});
