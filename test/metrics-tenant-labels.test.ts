import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataNode } from '../src/app-data.ts';
import { TENANTS_HIDDEN } from '../src/telemetry/metrics-observer.ts';
import { startSeparatePlane } from './support/data-node.ts';
import { admin, apikeyOp, type TestGateway } from './support/gateway.ts';
import { eventually, type OtlpReceiver, type ReceivedPoint, startOtlpReceiver } from './support/otlp-receiver.ts';
import { parseExposition, promtoolCheck, type Sample, samplesOf } from './support/prometheus-text.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Issue 38 item 8: the `project` label (`customer/project`) of the metrics, with
 * GATEWAY_METRICS_TENANT_LABELS `on` (default) and `off`, on the embedded gateway and on a separate
 * data plane (`--role data`, real listeners): requests of two customers (acme, globex) and of two
 * projects of acme (default, beta: served by the data plane through a project gateway's host),
 * then `/metrics` scraped and read strictly (and by `promtool check metrics` when installed).
 * `off`: every series says `project="all"`, no series names a customer or project, the counts add
 * up across tenants; the OTLP export and forwarded `metrics` configs alike; traces and records
 * still carry the customer and project.
 */

type Body = Record<string, unknown>;

const freePort = (): number => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = s.port ?? 0;
  void s.stop(true);
  return port;
};

const BETA_HOST = 'beta.example.com';

interface Fixture {
  w: World;
  node: DataNode;
  dir: string;
  rx: OtlpReceiver;
  gatewayMetrics: string;
  planeMetrics: string;
  keys: { acme: string; beta: string; globex: string };
  /** Requests answered 200, per plane and project. */
  ok: { embedded: Record<string, number>; plane: Record<string, number> };
}

/** A project of `customerId` serving `gpt-mini` through the mock OpenAI upstream; its API key. */
const addProject = async (tg: TestGateway, w: World, customerId: string, projectId: string): Promise<string> => {
  if (projectId !== 'default') await tg.must(admin('CreateProject'), { customerId, projectId });
  await tg.must(admin('AddProjectModel'), { customerId, projectId, modelId: w.p.models['gpt-mini'] });
  await tg.must(admin('CreateProviderConnection'), {
    customerId,
    projectId,
    name: 'mock-openai',
    provider: 'openai',
    baseUrl: `${w.oa.url}/v1`,
    apiKey: 'sk-upstream-openai-secret',
  });
  await tg.must(admin('CreateRoute'), {
    customerId,
    projectId,
    model: 'gpt-mini',
    targets: [{ connection: 'mock-openai', model: 'gpt-4o-mini' }],
  });
  return String(
    (
      await tg.must(apikeyOp('CreateApiKey'), {
        name: `${customerId}-${projectId}`,
        userId: 'u1',
        enterpriseContext: { customerId, projectId },
      })
    ).apiKey,
  );
};

const chat = async (base: string, key: string, host?: string): Promise<number> => {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(host ? { host } : {}) },
    body: JSON.stringify({ model: 'gpt-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
};

const setup = async (mode: 'on' | 'off'): Promise<Fixture> => {
  const rx = startOtlpReceiver();
  const gwPort = freePort();
  const dpPort = freePort();
  const w = await startWorld({
    GATEWAY_METRICS_TENANT_LABELS: mode,
    GATEWAY_METRICS_PORT: String(gwPort),
    OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
    OTEL_METRIC_EXPORT_INTERVAL: '200',
    // Forwarded records wait for the audit lag (here 1 s); the sink is on loopback.
    GATEWAY_AUDIT_CHECKPOINT_INTERVAL: '1s',
    GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1',
  });
  w.oa.script(() => ({ text: 'a b c d', usage: { input: 10, output: 4 } }));
  const tg = w.tg;
  const keys = { acme: w.p.apiKey, beta: '', globex: '' };
  await tg.must(admin('CreateCustomer'), { customerId: 'globex', name: 'Globex' });
  keys.globex = await addProject(tg, w, 'globex', 'default');
  keys.beta = await addProject(tg, w, 'acme', 'beta');
  await tg.must(admin('CreateTelemetryConfig'), {
    userId: 'ops',
    telemetryType: 'metrics',
    sinkUrl: `${rx.url}/fwd`,
    protocol: 'http/json',
    authType: 'bearer',
    authValue: 'tok',
    apiKeyHeader: '',
  });
  await tg.must(admin('CreateWorkspace'), { customerId: 'acme', workspaceId: 'edge', projectId: 'default' });
  const pg = (
    await tg.must(admin('CreateProjectGateway'), {
      customerId: 'acme',
      workspaceId: 'edge',
      projectGatewayId: 'gw-beta',
      url: `https://${BETA_HOST}`,
    })
  ).projectGateway as Body;
  await tg.must(admin('AttachProjectGatewayProject'), { id: String(pg.id), projectId: 'beta' });
  const dir = mkdtempSync(join(tmpdir(), `gw-tenant-labels-${mode}-`));
  const node = await startSeparatePlane(
    tg,
    dir,
    'acme',
    'edge',
    '100ms',
    {},
    { GATEWAY_METRICS_TENANT_LABELS: mode, GATEWAY_METRICS_PORT: String(dpPort) },
  );
  const ok: Fixture['ok'] = { embedded: {}, plane: {} };
  const count = (plane: 'embedded' | 'plane', project: string, status: number): void => {
    if (status === 200) ok[plane][project] = (ok[plane][project] ?? 0) + 1;
  };
  // The data plane serves both projects once its pulled document has them (earlier answers are not 200).
  const deadline = Date.now() + 25_000;
  while (!ok.plane['acme/default'] || !ok.plane['acme/beta']) {
    if (Date.now() > deadline) throw new Error(`the data plane does not serve acme/default and acme/beta: ${JSON.stringify(ok.plane)}`);
    if (!ok.plane['acme/default']) count('plane', 'acme/default', await chat(node.inferenceUrl, keys.acme));
    if (!ok.plane['acme/beta']) count('plane', 'acme/beta', await chat(node.inferenceUrl, keys.beta, BETA_HOST));
    await Bun.sleep(50);
  }
  for (let i = 0; i < 3; i++) count('embedded', 'acme/default', await chat(tg.url, keys.acme));
  for (let i = 0; i < 2; i++) count('embedded', 'globex/default', await chat(tg.url, keys.globex));
  count('embedded', 'acme/beta', await chat(tg.url, keys.beta));
  count('plane', 'acme/default', await chat(node.inferenceUrl, keys.acme));
  count('plane', 'acme/beta', await chat(node.inferenceUrl, keys.beta, BETA_HOST));
  return {
    w,
    node,
    dir,
    rx,
    gatewayMetrics: `http://127.0.0.1:${gwPort}/metrics`,
    planeMetrics: `http://127.0.0.1:${dpPort}/metrics`,
    keys,
    ok,
  };
};

const teardown = async (f: Fixture | undefined): Promise<void> => {
  if (!f) return;
  await f.node.stop(0);
  await stopWorld(f.w);
  f.rx.stop();
  rmSync(f.dir, { recursive: true, force: true });
};

/** `/metrics` read strictly and checked by promtool when installed; the samples and the raw text. */
const scrape = async (url: string): Promise<{ samples: Sample[]; text: string }> => {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  const text = await res.text();
  const samples = samplesOf(parseExposition(text));
  const promtool = await promtoolCheck(text);
  if (promtool) expect(promtool).toEqual({ code: 0, output: '' });
  return { samples, text };
};

const TENANT_METRICS = ['gateway_requests_total', 'gateway_cost_usd_total'];
const sum = (samples: readonly Sample[], name: string, labels: Record<string, string>): number =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
const projectsOf = (samples: readonly Sample[], name: string): string[] =>
  [...new Set(samples.filter((s) => s.name === name && s.labels.status_code !== '401').map((s) => s.labels.project ?? '(none)'))].sort();
const total = (o: Record<string, number>): number => Object.values(o).reduce((a, b) => a + b, 0);
const requestPoints = (rx: OtlpReceiver, sink: string): ReceivedPoint[] =>
  rx.points.filter((p) => p.sink === sink && p.metric === 'gateway.requests');

describe('GATEWAY_METRICS_TENANT_LABELS=on (default): the project label names customer/project', () => {
  let f: Fixture | undefined;
  beforeAll(async () => {
    f = await setup('on');
  }, 90_000);
  afterAll(() => teardown(f));

  test('embedded gateway: one series per customer/project, the counts per tenant', async () => {
    if (!f) throw new Error('no fixture');
    const { samples } = await scrape(f.gatewayMetrics);
    for (const name of TENANT_METRICS) expect(projectsOf(samples, name)).toEqual(['acme/beta', 'acme/default', 'globex/default']);
    for (const [project, n] of Object.entries(f.ok.embedded))
      expect(sum(samples, 'gateway_requests_total', { status_code: '200', project })).toBe(n);
    expect(f.ok.embedded).toEqual({ 'acme/default': 3, 'globex/default': 2, 'acme/beta': 1 });
    // The OTLP export and the forwarded metrics config carry the same label.
    const rx = f.rx;
    await eventually(() => (requestPoints(rx, '').some((p) => p.attributes.project === 'globex/default') ? true : undefined));
    await eventually(() => (requestPoints(rx, '/fwd').some((p) => p.attributes.project === 'globex/default') ? true : undefined), 20_000);
  }, 30_000);

  test('separate data plane: one series per project of its customer', async () => {
    if (!f) throw new Error('no fixture');
    const { samples } = await scrape(f.planeMetrics);
    expect(projectsOf(samples, 'gateway_requests_total').filter((p) => p !== 'other')).toEqual(['acme/beta', 'acme/default']);
    for (const [project, n] of Object.entries(f.ok.plane))
      expect(sum(samples, 'gateway_requests_total', { status_code: '200', project })).toBe(n);
  });
});

describe('GATEWAY_METRICS_TENANT_LABELS=off: no series names a customer or project', () => {
  let f: Fixture | undefined;
  beforeAll(async () => {
    f = await setup('off');
  }, 90_000);
  afterAll(() => teardown(f));

  const hidden = (samples: readonly Sample[], text: string, names: readonly string[]): void => {
    // The label stays (dashboards keep their shape) with one value; nothing else names a tenant.
    for (const name of TENANT_METRICS) {
      const of = samples.filter((s) => s.name === name);
      expect(of.length).toBeGreaterThan(0);
      for (const s of of) expect(s.labels.project).toBe(TENANTS_HIDDEN);
    }
    for (const s of samples) if ('project' in s.labels) expect(s.labels.project).toBe(TENANTS_HIDDEN);
    for (const n of names) expect(text).not.toContain(n);
  };

  test('embedded gateway: project="all" on every series, the counts add up across customers', async () => {
    if (!f) throw new Error('no fixture');
    const { samples, text } = await scrape(f.gatewayMetrics);
    hidden(samples, text, ['acme', 'globex', 'beta']);
    expect(sum(samples, 'gateway_requests_total', { status_code: '200', project: TENANTS_HIDDEN })).toBe(total(f.ok.embedded));
    expect(total(f.ok.embedded)).toBe(6);
    // Prices of gpt-mini: 0.15 / 0.6 USD per million input / output tokens, 10 + 4 tokens a request.
    expect(sum(samples, 'gateway_cost_usd_total', { project: TENANTS_HIDDEN })).toBeCloseTo((6 * (10 * 0.15 + 4 * 0.6)) / 1e6, 12);
  });

  test('separate data plane (--role data): project="all" on every series', async () => {
    if (!f) throw new Error('no fixture');
    const { samples, text } = await scrape(f.planeMetrics);
    hidden(samples, text, ['acme', 'beta']);
    expect(sum(samples, 'gateway_requests_total', { status_code: '200', project: TENANTS_HIDDEN })).toBe(total(f.ok.plane));
  });

  test('the OTLP export and the forwarded metrics say project="all" too; traces and records keep the customer and project', async () => {
    const fx = f;
    if (!fx) throw new Error('no fixture');
    await eventually(() => (requestPoints(fx.rx, '').length > 0 ? true : undefined));
    // Forwarded: the records of both planes (the data plane's come by PushRecords).
    const all = total(fx.ok.embedded) + total(fx.ok.plane);
    await eventually(
      () =>
        requestPoints(fx.rx, '/fwd')
          .filter((p) => p.attributes.status_code === 200)
          .reduce((a, p) => a + p.value, 0) >= all
          ? true
          : undefined,
      20_000,
    );
    for (const sink of ['', '/fwd']) for (const p of requestPoints(fx.rx, sink)) expect(p.attributes.project).toBe(TENANTS_HIDDEN);
    expect(JSON.stringify(fx.rx.points)).not.toContain('globex');

    const spans = await eventually(() => {
      const s = fx.rx.spans.filter((x) => x.sink === '' && x.kind === 2 && x.attributes['gateway.customer_id'] === 'globex');
      return s.length >= 2 ? s : undefined;
    });
    expect(spans[0]?.attributes['gateway.project_id']).toBe('default');
    const records = (await fx.w.tg.must(admin('SearchRequestRecords'), { customerId: 'globex', projectId: 'default' })) as {
      records: Body[];
    };
    expect(records.records.length).toBe(2);
  }, 30_000);
});
