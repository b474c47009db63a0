/**
 * Memory under hostile upstreams (issue 38 item 3): the gateway runs as a child process
 * (`bun src/main.ts serve`, embedded store in memory) of the checkout given by `--repo` (default
 * this one, so the same script measures older code), configured through the management API. Each
 * scenario calls it three times while its hostile upstream offers a huge body; the child's RSS is
 * sampled every 20 ms from /proc and the peak growth over the warmed-up baseline reported, with the
 * bytes the upstream produced (what the gateway read, plus socket buffers) and what the client got.
 *
 *   bun bench/upstream-bounds.ts [--repo /path/to/checkout] [--mb 200]
 *
 * Scenarios: a non-streaming chat answer of 200 MB (no Content-Length); a chat stream whose second
 * event is 200 MB long; an MCP tool result of 48 MB as JSON and as one SSE event; an MCP
 * tools/list of 200,012 tools (~31 MB). Default bounds of the settings throughout.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { admin, apikeyOp, waitServing } from '../test/support/gateway.ts';
import { type Hostile, startHostileLlm, startHostileMcp } from '../test/support/hostile-upstreams.ts';
import { connectMcp } from '../test/support/mcp-gateway.ts';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const REPO = resolve(arg('--repo') ?? resolve(import.meta.dir, '..'));
const MB = Number(arg('--mb') ?? 200);
const TOKEN = 'bench-admin-token-0123456789abcdef';
const CALLS = 3;

/** `n` distinct free ports (all held open until every one is known). */
const freePorts = (n: number): number[] => {
  const held = Array.from({ length: n }, () => Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } }));
  const ports = held.map((s) => s.port);
  for (const s of held) s.stop(true);
  return ports;
};

const rssOf = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
};

const llm = startHostileLlm(MB * 1000 * 1000);
const mcpBig = startHostileMcp(48 * 1000 * 1000);
const mcpMany = startHostileMcp(0, 200_012);
const [port, adminPort] = freePorts(2);
const child = Bun.spawn(['bun', 'src/main.ts', 'serve'], {
  cwd: REPO,
  env: {
    ...process.env,
    GATEWAY_PORT: String(port),
    GATEWAY_ADMIN_PORT: String(adminPort),
    GATEWAY_METRICS_PORT: '0',
    GATEWAY_DATA_DIR: 'memory://',
    GATEWAY_ADMIN_TOKEN: TOKEN,
    GATEWAY_DEMO: '0',
    GATEWAY_LOG_LEVEL: 'error',
    GATEWAY_SHUTDOWN_GRACE: '1s',
  },
  stdout: 'ignore',
  stderr: 'inherit',
});
const url = `http://127.0.0.1:${port}`;
const adminUrl = `http://127.0.0.1:${adminPort}`;

const must = async (op: string, body: unknown): Promise<Record<string, unknown>> => {
  const res = await fetch(`${adminUrl}${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${op} → ${res.status} ${JSON.stringify(json)}`);
  return json;
};

const report: string[] = [];
try {
  for (let deadline = Date.now() + 30_000; ; ) {
    const up = await fetch(`${adminUrl}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error('the gateway did not start');
    await Bun.sleep(100);
  }
  const acme = { customerId: 'acme', projectId: 'default' };
  await must(admin('CreateCustomer'), { customerId: 'acme', name: 'Acme' });
  await must(admin('CreateProviderConnection'), {
    ...acme,
    name: 'hostile',
    provider: 'openai',
    baseUrl: `${llm.url}/v1`,
    apiKey: 'sk-hostile',
  });
  for (const [model, target] of [
    ['h-json', 'endless-json'],
    ['h-late', 'late-endless-event'],
    ['fine', 'fine'],
  ]) {
    const created = (await must(admin('CreateModel'), {
      model,
      provider: 'openai',
      mode: 'chat',
      capabilities: ['chat'],
      contextWindow: 128000,
      maxOutputTokens: 4096,
      inputPricePerMillion: 1,
      outputPricePerMillion: 1,
    })) as { model: { id: string } };
    await must(admin('AddProjectModel'), { ...acme, modelId: created.model.id });
    await must(admin('CreateRoute'), { ...acme, model, targets: [{ connection: 'hostile', model: target }] });
  }
  await must(admin('CreateMcpServer'), { serverId: 'big', url: mcpBig.url });
  await must(admin('CreateMcpServer'), { serverId: 'many', url: mcpMany.url });
  for (const serverId of ['big', 'many']) await must(admin('AddProjectMcpServer'), { ...acme, serverId });
  await must(admin('CreateMcpProfile'), { ...acme, profileId: 'big', servers: [{ serverId: 'big' }] });
  await must(admin('CreateMcpProfile'), { ...acme, profileId: 'many', servers: [{ serverId: 'many' }] });
  const apiKey = ((await must(apikeyOp('CreateApiKey'), { name: 'k', userId: 'u1', enterpriseContext: acme })) as { apiKey: string })
    .apiKey;
  await waitServing(adminUrl, TOKEN);

  const chat = async (model: string, stream: boolean): Promise<string> => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
    });
    // Read and dropped piece by piece: the client holds nothing.
    let bytes = 0;
    let tail = '';
    if (res.body)
      for await (const c of res.body) {
        bytes += c.byteLength;
        tail = (tail + new TextDecoder().decode(c.subarray(Math.max(0, c.byteLength - 300)))).slice(-300);
      }
    const code = /"code":"([a-z_]+)"/.exec(tail)?.[1];
    return `${res.status}${code ? ` ${code}` : ''}, ${(bytes / 1e6).toFixed(1)} MB to the client`;
  };
  const mcp = async (profile: string, run: (c: Awaited<ReturnType<typeof connectMcp>>['client']) => Promise<unknown>): Promise<string> => {
    const { client } = await connectMcp(`${url}/mcp/${profile}`, apiKey);
    try {
      const r = await run(client);
      return `answered (${(JSON.stringify(r).length / 1e6).toFixed(1)} MB)`;
    } catch (e) {
      return `refused: ${e instanceof Error ? e.message.slice(0, 110) : String(e)}`;
    } finally {
      await client.close();
    }
  };

  // Warm-up: the code paths loaded, a normal answer each way.
  await chat('fine', false);
  await chat('fine', true);
  await mcp('big', (c) => c.callTool({ name: 'big__small', arguments: {} }));
  await Bun.sleep(500);
  const baseline = rssOf(child.pid);
  report.push(`gateway at ${REPO}: baseline RSS ${(baseline / 1e6).toFixed(0)} MB`);

  const scenarios: [string, Hostile, () => Promise<string>][] = [
    [`chat, non-streaming answer of ${MB} MB`, llm, () => chat('h-json', false)],
    [`chat stream, one event of ${MB} MB`, llm, () => chat('h-late', true)],
    ['MCP tool result of 48 MB (JSON)', mcpBig, () => mcp('big', (c) => c.callTool({ name: 'big__big_json', arguments: {} }))],
    ['MCP tool result of 48 MB (one SSE event)', mcpBig, () => mcp('big', (c) => c.callTool({ name: 'big__big_sse', arguments: {} }))],
    ['MCP tools/list of 200,012 tools', mcpMany, () => mcp('many', async (c) => (await c.listTools()).tools.length)],
  ];
  for (const [label, hostile, call] of scenarios) {
    let peak = rssOf(child.pid);
    const start = peak;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(child.pid))), 20);
    const produced0 = hostile.state.produced;
    let outcome = '';
    for (let i = 0; i < CALLS; i++) outcome = await call();
    await Bun.sleep(300);
    clearInterval(sampler);
    const end = rssOf(child.pid);
    report.push(
      `${label} ×${CALLS}: peak RSS +${((peak - start) / 1e6).toFixed(0)} MB over the scenario's start (+${((peak - baseline) / 1e6).toFixed(0)} MB over baseline), ` +
        `after ${((end - baseline) / 1e6).toFixed(0)} MB over baseline; upstream produced ${((hostile.state.produced - produced0) / 1e6).toFixed(1)} MB; last call: ${outcome}`,
    );
  }
} finally {
  child.kill();
  await child.exited;
  llm.stop();
  mcpBig.stop();
  mcpMany.stop();
}
console.log(report.join('\n'));
