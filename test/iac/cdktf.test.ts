import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Glob } from 'bun';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, providerInstalled, TERRAFORM } from './support.ts';

/**
 * End to end: `cdktf deploy` of iac/examples/basic against a running gateway (the CLI runs on
 * Node: cdktf-cli's native addon has no build for Bun), an inference request with the key it
 * created, weights changed and redeployed served without a restart, `cdktf destroy`.
 */

const ROOT = resolve(import.meta.dir, '../..');
const UPSTREAM_SECRET = 'sk-upstream-cdktf-7c1e90';
const CDKTF = join(ROOT, 'node_modules/cdktf-cli/bundle/bin/cdktf');
const NODE = Bun.which('node');
const ready = HAVE_TERRAFORM && NODE !== null && existsSync(CDKTF);
if (HAVE_TERRAFORM && !ready) console.warn('test/iac/cdktf: skipped — needs node on PATH and cdktf-cli installed (bun install)');

describe.skipIf(!ready)('cdktf deploy of the example', () => {
  let g: TestGateway;
  let env: Record<string, string>;
  const tmp = mkdtempSync(join(tmpdir(), 'gw-cdktf-'));
  const example = join(ROOT, 'iac/examples/basic');

  const cdktf = async (args: string[], extra: Record<string, string> = {}) => {
    const p = Bun.spawn([NODE ?? 'node', CDKTF, ...args], { cwd: example, env: { ...env, ...extra }, stdout: 'pipe', stderr: 'pipe' });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, out: `${out}\n${err}` };
  };
  const chat = (key: string) =>
    fetch(`${g.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'cdk-echo', messages: [{ role: 'user', content: 'hello from cdktf' }] }),
    });

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    env = {
      PATH: `${resolve(TERRAFORM, '..')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: tmp,
      TF_CLI_CONFIG_FILE: built.rc,
      CHECKPOINT_DISABLE: '1',
      CDKTF_DISABLE_PLUGIN_CACHE_ENV: '1',
      DISABLE_VERSION_CHECK: '1',
      CI: '1',
      GATEWAY_ENDPOINT: g.adminUrl,
      GATEWAY_TOKEN: ADMIN_TOKEN,
      EXAMPLE_PROVIDER: 'echo',
      EXAMPLE_CUSTOMER: 'cdkacme',
      EXAMPLE_MODEL: 'cdk-echo',
      UPSTREAM_MODEL: 'echo-1',
      EXAMPLE_STATE: join(tmp, 'state.tfstate'),
      // The README's path: the upstream keys are sensitive variables fed to the write-only api_key_wo.
      TF_VAR_upstream_api_key: UPSTREAM_SECRET,
      TF_VAR_upstream_backup_api_key: `${UPSTREAM_SECRET}-backup`,
    };
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('deploy, serve, redeploy new weights without a restart, destroy', async () => {
    const outputs = join(tmp, 'outputs.json');
    const common = [
      '--auto-approve',
      '--output',
      join(tmp, 'cdktf.out'),
      '--outputs-file',
      outputs,
      '--outputs-file-include-sensitive-outputs',
    ];
    // First deploy: no lock file yet, and `terraform providers lock` would ask a registry.
    const first = await cdktf(['deploy', ...common, '--skip-provider-lock'], { PRIMARY_WEIGHT: '1' });
    expect(first.code, first.out).toBe(0);
    // Issue 30, defect 4: the upstream keys are in neither the synthesized JSON nor the state.
    const synthesized = [...new Glob('**/*').scanSync({ cwd: join(tmp, 'cdktf.out'), onlyFiles: true })];
    expect(synthesized.some((f) => f.endsWith('cdk.tf.json'))).toBe(true);
    for (const f of synthesized) expect(readFileSync(join(tmp, 'cdktf.out', f), 'utf8'), f).not.toContain(UPSTREAM_SECRET);
    expect(readFileSync(join(tmp, 'cdktf.out/stacks/gateway-example/cdk.tf.json'), 'utf8')).toContain('${var.upstream_api_key}');
    expect(readFileSync(join(tmp, 'state.tfstate'), 'utf8')).not.toContain(UPSTREAM_SECRET);
    const key = (JSON.parse(readFileSync(outputs, 'utf8')) as Record<string, { api_key: string }>)['gateway-example']?.api_key ?? '';
    expect(key).toMatch(/^sk-/);
    // The provider's writes return at commit: wait until the embedded data plane serves them.
    await g.settle();
    const res = await chat(key);
    expect(res.status, await res.clone().text()).toBe(200);

    const second = await cdktf(['deploy', ...common], { PRIMARY_WEIGHT: '3' });
    expect(second.code, second.out).toBe(0);
    const route = (await g.must(admin('GetRoute'), { customerId: 'cdkacme', projectId: 'web', model: 'cdk-echo' })).route as {
      targets: { connection: string; model: string; weight: number; priority: number }[];
    };
    expect(route.targets).toEqual([
      { connection: 'primary', model: 'echo-1', priority: 0, weight: 3 },
      { connection: 'backup', model: 'echo-1', priority: 1, weight: 1 },
    ]);
    expect((await chat(key)).status).toBe(200);

    const down = await cdktf(['destroy', '--auto-approve', '--output', join(tmp, 'cdktf.out')], { PRIMARY_WEIGHT: '3' });
    expect(down.code, down.out).toBe(0);
    expect((await g.call(admin('GetCustomer'), { customerId: 'cdkacme' })).status).toBe(404);
  }, 150_000);
});
