/**
 * MCP scenario (issues 24, 41): `tools/call` through the gateway vs directly against the same SDK
 * server (req/s, and the latency the gateway adds at p50/p99, in the same run), for each protocol
 * generation, and the memory of 1,000 open 2025 MCP sessions on the gateway.
 *
 *   bun bench/mcp.ts [--generation 2025-11-25|2026-07-28] [--seconds 5] [--concurrency 8] [--sessions 1000]
 *
 * Both generations by default, each end to end in its own: 2025-11-25 is a v1 SDK server (Streamable
 * HTTP, stateful sessions) called by v1 SDK clients; 2026-07-28 a v2 SDK server (stateless, refusing
 * 2025 requests) called by v2 SDK clients pinned to 2026-07-28. The upstream runs in its own process;
 * the gateway in this process (embedded store in memory, records on), with a profile that fronts the
 * server with no prefix. Each caller is an SDK client calling `echo` in a loop.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMcpGateway } from './lib/mcp-gateway.ts';

const GENERATIONS = ['2025-11-25', '2026-07-28'] as const;
type Generation = (typeof GENERATIONS)[number];

const num = (name: string, d: number): number => {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : Number.NaN;
  return Number.isFinite(v) && v > 0 ? v : d;
};
const SECONDS = num('--seconds', 5);
const CONCURRENCY = num('--concurrency', 8);
const SESSIONS = num('--sessions', 1000);
const only = process.argv.includes('--generation') ? process.argv[process.argv.indexOf('--generation') + 1] : undefined;
const generations = GENERATIONS.filter((g) => only === undefined || g === only);
if (generations.length === 0) {
  console.error(`--generation is one of ${GENERATIONS.join(', ')}`);
  process.exit(2);
}

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

interface Caller {
  echo(): Promise<unknown>;
  close(): Promise<void>;
}

const connect = async (generation: Generation, url: string, key?: string): Promise<Caller> => {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const requestInit = { headers };
  const args = { name: 'echo', arguments: { text: 'bench' } };
  if (generation === '2026-07-28') {
    const client = new ClientV2({ name: 'bench', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new TransportV2(new URL(url), { requestInit }));
    return { echo: () => client.callTool(args), close: () => client.close() };
  }
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
  return { echo: () => client.callTool(args), close: () => client.close() };
};

const load = async (
  generation: Generation,
  label: string,
  url: string,
  key?: string,
): Promise<{ label: string; rps: number; p50: number; p99: number }> => {
  const clients = await Promise.all(Array.from({ length: CONCURRENCY }, () => connect(generation, url, key)));
  const run = async (ms: number, lat: number[]): Promise<void> => {
    const end = performance.now() + ms;
    await Promise.all(
      clients.map(async (c) => {
        while (performance.now() < end) {
          const t = performance.now();
          await c.echo();
          lat.push(performance.now() - t);
        }
      }),
    );
  };
  await run(1000, []);
  const lat: number[] = [];
  await run(SECONDS * 1000, lat);
  await Promise.all(clients.map((c) => c.close()));
  lat.sort((a, b) => a - b);
  return { label, rps: lat.length / SECONDS, p50: pct(lat, 50), p99: pct(lat, 99) };
};

const mb = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MB`;

const sessionsMemory = async (gatewayUrl: string, apiKey: string): Promise<void> => {
  // Memory of open sessions: each initialised and used once (so the gateway holds its upstream session too).
  Bun.gc(true);
  const before = process.memoryUsage();
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${apiKey}`,
  };
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  });
  const call = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
  for (let i = 0; i < SESSIONS; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, SESSIONS - i) }, async () => {
        const r = await fetch(gatewayUrl, { method: 'POST', headers, body: init });
        const sid = r.headers.get('mcp-session-id') ?? '';
        await r.text();
        const c = await fetch(gatewayUrl, {
          method: 'POST',
          headers: { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
          body: call,
        });
        await c.text();
      }),
    );
  Bun.gc(true);
  const after = process.memoryUsage();
  console.log(
    `${SESSIONS} open sessions: heap +${mb(after.heapUsed - before.heapUsed)}, rss +${mb(after.rss - before.rss)} (${((after.heapUsed - before.heapUsed) / SESSIONS / 1024).toFixed(1)} KB heap per session)`,
  );
};

for (const generation of generations) {
  const upstream = Bun.spawn(['bun', `${import.meta.dir}/lib/mcp-upstream.ts`, generation], { stdout: 'pipe', stderr: 'inherit' });
  const first = await upstream.stdout.getReader().read();
  const upstreamUrl = new TextDecoder().decode(first.value).trim();
  const gateway = await startMcpGateway('bench', [['echo-server', upstreamUrl, 'streamable-http', '']]);
  try {
    console.log(`=== ${generation} (client and server)`);
    const direct = await load(generation, 'direct', upstreamUrl);
    const through = await load(generation, 'gateway', gateway.url, gateway.apiKey);
    const direct2 = await load(generation, 'direct (again)', upstreamUrl);
    for (const r of [direct, through, direct2])
      console.log(`${r.label.padEnd(16)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms`);
    const base = { p50: (direct.p50 + direct2.p50) / 2, p99: (direct.p99 + direct2.p99) / 2 };
    console.log(
      `gateway adds     p50 ${(through.p50 - base.p50).toFixed(2)} ms  p99 ${(through.p99 - base.p99).toFixed(2)} ms  (concurrency ${CONCURRENCY}, ${SECONDS} s each)`,
    );
    // 2026-07-28 has no sessions: the memory of open sessions is the 2025 generation's.
    if (generation === '2025-11-25') await sessionsMemory(gateway.url, gateway.apiKey);
  } finally {
    await gateway.stop();
    upstream.kill();
  }
}
process.exit(0);
