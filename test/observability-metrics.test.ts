import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { TestGateway } from './support/gateway.ts';
import type { MockUpstream } from './support/mock-upstreams.ts';
import { eventually, type OtlpReceiver, startOtlpReceiver } from './support/otlp-receiver.ts';
import { type Provisioned, startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Metrics as contract §8 fixes them: Prometheus text on the metrics listener (never on the
 * inference port) whose values match the traffic sent, the same metrics over OTLP, and bounded
 * series whatever model names clients send.
 */

let world: World | undefined;
let tg: TestGateway;
let oa: MockUpstream;
let p: Provisioned;
let otlp: OtlpReceiver;
let metricsUrl: string;

/** The documented bound (docs/observability.md, "Metrics"): series after 10,000 requests naming 1,000 random models. */
const SERIES_BOUND = 150;

const freePort = (): number => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = s.port ?? 0;
  void s.stop(true);
  return port;
};

beforeAll(async () => {
  otlp = startOtlpReceiver();
  const port = freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  world = await startWorld({
    GATEWAY_METRICS_PORT: String(port),
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${otlp.url}/v1/metrics`,
    OTEL_METRIC_EXPORT_INTERVAL: '200',
  });
  ({ tg, oa, p } = world);
  oa.script(() => ({ text: 'a b c d', usage: { input: 10, output: 4 } }));
}, 60_000);

afterAll(async () => {
  await stopWorld(world);
  otlp.stop();
});

const chat = (model: string, stream = false) =>
  fetch(`${tg.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
  });

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const parse = (text: string): Sample[] =>
  text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
      if (!m) throw new Error(`not a Prometheus sample line: ${l}`);
      const labels: Record<string, string> = {};
      for (const pair of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
      return { name: m[1] ?? '', labels, value: Number(m[3]) };
    });

const scrape = async (): Promise<Sample[]> => {
  const res = await fetch(metricsUrl);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return parse(await res.text());
};

const value = (samples: Sample[], name: string, labels: Record<string, string>): number =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

test('GET /metrics on the metrics listener gives values matching the traffic sent; the inference port has no /metrics', async () => {
  for (let i = 0; i < 3; i++) await (await chat('gpt-mini')).text();
  await (await chat('gpt-mini', true)).text();
  for (const m of ['no-such-model-a', 'no-such-model-b']) expect((await chat(m)).status).toBe(404);

  const s = await scrape();
  const ok = {
    status_code: '200',
    gen_ai_operation_name: 'chat',
    gen_ai_request_model: 'gpt-mini',
    gen_ai_provider_name: 'openai',
    project: 'acme/default',
  };
  expect(value(s, 'gateway_requests_total', ok)).toBe(4);
  expect(value(s, 'gateway_requests_total', { status_code: '404', gen_ai_request_model: 'other' })).toBe(2);
  expect(value(s, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'input', gen_ai_request_model: 'gpt-mini' })).toBe(40);
  expect(value(s, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'output', gen_ai_request_model: 'gpt-mini' })).toBe(16);
  expect(value(s, 'gen_ai_client_token_usage_count', { gen_ai_token_type: 'input' })).toBe(4);
  expect(value(s, 'gen_ai_client_operation_duration_seconds_count', { gen_ai_request_model: 'gpt-mini' })).toBe(4);
  expect(value(s, 'gen_ai_server_time_to_first_token_seconds_count', { gen_ai_request_model: 'gpt-mini' })).toBe(1);
  expect(value(s, 'gateway_upstream_attempts_total', { gen_ai_provider_name: 'openai', outcome: 'ok' })).toBe(4);
  // Prices of gpt-mini: 0.15 / 0.6 USD per million input / output tokens.
  expect(value(s, 'gateway_cost_usd_total', { project: 'acme/default', gen_ai_request_model: 'gpt-mini' })).toBeCloseTo(
    (4 * (10 * 0.15 + 4 * 0.6)) / 1e6,
    12,
  );
  expect(value(s, 'gateway_records_queued', {})).toBeGreaterThanOrEqual(0);
  expect(s.some((x) => x.name === 'gateway_config_revision' && x.labels.state === 'applied' && x.value > 0)).toBe(true);
  // Buckets are cumulative and end in +Inf = count.
  const inf = value(s, 'gen_ai_client_operation_duration_seconds_bucket', { gen_ai_request_model: 'gpt-mini', le: '+Inf' });
  expect(inf).toBe(4);

  expect((await fetch(`${tg.url}/metrics`)).status).not.toBe(200);
});

test('the same metrics reach an OTLP receiver', async () => {
  const point = await eventually(() =>
    otlp.points.find((pt) => pt.metric === 'gateway.requests' && pt.attributes['gen_ai.request.model'] === 'gpt-mini' && pt.value >= 4),
  );
  expect(point.attributes).toMatchObject({ status_code: 200, 'gen_ai.provider.name': 'openai', project: 'acme/default' });
  const tokens = await eventually(() =>
    otlp.points.find((pt) => pt.metric === 'gen_ai.client.token.usage' && pt.attributes['gen_ai.token.type'] === 'input' && pt.value >= 4),
  );
  expect(tokens.sum).toBeGreaterThanOrEqual(40);
  expect([...(otlp.contentTypes.get('/v1/metrics') ?? [])]).toEqual(['application/json']);
});

test(`10,000 requests naming 1,000 random models leave fewer than ${SERIES_BOUND} series, with no key or request ids as labels`, async () => {
  const names = Array.from({ length: 1000 }, () => `junk-${crypto.randomUUID()}`);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < 10_000) {
      const i = next++;
      const res = await chat(names[i % names.length] ?? 'x');
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const s = await scrape();
  const series = new Set(s.filter((x) => !x.name.endsWith('_bucket')).map((x) => `${x.name}${JSON.stringify(x.labels)}`));
  expect(series.size).toBeLessThan(SERIES_BOUND);
  expect(value(s, 'gateway_requests_total', { status_code: '404', gen_ai_request_model: 'other' })).toBe(10_002);
  const text = JSON.stringify(s);
  expect(text).not.toContain('junk-');
  expect(text).not.toContain(p.keyId);
}, 120_000);
