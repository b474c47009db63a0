import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { CACHE_DIR, CDKTN_VERSION, type CdktnToolchain, cdktnUnavailable, installCdktn } from './cdktn-support.ts';
import { HAVE_TERRAFORM, providerInstalled, terraform } from './support.ts';

/**
 * Contract §6: the constructs, built on cdktf 0.21, also synthesize unchanged under CDK Terrain
 * (`cdktn`). A copy of iac/index.ts, iac/src/ and iac/examples/basic is synthesized by
 * `cdktn synth` (cdktn-cli on Node >= 22) with `cdktf` resolving to the `cdktn` package; the
 * Terraform JSON must equal what cdktf synthesizes from the repository's own files (apart from the
 * CDK version in the metadata), and terraform must validate and plan it against the local mirror.
 */

const ROOT = resolve(import.meta.dir, '../..');
const EXAMPLE = join(ROOT, 'iac/examples/basic');
const STACK = 'gateway-example';

const unavailable = HAVE_TERRAFORM ? await cdktnUnavailable() : 'no terraform binary';
if (unavailable) console.warn(`test/iac/cdktn: skipped — ${unavailable}`);

type Json = Record<string, unknown>;
const synthesized = (outdir: string): Json => JSON.parse(readFileSync(join(outdir, 'stacks', STACK, 'cdk.tf.json'), 'utf8')) as Json;
/** The synthesized stack without the CDK's own version (0.21.0 vs 0.24.0). */
const withoutCdkVersion = (doc: Json): Json => {
  const meta = (doc['//'] as { metadata?: Json } | undefined)?.metadata;
  expect(typeof meta?.version).toBe('string');
  const { version: _version, ...rest } = meta ?? {};
  return { ...doc, '//': { ...(doc['//'] as Json), metadata: rest } };
};

describe.skipIf(unavailable !== undefined)(`CDK Terrain (cdktn ${CDKTN_VERSION})`, () => {
  let tc: CdktnToolchain;
  let g: TestGateway;
  let rc: string;
  const tmp = mkdtempSync(join(tmpdir(), 'gw-cdktn-'));
  const appEnv = {
    EXAMPLE_PROVIDER: 'echo',
    EXAMPLE_CUSTOMER: 'tnacme',
    EXAMPLE_MODEL: 'tn-echo',
    UPSTREAM_MODEL: 'echo-1',
    PRIMARY_WEIGHT: '2',
    EXAMPLE_STATE: join(tmp, 'state.tfstate'),
  };
  const run = async (cmd: string[], cwd: string, env: Record<string, string>) => {
    const p = Bun.spawn(cmd, { cwd, env, stdout: 'pipe', stderr: 'pipe' });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, out: `${out}\n${err}` };
  };

  beforeAll(async () => {
    const [toolchain, built, gw] = await Promise.all([installCdktn(), providerInstalled(), startTestGateway()]);
    tc = toolchain;
    rc = built.rc;
    g = gw;
    console.log(`cdktn ${CDKTN_VERSION} toolchain in ${CACHE_DIR} (install ${tc.installMs} ms; node ${tc.node})`);
  }, 150_000);
  afterAll(async () => {
    await g?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('the example synthesizes unchanged under cdktn and equals the cdktf synthesis; terraform validates and plans it', async () => {
    // cdktf 0.21: what `cdktf synth` runs — the app itself (cdktf.json's "app"), under Bun.
    const cdktfOut = join(tmp, 'cdktf.out');
    const base = await run(['bun', 'run', 'main.ts'], EXAMPLE, {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: tmp,
      CDKTF_OUTDIR: cdktfOut,
      ...appEnv,
    });
    expect(base.code, base.out).toBe(0);

    // cdktn: byte-identical copies of the constructs and the example next to a node_modules where
    // `cdktf` is the cdktn package (and constructs is the version cdktn's peer range asks for).
    const app = join(tmp, 'app');
    for (const part of ['iac/index.ts', 'iac/src', 'iac/examples/basic/main.ts', 'iac/examples/basic/cdktf.json', 'package.json']) {
      cpSync(join(ROOT, part), join(app, part), { recursive: true });
    }
    symlinkSync(tc.modules, join(app, 'node_modules'), 'dir');
    mkdirSync(join(tmp, 'home'));
    const cdktnOut = join(tmp, 'cdktn.out');
    const started = performance.now();
    const synth = await run([tc.node, tc.cli, 'synth', '--output', cdktnOut], join(app, 'iac/examples/basic'), {
      PATH: `${resolve(tc.node, '..')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: join(tmp, 'home'),
      CI: '1',
      CHECKPOINT_DISABLE: '1',
      DISABLE_VERSION_CHECK: '1',
      TF_CLI_CONFIG_FILE: rc,
      ...appEnv,
    });
    expect(synth.code, synth.out).toBe(0);
    expect(synth.out).toContain(`Generated Terraform code for the stacks: ${STACK}`);
    console.log(`cdktn synth: ${Math.round(performance.now() - started)} ms`);

    const fromCdktf = synthesized(cdktfOut);
    const fromCdktn = synthesized(cdktnOut);
    expect((fromCdktn['//'] as { metadata: Json }).metadata.version).toBe(CDKTN_VERSION);
    expect(withoutCdkVersion(fromCdktn)).toEqual(withoutCdkVersion(fromCdktf));
    const resources = Object.values(fromCdktn.resource as Record<string, Json>).flatMap((byName) => Object.keys(byName)).length;
    expect(resources).toBeGreaterThanOrEqual(8);

    const stackDir = join(cdktnOut, 'stacks', STACK);
    // The example's upstream keys are sensitive variables (never in the synthesized JSON).
    const env = {
      TF_CLI_CONFIG_FILE: rc,
      GATEWAY_ENDPOINT: g.adminUrl,
      GATEWAY_TOKEN: ADMIN_TOKEN,
      TF_VAR_upstream_api_key: 'sk-tn-1',
      TF_VAR_upstream_backup_api_key: 'sk-tn-2',
    };
    const init = await terraform(stackDir, ['init', '-input=false', '-no-color'], env);
    expect(init.code, init.out).toBe(0);
    const validate = await terraform(stackDir, ['validate', '-no-color'], env);
    expect(validate.code, validate.out).toBe(0);
    expect(validate.out).toContain('The configuration is valid.');
    const plan = await terraform(stackDir, ['plan', '-detailed-exitcode', '-input=false', '-no-color'], env);
    expect(plan.code, plan.out).toBe(2);
    expect(plan.out).toContain(`Plan: ${resources} to add, 0 to change, 0 to destroy.`);
    expect(plan.out).toContain('# gateway_route.');
  }, 90_000);
});
