import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildLibrary } from '../../iac/build.ts';
import iacPkg from '../../iac/package.json' with { type: 'json' };
import { PROVIDER_VERSION } from '../../iac/src/version.ts';
import rootPkg from '../../package.json' with { type: 'json' };
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { CACHE_DIR } from './cdktn-support.ts';
import { HAVE_TERRAFORM, providerInstalled, terraform } from './support.ts';

/**
 * Issue 30, defect 6: iac/ is a package of its own (@ai-gateway/cdk, version = the provider's,
 * compiled ES module and declarations, cdktf and constructs as peer dependencies). Packed to a
 * tarball, it is installed into an app outside the repository and deployed with cdktf 0.21 — and,
 * when the CDK Terrain toolchain is cached (test/iac/cdktn.test.ts installs it), with cdktn aliased
 * as `cdktf`: one CDK loads, the one the app chose. Run with Node, not Bun.
 */

const NODE = Bun.which('node');
const CDKTN_MODULES = join(CACHE_DIR, 'node_modules');

const APP = `import { App, TerraformStack } from 'cdktf';
import { Customer, GatewayProject, GatewayProvider, PROVIDER_VERSION, secretVariable } from '@ai-gateway/cdk';
const app = new App({ outdir: process.env.OUT });
const stack = new TerraformStack(app, 'pkg');
new GatewayProvider(stack, 'gateway');
const customer = new Customer(stack, 'customer', { customerId: process.env.CUSTOMER });
new GatewayProject(stack, 'web', {
  customerId: customer.customerId,
  projectId: 'web',
  connections: { primary: { providerName: 'echo', apiKeyWo: secretVariable(stack, 'upstream_api_key'), apiKeyWoVersion: 1 } },
  keys: { app: {} },
});
app.synth();
console.log('provider version', PROVIDER_VERSION);
`;

test('the library version is the provider version is the gateway version', () => {
  expect(PROVIDER_VERSION).toBe(rootPkg.version);
  expect(iacPkg.version).toBe(rootPkg.version);
  expect(iacPkg.peerDependencies).toMatchObject({ cdktf: expect.any(String), constructs: expect.any(String) });
  expect(Object.keys(iacPkg).filter((k) => k === 'dependencies')).toEqual([]);
});

describe.skipIf(!HAVE_TERRAFORM || NODE === null)('the packed library in an app outside the repository', () => {
  let g: TestGateway;
  let rc: string;
  let tarball: string;
  const tmp = mkdtempSync(join(tmpdir(), 'gw-pkg-'));

  const run = async (cmd: string[], cwd: string, env: Record<string, string> = {}) => {
    const p = Bun.spawn(cmd, {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, ...env },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, out: `${out}\n${err}` };
  };

  /** Synthesizes the app with Node, then terraform apply / destroy of the stack against the gateway. */
  const deploy = async (app: string, customer: string, cdkVersion: string, nodeFlags: string[] = []) => {
    const out = join(app, 'cdktf.out');
    const synth = await run([NODE ?? 'node', ...nodeFlags, 'main.mjs'], app, { OUT: out, CUSTOMER: customer });
    expect(synth.code, synth.out).toBe(0);
    expect(synth.out).toContain(`provider version ${rootPkg.version}`);
    const stackDir = join(out, 'stacks/pkg');
    const json = readFileSync(join(stackDir, 'cdk.tf.json'), 'utf8');
    const doc = JSON.parse(json) as {
      '//': { metadata: { version: string } };
      terraform: { required_providers: { gateway: { version: string; source: string } } };
    };
    expect(doc.terraform.required_providers.gateway).toEqual({ source: 'gateway.local/gateway/gateway', version: rootPkg.version });
    expect(doc['//'].metadata.version).toBe(cdkVersion);
    const env = {
      TF_CLI_CONFIG_FILE: rc,
      GATEWAY_ENDPOINT: g.adminUrl,
      GATEWAY_TOKEN: ADMIN_TOKEN,
      TF_VAR_upstream_api_key: 'sk-pkg-upstream-41',
    };
    expect((await terraform(stackDir, ['init', '-input=false', '-no-color'], env)).code).toBe(0);
    const applied = await terraform(stackDir, ['apply', '-auto-approve', '-input=false', '-no-color'], env);
    expect(applied.code, applied.out).toBe(0);
    expect((await g.call(admin('GetProject'), { customerId: customer, projectId: 'web' })).status).toBe(200);
    expect(json).not.toContain('sk-pkg-upstream-41');
    const destroyed = await terraform(stackDir, ['destroy', '-auto-approve', '-input=false', '-no-color'], env);
    expect(destroyed.code, destroyed.out).toBe(0);
  };

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway(), buildLibrary()]);
    rc = built.rc;
    g = gw;
    const iac = resolve(import.meta.dir, '../../iac');
    const packed = await run(['bun', 'pm', 'pack', '--destination', tmp, '--quiet'], iac);
    expect(packed.code, packed.out).toBe(0);
    tarball = join(tmp, readdirSync(tmp).find((f) => f.endsWith('.tgz')) ?? '');
  }, 180_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('the tarball holds the compiled library, its declarations and the docs, not the sources', async () => {
    const list = await run(['tar', '-tzf', tarball], tmp);
    expect(list.code).toBe(0);
    for (const f of [
      'package/package.json',
      'package/dist/index.js',
      'package/dist/index.d.ts',
      'package/dist/src/l1.d.ts',
      'package/docs/README.md',
    ])
      expect(list.out).toContain(f);
    expect(list.out).not.toContain('package/src/');
    expect(list.out).not.toContain('package/provider/');
  });

  test('cdktf 0.21: bun add the tarball, synthesize with Node, apply, destroy', async () => {
    const app = join(tmp, 'cdktf-app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pkg-app', private: true, type: 'module' }));
    writeFileSync(join(app, 'main.mjs'), APP);
    const add = await run(['bun', 'add', tarball, 'cdktf@0.21.0', 'constructs@10.4.2'], app);
    expect(add.code, add.out).toBe(0);
    // One CDK: the library brings none of its own.
    expect(existsSync(join(app, 'node_modules/@ai-gateway/cdk/node_modules'))).toBe(false);
    await deploy(app, 'pkgtf', '0.21.0');
  }, 240_000);

  test.skipIf(!existsSync(join(CDKTN_MODULES, 'cdktf/package.json')))(
    'CDK Terrain (cdktn as cdktf): the same tarball, synthesize with Node, apply, destroy',
    async () => {
      const app = join(tmp, 'cdktn-app');
      const lib = join(app, 'node_modules/@ai-gateway/cdk');
      mkdirSync(lib, { recursive: true });
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pkg-app-tn', private: true, type: 'module' }));
      writeFileSync(join(app, 'main.mjs'), APP);
      const untar = await run(['tar', '-xzf', tarball, '--strip-components=1', '-C', lib], app);
      expect(untar.code, untar.out).toBe(0);
      for (const dep of ['cdktf', 'constructs']) symlinkSync(join(CDKTN_MODULES, dep), join(app, 'node_modules', dep), 'dir');
      const version = JSON.parse(readFileSync(join(CDKTN_MODULES, 'cdktf/package.json'), 'utf8')) as { name: string; version: string };
      expect(version.name).toBe('cdktn');
      await deploy(app, 'pkgtn', version.version);
    },
    240_000,
  );

  // Issue 46, item 4: iac/ linked (a workspace link, `bun link`, npm's `file:` dependency: a symlink
  // into the repository) resolves `cdktf` from its real path — the repository's cdktf 0.21 beside the
  // app's cdktn, two CDKs. With symlinks preserved (the documented way) the app's one CDK loads.
  test.skipIf(!existsSync(join(CDKTN_MODULES, 'cdktf/package.json')))(
    'CDK Terrain with iac/ symlinked: synthesizes with --preserve-symlinks (Node and Bun), applies, destroys',
    async () => {
      const app = join(tmp, 'cdktn-linked');
      mkdirSync(join(app, 'node_modules/@ai-gateway'), { recursive: true });
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pkg-app-linked', private: true, type: 'module' }));
      writeFileSync(join(app, 'main.mjs'), APP);
      symlinkSync(resolve(import.meta.dir, '../../iac'), join(app, 'node_modules/@ai-gateway/cdk'), 'dir');
      for (const dep of ['cdktf', 'constructs']) symlinkSync(join(CDKTN_MODULES, dep), join(app, 'node_modules', dep), 'dir');
      const version = JSON.parse(readFileSync(join(CDKTN_MODULES, 'cdktf/package.json'), 'utf8')) as { version: string };
      // Without preserved symlinks the library's `cdktf` is the repository's: two CDKs, synth fails.
      const mixed = await run([NODE ?? 'node', 'main.mjs'], app, { OUT: join(app, 'mixed.out'), CUSTOMER: 'pkgln' });
      expect(mixed.code).not.toBe(0);
      const bun = await run(['bun', '--preserve-symlinks', 'main.mjs'], app, { OUT: join(app, 'bun.out'), CUSTOMER: 'pkgln' });
      expect(bun.code, bun.out).toBe(0);
      expect(JSON.parse(readFileSync(join(app, 'bun.out/stacks/pkg/cdk.tf.json'), 'utf8'))['//'].metadata.version).toBe(version.version);
      await deploy(app, 'pkgln', version.version, ['--preserve-symlinks']);
    },
    240_000,
  );
});
