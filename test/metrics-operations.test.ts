import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { closeSync, openSync } from 'node:fs';
import OpenAI from 'openai';
import { loadConfig } from '../src/config/env.ts';
import { startMetrics } from '../src/telemetry/metrics.ts';
import { startTelemetry } from '../src/telemetry/tracing.ts';
import { admin, startTestGateway } from './support/gateway.ts';
import { connectMcp } from './support/mcp-gateway.ts';
import { startStreamableServer, type TestMcpServer } from './support/mcp-servers.ts';
import { parseExposition, promtoolCheck, type Sample, samplesOf } from './support/prometheus-text.ts';
import { startWorld, stopWorld, type World } from './support/provision.ts';

/**
 * Contract §17 "Metrics": the server-side GenAI duration, `gateway_api` on the requests counter,
 * TTFT by provider (hosted-MCP streams too), MCP calls in the requests counter, the Prometheus
 * process metrics and the event loop's lag, GATEWAY_METRICS_HOST, and `/readyz` naming the
 * metrics listener's state (a taken port: `failed`, the gateway serving on).
 */

/** The sum of the samples of `name` whose labels include `labels`. */
const sumOf = (samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

const freePort = (): number => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = s.port ?? 0;
  void s.stop(true);
  return port;
};

let w: World;
let alpha: TestMcpServer;
let metricsPort: number;

beforeAll(async () => {
  metricsPort = freePort();
  w = await startWorld({ GATEWAY_METRICS_PORT: String(metricsPort) });
  w.oa.script(() => ({ text: 'a b c d', usage: { input: 10, output: 4 } }));
  alpha = startStreamableServer('a', { bearer: 'alpha-secret' });
  const acme = { customerId: 'acme', projectId: 'default' };
  await w.tg.must(admin('CreateMcpServer'), { serverId: 'alpha', url: alpha.url, authType: 'bearer', authValue: 'alpha-secret' });
  await w.tg.must(admin('AddProjectMcpServer'), { ...acme, serverId: 'alpha' });
  await w.tg.must(admin('CreateMcpProfile'), {
    ...acme,
    profileId: 'tools',
    servers: [{ serverId: 'alpha', prefix: 'alpha', tools: ['echo'] }],
  });
}, 60_000);

afterAll(async () => {
  await stopWorld(w);
  await alpha?.stop();
});

const scrape = async (): Promise<Sample[]> => {
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(res.status).toBe(200);
  return samplesOf(parseExposition(await res.text()));
};

const post = (path: string, body: unknown) =>
  fetch(`${w.tg.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.p.apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });

describe('request metrics', () => {
  test('gateway_api tells Chat Completions from Messages; server duration, TTFT and TPOT carry the provider', async () => {
    const before = await scrape();
    const msg = [{ role: 'user', content: 'hi' }];
    for (let i = 0; i < 2; i++) await (await post('/v1/chat/completions', { model: 'gpt-mini', messages: msg })).text();
    await (await post('/v1/chat/completions', { model: 'gpt-mini', stream: true, messages: msg })).text();
    const m = await post('/v1/messages', { model: 'claude-mini', max_tokens: 100, stream: true, messages: msg });
    expect(m.status).toBe(200);
    await m.text();
    const s = await scrape();
    const delta = (name: string, labels: Record<string, string>) => sumOf(s, name, labels) - sumOf(before, name, labels);

    expect(delta('gateway_requests_total', { gateway_api: 'chat_completions', status_code: '200', gen_ai_operation_name: 'chat' })).toBe(3);
    expect(delta('gateway_requests_total', { gateway_api: 'messages', status_code: '200', gen_ai_provider_name: 'anthropic' })).toBe(1);
    expect(
      delta('gen_ai_server_request_duration_seconds_count', { gen_ai_request_model: 'gpt-mini', gen_ai_provider_name: 'openai' }),
    ).toBe(3);
    expect(delta('gen_ai_server_request_duration_seconds_bucket', { gen_ai_request_model: 'claude-mini', le: '+Inf' })).toBe(1);
    expect(
      delta('gen_ai_server_time_to_first_token_seconds_count', { gen_ai_provider_name: 'openai', gen_ai_request_model: 'gpt-mini' }),
    ).toBe(1);
    expect(delta('gen_ai_server_time_to_first_token_seconds_count', { gen_ai_provider_name: 'anthropic' })).toBe(1);
    // 4 output tokens streamed by the mock: one time-per-output-token observation for the stream.
    expect(delta('gen_ai_server_time_per_output_token_seconds_count', { gen_ai_provider_name: 'openai' })).toBe(1);
    // Every series of the requests counter has the label.
    expect(s.filter((x) => x.name === 'gateway_requests_total').every((x) => x.labels.gateway_api !== undefined)).toBe(true);
  });

  test('a hosted-MCP stream records TTFT by provider; its tool call and a direct MCP call count as gateway_api="mcp"', async () => {
    const before = await scrape();
    const sdk = new OpenAI({ baseURL: `${w.tg.url}/v1`, apiKey: w.p.apiKey, maxRetries: 0 });
    const tool = { type: 'mcp' as const, server_label: 'docs', server_url: `${w.tg.url}/mcp/tools`, require_approval: 'never' as const };
    const stream = sdk.responses.stream({ model: 'claude-mini', input: 'call alpha__echo {"text":"hi"}', tools: [tool] });
    for await (const _ of stream) {
      // drained
    }
    expect((await stream.finalResponse()).output_text).toContain('a:hi');
    const { client } = await connectMcp(`${w.tg.url}/mcp/tools`, w.p.apiKey);
    await client.callTool({ name: 'alpha__echo', arguments: { text: 'direct' } });
    await client.close();

    const s = await scrape();
    const delta = (name: string, labels: Record<string, string>) => sumOf(s, name, labels) - sumOf(before, name, labels);
    expect(
      delta('gen_ai_server_time_to_first_token_seconds_count', { gen_ai_provider_name: 'anthropic', gen_ai_request_model: 'claude-mini' }),
    ).toBe(1);
    expect(delta('gateway_requests_total', { gateway_api: 'responses', status_code: '200', gen_ai_provider_name: 'anthropic' })).toBe(1);
    // The hosted run's call and the direct one: both governed MCP calls (contract §7), both in the requests counter.
    expect(
      delta('gateway_requests_total', {
        gateway_api: 'mcp',
        gen_ai_operation_name: 'execute_tool',
        gen_ai_provider_name: 'mcp',
        status_code: '200',
      }),
    ).toBe(2);
    expect(delta('gateway_mcp_calls_total', { server: 'alpha', outcome: 'ok' })).toBe(2);
  });
});

describe('process metrics', () => {
  test('memory, CPU seconds, start time and open descriptors match the process; the event-loop lag shows a blocked loop', async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    // The whole exposition, process metrics included, passes promtool's own lint (when installed).
    const lint = await promtoolCheck(text);
    if (lint) expect(lint).toEqual({ code: 0, output: '' });
    const first = samplesOf(parseExposition(text));
    const one = (s: Sample[], name: string): number => {
      const found = s.filter((x) => x.name === name);
      expect(found.length).toBe(1);
      return found[0]?.value ?? Number.NaN;
    };
    // The gateway runs in this process: its own figures are the reference.
    expect(one(first, 'process_start_time_seconds')).toBeCloseTo(Date.now() / 1000 - process.uptime(), 0);
    const rss = one(first, 'process_resident_memory_bytes');
    expect(rss).toBeGreaterThan(0.7 * process.memoryUsage.rss());
    expect(rss).toBeLessThan(1.3 * process.memoryUsage.rss());

    // Twenty more open files: twenty more descriptors.
    const fds = Array.from({ length: 20 }, () => openSync('/dev/null', 'r'));
    const opened = await scrape();
    for (const fd of fds) closeSync(fd);
    expect(one(opened, 'process_open_fds') - one(first, 'process_open_fds')).toBeGreaterThanOrEqual(20);

    // CPU seconds are the process's own (read before and after the scrape).
    const cpuSeconds = () => (process.cpuUsage().user + process.cpuUsage().system) / 1e6;
    const cpuBefore = cpuSeconds();
    const cpu = one(await scrape(), 'process_cpu_seconds_total');
    expect(cpu).toBeGreaterThanOrEqual(cpuBefore - 0.01);
    expect(cpu).toBeLessThanOrEqual(cpuSeconds() + 0.01);

    // Block the event loop for 400 ms: the lag says so.
    const end = performance.now() + 400;
    while (performance.now() < end) {
      // busy
    }
    await Bun.sleep(300);
    const blocked = await scrape();
    expect(one(blocked, 'gateway_event_loop_lag_seconds')).toBeGreaterThanOrEqual(0.2);
    // The window restarts at each scrape: a quiet loop reads small again.
    await Bun.sleep(500);
    expect(one(await scrape(), 'gateway_event_loop_lag_seconds')).toBeLessThan(0.2);
  });
});

describe('the metrics listener', () => {
  test('/readyz says listening; a taken port: the second gateway serves on and says failed; port 0: off', async () => {
    const ready = (url: string) =>
      fetch(`${url}/readyz`).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    expect(await ready(w.tg.url)).toMatchObject({ status: 200, body: { status: 'ok', metrics: 'listening' } });
    expect((await ready(w.tg.adminUrl)).body.metrics).toBe('listening');

    const taken = await startTestGateway({ GATEWAY_METRICS_PORT: String(metricsPort) });
    try {
      expect(await ready(taken.url)).toMatchObject({ status: 200, body: { status: 'ok', metrics: 'failed' } });
      expect((await ready(taken.adminUrl)).body.metrics).toBe('failed');
      expect((await fetch(`${taken.url}/v1/models`)).status).toBe(401);
    } finally {
      await taken.stop();
    }
    // GATEWAY_METRICS_PORT=0 and no OTLP metrics: no listener, `off`.
    const off = await startTelemetry(loadConfig([], { GATEWAY_METRICS_PORT: '0', GATEWAY_DATA_DIR: 'memory://' }).telemetry, 'test');
    expect(off.metricsListener).toBe('off');
    await off.shutdown();
  }, 60_000);

  test('GATEWAY_METRICS_HOST: loopback unless set, whatever GATEWAY_HOST says; the listener binds where it says', async () => {
    const base = { GATEWAY_HOST: '0.0.0.0', GATEWAY_DATA_DIR: 'memory://', GATEWAY_DEMO: '0' };
    expect(loadConfig([], base).telemetry.metrics.host).toBe('127.0.0.1');
    const port = freePort();
    const cfg = loadConfig([], { ...base, GATEWAY_METRICS_HOST: '127.0.0.2', GATEWAY_METRICS_PORT: String(port) }).telemetry;
    expect(cfg.metrics.host).toBe('127.0.0.2');
    const metrics = await startMetrics(cfg, 'test');
    try {
      expect(metrics.listener).toBe('listening');
      expect((await fetch(`http://127.0.0.2:${port}/metrics`)).status).toBe(200);
      await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
    } finally {
      await metrics.shutdown();
    }
  });
});
