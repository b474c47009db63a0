/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance` 0.2.x, server scenarios) for both
 * protocol generations, 2025-11-25 and 2026-07-28: for each, the scenarios that revision requires
 * (`--requirements <revision>`, frozen at its release and run at its wire) against the suite's
 * reference server directly, then through a gateway profile that fronts it with no prefix.
 *
 *   bun bench/mcp-conformance.ts [--server PATH] [--generation 2025-11-25|2026-07-28] [--scenario NAME]
 *
 * `--scenario NAME` runs one scenario at each generation's `--spec-version` instead of the
 * requirement set. The reference server is not in the npm package and not in this repository: it
 * is `examples/servers/typescript/everything-server.ts` of github.com/modelcontextprotocol/conformance
 * at REV (the commit of the 0.2.0-alpha.11 version bump, the newest the mirror holds; npm's
 * 0.2.0-alpha.12 suite runs against it). It serves both generations on `/mcp`. It is taken from
 * `--server PATH`, else `$MCP_CONFORMANCE_SERVER`, else read with git from a clone or mirror of
 * that repository at `$MCP_CONFORMANCE_REPO` (a git directory; default
 * /work/.mirror/modelcontextprotocol+conformance/repo). It is copied at run time under
 * node_modules/.mcp-conformance/ (so that it resolves this repository's `@modelcontextprotocol/sdk`,
 * `express`, `cors` and `zod`); without it the script says so and exits 2.
 *
 * The CLI sends no credential: a small proxy in front of the gateway adds `Authorization: Bearer`
 * with the API key and forwards everything else (bodies and SSE streams) untouched, the `Host`
 * header included (the dns-rebinding-protection scenario depends on it).
 *
 * Exit 1 when a required scenario passes directly but not through the gateway.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMcpGateway } from './lib/mcp-gateway.ts';

const REV = 'c321dd32035556e6769d3724a8ee97d87c3faaac';
const FILE = 'examples/servers/typescript/everything-server.ts';
const GENERATIONS = ['2025-11-25', '2026-07-28'] as const;
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
  const git = Bun.spawnSync(['git', `--git-dir=${repo}`, 'show', `${REV}:${FILE}`]);
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
  seconds: number;
  /** Scenario name → passed, for the scenarios the revision requires (scored). */
  scored: Map<string, boolean>;
  /** The same for the scenarios run but never scored (extension, pending, added after release). */
  unscored: Map<string, boolean>;
  total: string;
}

/** Runs the CLI for one generation; verdicts are read from its summary lines. */
const runSuite = async (generation: string, url: string): Promise<Run> => {
  const scenario = arg('--scenario');
  const select = scenario ? ['--spec-version', generation, '--scenario', scenario] : ['--requirements', generation];
  const t0 = performance.now();
  const p = Bun.spawn(['bun', CLI, 'server', '--url', url, ...select], { stdout: 'pipe', stderr: 'pipe', cwd: ROOT });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  await p.exited;
  const seconds = (performance.now() - t0) / 1000;
  const lines = `${out}\n${err}`.split('\n');
  const verdicts = new Map<string, boolean>();
  const unscored = new Map<string, boolean>();
  let inUnscored = false;
  for (const line of lines) {
    if (/^Not scored/.test(line)) inUnscored = true;
    const summary = /^([✓✗]) ([\w/-]+): \d+ passed/.exec(line);
    if (summary?.[2]) verdicts.set(summary[2], summary[1] === '✓');
    const listed = /^\s+([✓✗]) ([\w/-]+) \(/.exec(line);
    if (inUnscored && listed?.[2]) unscored.set(listed[2], listed[1] === '✓');
  }
  // One scenario is reported by its checks alone ("Passed: n/m, k failed"), with no summary line.
  const checks = lines.map((l) => /^Passed: \d+\/\d+, (\d+) failed/.exec(l)).find((m) => m !== null);
  if (scenario && verdicts.size === 0 && checks) verdicts.set(scenario, checks[1] === '0');
  const scored = new Map([...verdicts].filter(([name]) => !unscored.has(name)));
  return { seconds, scored, unscored, total: lines.find((l) => l.startsWith('Total:')) ?? checks?.[0] ?? '' };
};

const count = (m: Map<string, boolean>): string => `${[...m.values()].filter(Boolean).length}/${m.size}`;
const failing = (m: Map<string, boolean>): string[] => [...m].filter(([, ok]) => !ok).map(([name]) => name);

const report = (generation: string, direct: Run, through: Run): string[] => {
  const lost = [...direct.scored, ...direct.unscored]
    .filter(([name, ok]) => ok && (through.scored.get(name) ?? through.unscored.get(name)) !== true)
    .map(([name]) => name);
  const gained = [...through.scored].filter(([name, ok]) => ok && direct.scored.get(name) === false).map(([name]) => name);
  console.log(`\n=== ${generation}`);
  for (const [label, r] of [
    ['directly', direct],
    ['through the gateway', through],
  ] as const)
    console.log(
      `  ${label.padEnd(20)} required ${count(r.scored)} passed, not scored ${count(r.unscored)} passed (${r.total.replace('Total: ', '')} checks; ${r.seconds.toFixed(1)} s)`,
    );
  const directFail = failing(direct.scored);
  if (directFail.length > 0) console.log(`  required, failing directly (the reference server's): ${directFail.join(', ')}`);
  const unscoredFail = failing(direct.unscored);
  if (unscoredFail.length > 0) console.log(`  not scored, failing directly: ${unscoredFail.join(', ')}`);
  if (gained.length > 0) console.log(`  failing directly, passing through the gateway: ${gained.join(', ')}`);
  console.log(
    lost.length === 0
      ? '  every scenario that passes directly passes through the gateway'
      : `  PASSING DIRECTLY BUT NOT THROUGH THE GATEWAY: ${lost.join(', ')}`,
  );
  return lost;
};

const main = async (): Promise<number> => {
  const source = serverSource();
  if (!source) {
    console.error(
      `The conformance reference server was not found: pass --server PATH to ${FILE} of modelcontextprotocol/conformance at ${REV}, or set MCP_CONFORMANCE_SERVER / MCP_CONFORMANCE_REPO (see the head of this script).`,
    );
    return 2;
  }
  if (!existsSync(CLI)) {
    console.error('@modelcontextprotocol/conformance is not installed (bun install).');
    return 2;
  }
  const only = arg('--generation');
  const generations = GENERATIONS.filter((g) => !only || g === only);
  if (generations.length === 0) {
    console.error(`--generation is one of ${GENERATIONS.join(', ')}`);
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
    const pkg: { version: string } = JSON.parse(readFileSync(join(CLI, '../../package.json'), 'utf8'));
    console.log(`@modelcontextprotocol/conformance ${pkg.version}, reference server ${FILE} at ${REV}`);
    let lost = 0;
    for (const generation of generations) {
      const direct = await runSuite(generation, `http://localhost:${refPort}/mcp`);
      const through = await runSuite(generation, `http://localhost:${proxy.port}/mcp`);
      lost += report(generation, direct, through).length;
    }
    return lost === 0 ? 0 : 1;
  } finally {
    proxy.stop(true);
    ref.kill();
    await gateway.stop();
  }
};

process.exit(await main());
