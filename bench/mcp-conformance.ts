/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios) against its
 * reference server directly, then through a gateway profile that fronts it with no prefix.
 *
 *   bun bench/mcp-conformance.ts [--server PATH] [--scenario NAME]
 *
 * The reference server is not in the npm package and not in this repository: it is
 * `examples/servers/typescript/everything-server.ts` of github.com/modelcontextprotocol/conformance
 * at tag v0.1.16 (the npm version). It is taken from `--server PATH`, else `$MCP_CONFORMANCE_SERVER`,
 * else read with git from a clone or mirror of that repository at `$MCP_CONFORMANCE_REPO` (a git
 * directory; default /work/.mirror/modelcontextprotocol+conformance/repo). It is copied at run time
 * under node_modules/.mcp-conformance/ (so that it resolves this repository's `@modelcontextprotocol/sdk`,
 * `express`, `cors` and `zod`); without it the script says so and exits 2.
 *
 * The CLI sends no credential: a small proxy in front of the gateway adds `Authorization: Bearer`
 * with the API key and forwards everything else (bodies and SSE streams) untouched, the `Host`
 * header included (the dns-rebinding-protection scenario depends on it).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMcpGateway } from './lib/mcp-gateway.ts';

const TAG = 'v0.1.16';
const FILE = 'examples/servers/typescript/everything-server.ts';
const ROOT = join(import.meta.dir, '..');
const CLI = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

const serverSource = (): string | undefined => {
  const path = arg('--server') ?? process.env.MCP_CONFORMANCE_SERVER;
  if (path) return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  const repo = process.env.MCP_CONFORMANCE_REPO ?? '/work/.mirror/modelcontextprotocol+conformance/repo';
  if (!existsSync(repo)) return undefined;
  const git = Bun.spawnSync(['git', `--git-dir=${repo}`, 'show', `${TAG}:${FILE}`]);
  return git.exitCode === 0 ? git.stdout.toString() : undefined;
};

const freePort = (): number => {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const p = s.port ?? 0;
  s.stop(true);
  return p;
};

const waitFor = async (url: string): Promise<void> => {
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(url, { method: 'GET' });
      return;
    } catch {
      await Bun.sleep(100);
    }
  }
  throw new Error(`${url} did not come up`);
};

interface Run {
  label: string;
  seconds: number;
  summary: string;
  passed: Set<string>;
  failed: Set<string>;
}

/** Runs the CLI; scenario verdicts are read from its output lines. */
const runSuite = async (label: string, url: string): Promise<Run> => {
  const scenario = arg('--scenario');
  const t0 = performance.now();
  const p = Bun.spawn(['bun', CLI, 'server', '--url', url, ...(scenario ? ['--scenario', scenario] : [])], {
    stdout: 'pipe',
    stderr: 'pipe',
    cwd: ROOT,
  });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  await p.exited;
  const seconds = (performance.now() - t0) / 1000;
  const text = `${out}\n${err}`;
  const passed = new Set<string>();
  const failed = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /^\s*([✓✗])\s+([\w-]+)/.exec(line);
    if (m?.[2]) (m[1] === '✓' ? passed : failed).add(m[2]);
  }
  const tail = text.trim().split('\n');
  const at = tail.findIndex((l) => /summary/i.test(l));
  return { label, seconds, summary: (at >= 0 ? tail.slice(at) : tail.slice(-15)).join('\n'), passed, failed };
};

const main = async (): Promise<number> => {
  const source = serverSource();
  if (!source) {
    console.error(
      `The conformance reference server was not found: pass --server PATH to ${FILE} of modelcontextprotocol/conformance ${TAG}, or set MCP_CONFORMANCE_SERVER / MCP_CONFORMANCE_REPO (see the head of this script).`,
    );
    return 2;
  }
  if (!existsSync(CLI)) {
    console.error('@modelcontextprotocol/conformance is not installed (bun install).');
    return 2;
  }
  const dir = join(ROOT, 'node_modules/.mcp-conformance');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'everything-server.ts');
  writeFileSync(file, source);

  const refPort = freePort();
  const ref = Bun.spawn(['bun', file], { env: { ...process.env, PORT: String(refPort) }, stdout: 'ignore', stderr: 'inherit', cwd: ROOT });
  const gateway = await startMcpGateway('conformance', [['everything', `http://localhost:${refPort}/mcp`, 'streamable-http', '']]);
  const proxy = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    fetch: async (req) => {
      const headers = new Headers(req.headers);
      headers.set('authorization', `Bearer ${gateway.apiKey}`);
      const res = await fetch(gateway.url, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? null : await req.arrayBuffer(),
        redirect: 'manual',
      });
      return new Response(res.body, { status: res.status, headers: res.headers });
    },
  });
  try {
    await waitFor(`http://localhost:${refPort}/mcp`);
    const direct = await runSuite('direct', `http://localhost:${refPort}/mcp`);
    const through = await runSuite('through the gateway', `http://localhost:${proxy.port}/mcp`);
    for (const r of [direct, through])
      console.log(`\n=== ${r.label} (${r.seconds.toFixed(1)} s): ${r.passed.size} scenarios passed, ${r.failed.size} failed\n${r.summary}`);
    const lost = [...direct.passed].filter((s) => !through.passed.has(s));
    console.log(
      lost.length === 0
        ? '\nEvery scenario that passes directly passes through the gateway.'
        : `\nPassing directly but not through the gateway: ${lost.join(', ')}`,
    );
    return lost.length === 0 ? 0 : 1;
  } finally {
    proxy.stop(true);
    ref.kill();
    await gateway.stop();
  }
};

process.exit(await main());
