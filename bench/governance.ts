#!/usr/bin/env bun
/**
 * `bun bench/governance.ts [--duration=S] [--concurrency=C]` — the cost of admission with rate
 * limits and budgets on, against the same run's bare proxy and the gateway without governance.
 * One mock upstream (in this process), the bare proxy (bench/bare-proxy.ts) and two gateway
 * processes (embedded store): one with in-process counters, one with REDIS_URL (a redis-server of
 * its own on a free port; skipped when there is no redis-server). Each gateway serves two
 * projects: `plain` (no governance) and `governed` (rate-limit with a huge requestsPerMinute and
 * tokensPerMinute, a project budget and a key budget), measured with the same closed loop of
 * non-streaming chat requests, every path warmed up first. Each ratio is the governed project
 * against the plain one of the same process. Prints one line per target and a last JSON line.
 */
import { type Subprocess, spawn } from 'bun';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitServing } from './lib/gateway.ts';

const arg = (name: string, fallback: number): number =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const DURATION_S = arg('duration', 5);
const CONCURRENCY = arg('concurrency', 32);
const ADMIN = 'bench-admin-token-0123456789';

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });

const upstream = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: () =>
    Response.json({
      id: 'chatcmpl-b',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
    }),
});
const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
const procs: Subprocess[] = [];

const waitFor = async (url: string): Promise<void> => {
  for (let i = 0; i < 300; i++) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await Bun.sleep(100);
  }
  throw new Error(`${url} did not come up`);
};

const startGatewayProcess = async (extra: Record<string, string>): Promise<{ url: string; admin: string }> => {
  const [port, adminPort] = [await freePort(), await freePort()];
  procs.push(
    spawn(['bun', join(import.meta.dir, '..', 'src', 'main.ts'), 'serve'], {
      env: {
        ...process.env,
        GATEWAY_PORT: String(port),
        GATEWAY_ADMIN_PORT: String(adminPort),
        GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-gov-')),
        GATEWAY_ADMIN_TOKEN: ADMIN,
        GATEWAY_DEMO: '0',
        GATEWAY_LOG_LEVEL: 'error',
        GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1',
        GATEWAY_RECORD_BODIES: '0',
        ...extra,
      },
      stdout: 'ignore',
      stderr: 'inherit',
    }),
  );
  const g = { url: `http://127.0.0.1:${port}`, admin: `http://127.0.0.1:${adminPort}` };
  await waitFor(`${g.url}/healthz`);
  return g;
};

const call = async (adminUrl: string, path: string, body: unknown): Promise<Record<string, unknown>> => {
  const r = await fetch(`${adminUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, unknown>;
};
const A = (op: string) => `/admin.v1.AdminService/${op}`;

/** Two projects on one gateway; returns their keys. */
const provision = async (adminUrl: string): Promise<{ plain: string; governed: string }> => {
  await call(adminUrl, A('CreateCustomer'), { customerId: 'bench', name: 'Bench' });
  const model = (await call(adminUrl, A('CreateModel'), {
    model: 'm',
    provider: 'openai',
    mode: 'chat',
    capabilities: ['chat'],
    contextWindow: 8192,
    maxOutputTokens: 16,
    inputPricePerMillion: 0.1,
    outputPricePerMillion: 0.2,
  })) as { model: { id: string } };
  const keys: Record<string, string> = {};
  for (const projectId of ['plain', 'governed']) {
    await call(adminUrl, A('CreateProject'), { customerId: 'bench', projectId });
    await call(adminUrl, A('AddProjectModel'), { customerId: 'bench', projectId, modelId: model.model.id });
    await call(adminUrl, A('CreateProviderConnection'), {
      customerId: 'bench',
      projectId,
      name: 'up',
      provider: 'openai',
      baseUrl: `${upstreamUrl}/v1`,
      apiKey: 'sk-x',
    });
    await call(adminUrl, A('CreateRoute'), { customerId: 'bench', projectId, model: 'm', targets: [{ connection: 'up', model: 'm' }] });
    const key = (await call(adminUrl, '/apikey.v1.ApiKeyService/CreateApiKey', {
      name: 'b',
      userId: 'u',
      enterpriseContext: { customerId: 'bench', projectId },
    })) as { apiKey: string; id: string };
    keys[projectId] = key.apiKey;
    if (projectId === 'governed') {
      await call(adminUrl, A('UpsertProjectSetting'), {
        customerId: 'bench',
        projectId,
        settingName: 'rate-limit',
        settingValue: '{"requestsPerMinute":100000000,"tokensPerMinute":1000000000}',
      });
      await call(adminUrl, A('UpsertBudget'), { customerId: 'bench', projectId, name: 'project', limitUsd: '1000000', period: 'month' });
      await call(adminUrl, A('UpsertBudget'), {
        customerId: 'bench',
        projectId,
        apiKeyId: key.id,
        name: 'key',
        limitUsd: '1000000',
        period: 'day',
      });
    }
  }
  // Writes return at commit: wait until the embedded data plane serves them.
  await waitServing(adminUrl, ADMIN);
  return { plain: keys.plain as string, governed: keys.governed as string };
};

const BODY = JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] });

/** Closed loop: CONCURRENCY workers for DURATION_S; requests per second and mean latency. */
const measure = async (url: string, key: string, durationS = DURATION_S): Promise<{ rps: number; meanMs: number; errors: number }> => {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const end = performance.now() + durationS * 1000;
  let n = 0;
  let errors = 0;
  let total = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const r = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body: BODY });
        await r.arrayBuffer();
        if (r.status !== 200) errors++;
        total += performance.now() - t;
        n++;
      }
    }),
  );
  return { rps: Math.round(n / durationS), meanMs: Math.round((total / Math.max(1, n)) * 100) / 100, errors };
};

const main = async (): Promise<void> => {
  const bare = spawn(['bun', join(import.meta.dir, 'bare-proxy.ts'), '--upstream', upstreamUrl], { stdout: 'pipe', stderr: 'inherit' });
  procs.push(bare);
  barePort = await firstPort(bare.stdout as ReadableStream<Uint8Array>);
  const out: Record<string, { rps: number; meanMs: number; errors: number }> = {};
  const mem = await startGatewayProcess({});
  const memKeys = await provision(mem.admin);
  let redisProc: Subprocess | undefined;
  let redis: { url: string; admin: string } | undefined;
  let redisKeys: { plain: string; governed: string } | undefined;
  if (Bun.which('redis-server')) {
    const rp = await freePort();
    redisProc = spawn(['redis-server', '--port', String(rp), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdout: 'ignore',
      stderr: 'ignore',
    });
    procs.push(redisProc);
    await Bun.sleep(300);
    redis = await startGatewayProcess({ REDIS_URL: `redis://127.0.0.1:${rp}` });
    redisKeys = await provision(redis.admin);
  }
  // Every path warmed first (JIT, connection pools): the first measurement of a process must not be its cold start.
  for (const [g, keys] of [
    [mem, memKeys],
    [redis, redisKeys],
  ] as const) {
    if (!g || !keys) continue;
    await measure(g.url, keys.plain, 1);
    await measure(g.url, keys.governed, 1);
  }
  out.bare = await measureBare();
  out.gateway = await measure(mem.url, memKeys.plain);
  out['gateway+limits (in process)'] = await measure(mem.url, memKeys.governed);
  if (redis && redisKeys) {
    out['gateway (redis process)'] = await measure(redis.url, redisKeys.plain);
    out['gateway+limits (redis)'] = await measure(redis.url, redisKeys.governed);
  }
  for (const [name, r] of Object.entries(out))
    console.log(`${name.padEnd(28)} ${String(r.rps).padStart(7)} req/s  mean ${r.meanMs} ms  errors ${r.errors}`);
  const ratio = (a?: number, b?: number) => (a && b ? Math.round((a / b) * 1000) / 1000 : null);
  console.log(
    JSON.stringify({
      bench: 'governance',
      concurrency: CONCURRENCY,
      duration_s: DURATION_S,
      bare_rps: out.bare?.rps,
      gateway_rps: out.gateway?.rps,
      limits_memory_rps: out['gateway+limits (in process)']?.rps,
      limits_redis_rps: out['gateway+limits (redis)']?.rps ?? null,
      limits_memory_vs_gateway: ratio(out['gateway+limits (in process)']?.rps, out.gateway?.rps),
      // Each against the same gateway process without limits (its plain project).
      limits_redis_vs_gateway: ratio(out['gateway+limits (redis)']?.rps, out['gateway (redis process)']?.rps),
      limits_memory_vs_bare: ratio(out['gateway+limits (in process)']?.rps, out.bare?.rps),
    }),
  );
  async function measureBare() {
    return barePort ? measure(`http://127.0.0.1:${barePort}`, 'x') : { rps: 0, meanMs: 0, errors: 0 };
  }
};

let barePort = 0;
/** The bare proxy prints {"port":N} once listening. */
const firstPort = async (stdout: ReadableStream<Uint8Array>): Promise<number> => {
  const reader = stdout.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return (JSON.parse(text.split('\n')[0] as string) as { port: number }).port;
};
main()
  .catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exitCode = 1;
  })
  .finally(() => {
    for (const p of procs) p.kill();
    upstream.stop(true);
  });
