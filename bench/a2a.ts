/**
 * A2A scenario: the overhead the gateway adds per `SendMessage` and per streamed event, beside the
 * same `@a2a-js/sdk` agent called directly, in the same run.
 *
 *   bun bench/a2a.ts [--seconds 5] [--concurrency 8] [--words 8]
 *
 * The agent (bench/lib/a2a-upstream.ts: DefaultRequestHandler behind the SDK's JSON-RPC transport
 * handler) runs in its own process; the gateway runs in this process (embedded store in memory,
 * records on) with the agent in its catalog and assigned to the project. `SendMessage` is timed
 * per call; `SendStreamingMessage` (one task event, one artifact event per word, one status event)
 * is timed per call and divided by its events.
 */
import { ManagementClient } from '../src/api/client.ts';
import { startGateway } from '../src/app.ts';
import { loadConfig } from '../src/config/env.ts';
import { generateKek } from '../src/core/secrets.ts';

const num = (name: string, d: number): number => {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : Number.NaN;
  return Number.isFinite(v) && v > 0 ? v : d;
};
const SECONDS = num('--seconds', 5);
const CONCURRENCY = num('--concurrency', 8);
const WORDS = num('--words', 8);
const ADMIN = 'bench-admin-token-0123456789';

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

const body = (method: string, text: string): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: { message: { role: 'ROLE_USER', messageId: crypto.randomUUID(), parts: [{ text }] } },
  });

interface Result {
  label: string;
  calls: number;
  events: number;
  p50: number;
  p99: number;
}

/** Calls `url` in a loop from CONCURRENCY callers for SECONDS (after a second of warm-up); latency per call. */
const load = async (label: string, url: string, method: string, key?: string): Promise<Result> => {
  const text = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');
  const headers = { 'content-type': 'application/json', 'a2a-version': '1.0', ...(key ? { authorization: `Bearer ${key}` } : {}) };
  let events = 0;
  const run = async (ms: number, lat: number[]): Promise<void> => {
    const end = performance.now() + ms;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < end) {
          const t = performance.now();
          const res = await fetch(url, { method: 'POST', headers, body: body(method, text) });
          const answer = await res.text();
          if (res.status !== 200) throw new Error(`${label}: HTTP ${res.status} ${answer.slice(0, 200)}`);
          lat.push(performance.now() - t);
          events += method === 'SendStreamingMessage' ? answer.split('\n\n').filter((e) => e.startsWith('data:')).length : 1;
        }
      }),
    );
  };
  await run(1000, []);
  events = 0;
  const lat: number[] = [];
  await run(SECONDS * 1000, lat);
  lat.sort((a, b) => a - b);
  return { label, calls: lat.length, events, p50: pct(lat, 50), p99: pct(lat, 99) };
};

const agent = Bun.spawn(['bun', `${import.meta.dir}/lib/a2a-upstream.ts`], { stdout: 'pipe', stderr: 'inherit' });
const first = await agent.stdout.getReader().read();
const agentUrl = new TextDecoder().decode(first.value).trim();
const gw = await startGateway(
  loadConfig([], {
    GATEWAY_PORT: '0',
    GATEWAY_ADMIN_PORT: '0',
    GATEWAY_DATA_DIR: 'memory://',
    GATEWAY_ADMIN_TOKEN: ADMIN,
    GATEWAY_DEMO: '0',
    GATEWAY_KEK: generateKek(),
    GATEWAY_LOG_LEVEL: 'error',
    GATEWAY_SHUTDOWN_GRACE: '1s',
  }),
);
try {
  const api = new ManagementClient({ endpoint: gw.adminUrl, token: ADMIN, attempts: 1 });
  const project = { customerId: 'bench', projectId: 'default' };
  await api.call('CreateCustomer', { customerId: 'bench', name: 'Bench' });
  const key = await api.call('CreateApiKey', { name: 'a2a', userId: 'bench', enterpriseContext: project });
  await api.call('CreateA2aAgent', { agentId: 'bench', cardUrl: `${agentUrl}/.well-known/agent-card.json` });
  await api.call('AddProjectA2aAgent', { ...project, agentId: 'bench' });
  await gw.controller.settled();
  const through = `${gw.inferenceUrl}/a2a/bench`;
  const direct = `${agentUrl}/rpc`;
  for (const method of ['SendMessage', 'SendStreamingMessage']) {
    const d = await load(`direct ${method}`, direct, method);
    const g = await load(`gateway ${method}`, through, method, key.apiKey);
    for (const r of [d, g])
      console.log(
        `${r.label.padEnd(30)} ${(r.calls / SECONDS).toFixed(0).padStart(6)} calls/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (${(r.events / r.calls).toFixed(1)} events/call)`,
      );
    const perEvent = (g.p50 - d.p50) / (g.events / g.calls);
    console.log(
      `gateway adds ${method.padEnd(21)} p50 ${(g.p50 - d.p50).toFixed(2)} ms  p99 ${(g.p99 - d.p99).toFixed(2)} ms${method === 'SendStreamingMessage' ? `  (${perEvent.toFixed(3)} ms per event at p50)` : ''}`,
    );
  }
} finally {
  await gw.stop(500);
  agent.kill();
}
