import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN, admin, apikeyOp, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * The provider under the real terraform binary against a real gateway: create, empty second plan,
 * in-place change, drift (out-of-band change and delete), import round-trip, validation at plan,
 * secrets kept out of state with the write-only form, destroy.
 */

const WO_SECRET = 'sk-write-only-never-in-state-7f3a';
const STATE_SECRET = 'sk-in-state-sensitive-91c2';

const config = (secrets: boolean) => `${PROVIDER_BLOCK}
variable "weight" {
  type    = number
  default = 1
}
variable "customer_name" {
  type    = string
  default = "Acme"
}
resource "gateway_customer" "acme" {
  customer_id = "tfacme"
  name        = var.customer_name
  labels      = { team = "platform" }
}
resource "gateway_project" "web" {
  customer_id = gateway_customer.acme.customer_id
  project_id  = "web"
  description = "web shop"
}
resource "gateway_model" "m" {
  model                   = "tf-test-model"
  provider_name           = "echo"
  capabilities            = ["chat", "tools"]
  context_window          = 128000
  input_price_per_million = 1.25
}
resource "gateway_provider_connection" "primary" {
  customer_id        = gateway_project.web.customer_id
  project_id         = gateway_project.web.project_id
  name               = "primary"
  provider_name      = "echo"
  options            = jsonencode({ region = "eu" })
  ${secrets ? `api_key_wo = "${WO_SECRET}"\n  api_key_wo_version = 1` : ''}
}
resource "gateway_provider_connection" "backup" {
  customer_id   = gateway_project.web.customer_id
  project_id    = gateway_project.web.project_id
  name          = "backup"
  provider_name = "echo"
  ${secrets ? `api_key = "${STATE_SECRET}"` : ''}
}
resource "gateway_route" "r" {
  customer_id = gateway_project.web.customer_id
  project_id  = gateway_project.web.project_id
  model       = gateway_model.m.model
  target {
    connection = gateway_provider_connection.primary.name
    model      = "echo-1"
    weight     = var.weight
  }
  target {
    connection = gateway_provider_connection.backup.name
    model      = "echo-2"
    priority   = 1
  }
}
resource "gateway_api_key" "k" {
  customer_id = gateway_project.web.customer_id
  project_id  = gateway_project.web.project_id
  name        = "ci"
  scopes      = ["inference"]
}
resource "gateway_project_member" "u" {
  customer_id = gateway_project.web.customer_id
  project_id  = gateway_project.web.project_id
  user_id     = "user-1"
  role        = "member"
}
resource "gateway_project_model" "pm" {
  customer_id = gateway_project.web.customer_id
  project_id  = gateway_project.web.project_id
  model_id    = gateway_model.m.id
}
resource "gateway_project_provider" "pp" {
  customer_id   = gateway_project.web.customer_id
  project_id    = gateway_project.web.project_id
  provider_name = "openai"
}
resource "gateway_project_setting" "s" {
  customer_id   = gateway_project.web.customer_id
  project_id    = gateway_project.web.project_id
  setting_name  = "rate-limit"
  setting_value = jsonencode({ requestsPerMinute = 60 })
}
resource "gateway_dataplane" "d" {
  customer_id  = gateway_customer.acme.customer_id
  dataplane_id = "dp1"
}
resource "gateway_workspace" "w" {
  customer_id  = gateway_customer.acme.customer_id
  workspace_id = "ws1"
}
resource "gateway_project_gateway" "pg" {
  customer_id        = gateway_customer.acme.customer_id
  workspace_id       = gateway_workspace.w.workspace_id
  project_gateway_id = "pg1"
}
data "gateway_models" "all" {
  depends_on = [gateway_model.m]
}
output "models" {
  value = length(data.gateway_models.all.models)
}
`;

const RESOURCES = 14;

describe.skipIf(!HAVE_TERRAFORM)('terraform provider', () => {
  let g: TestGateway;
  let env: Record<string, string>;
  let dir: string;
  const tf = (args: string[], d = dir) => terraform(d, args, env);
  const state = () => readFileSync(join(dir, 'terraform.tfstate'), 'utf8');
  const ids = (): Record<string, string> => {
    const s = JSON.parse(state()) as {
      resources: { mode: string; type: string; name: string; instances: { attributes: { id: string } }[] }[];
    };
    return Object.fromEntries(
      s.resources.filter((r) => r.mode === 'managed').map((r) => [`${r.type}.${r.name}`, r.instances[0]?.attributes.id ?? '']),
    );
  };
  const logs: string[] = [];

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: g.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
    dir = workdir({ 'main.tf': config(true) });
    const init = await tf(['init', '-input=false', '-no-color']);
    expect(init.code, init.out).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('apply creates every resource; a second plan is empty', async () => {
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    logs.push(a.out);
    expect(a.code, a.out).toBe(0);
    expect(a.out).toContain(`Apply complete! Resources: ${RESOURCES} added, 0 changed, 0 destroyed.`);
    const route = (await g.must(admin('GetRoute'), { customerId: 'tfacme', projectId: 'web', model: 'tf-test-model' })).route as {
      targets: unknown[];
    };
    expect(route.targets).toEqual([
      { connection: 'primary', model: 'echo-1', priority: 0, weight: 1 },
      { connection: 'backup', model: 'echo-2', priority: 1, weight: 1 },
    ]);
    const conn = (await g.must(admin('GetProviderConnection'), { customerId: 'tfacme', projectId: 'web', name: 'primary' })).connection as {
      hasApiKey: boolean;
    };
    expect(conn.hasApiKey).toBe(true);
    const p = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
    logs.push(p.out);
    expect(p.code, p.out).toBe(0);
  }, 60_000);

  test('secrets: the write-only key never reaches state; api_key and the inference key are sensitive', async () => {
    const s = state();
    expect(s).not.toContain(WO_SECRET);
    expect(s).toContain(STATE_SECRET); // the non-write-only form is kept in state, as documented
    const show = await tf(['show', '-no-color']);
    expect(show.out).not.toContain(STATE_SECRET);
    expect(show.out).toContain('(sensitive value)');
    for (const out of logs) {
      expect(out).not.toContain(WO_SECRET);
      expect(out).not.toContain(STATE_SECRET);
    }
    const key = (JSON.parse(s) as { resources: { type: string; instances: { attributes: { key: string } }[] }[] }).resources.find(
      (r) => r.type === 'gateway_api_key',
    );
    expect(key?.instances[0]?.attributes.key).toMatch(/^sk-/);
  });

  test('a change applies in place', async () => {
    const before = ids();
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color', '-var', 'weight=5', '-var', 'customer_name=Acme Corp']);
    expect(a.code, a.out).toBe(0);
    expect(a.out).toContain('Resources: 0 added, 2 changed, 0 destroyed.');
    expect(ids()).toEqual(before);
    const route = (await g.must(admin('GetRoute'), { customerId: 'tfacme', projectId: 'web', model: 'tf-test-model' })).route as {
      targets: { weight: number }[];
    };
    expect(route.targets[0]?.weight).toBe(5);
    const p = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color', '-var', 'weight=5', '-var', 'customer_name=Acme Corp']);
    expect(p.code, p.out).toBe(0);
  }, 60_000);

  test('drift: an out-of-band change plans an update, an out-of-band delete plans a re-create', async () => {
    await g.must(admin('UpdateCustomer'), { customerId: 'tfacme', name: 'Changed outside' });
    await g.must(admin('DeleteRoute'), { customerId: 'tfacme', projectId: 'web', model: 'tf-test-model' });
    const vars = ['-var', 'weight=5', '-var', 'customer_name=Acme Corp'];
    const p = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color', ...vars]);
    expect(p.code, p.out).toBe(2);
    expect(p.out).toContain('# gateway_customer.acme will be updated in-place');
    expect(p.out).toContain('"Changed outside" -> "Acme Corp"');
    expect(p.out).toContain('# gateway_route.r will be created');
    expect(p.out).toContain('Plan: 1 to add, 1 to change, 0 to destroy.');
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color', ...vars]);
    expect(a.code, a.out).toBe(0);
    const again = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color', ...vars]);
    expect(again.code, again.out).toBe(0);
  }, 60_000);

  test('import of every resource by its natural id round-trips to an empty plan', async () => {
    const byAddr = ids();
    const imports: [string, string][] = [
      ['gateway_customer.acme', 'tfacme'],
      ['gateway_project.web', 'tfacme/web'],
      ['gateway_model.m', byAddr['gateway_model.m'] ?? ''],
      ['gateway_provider_connection.primary', 'tfacme/web/primary'],
      ['gateway_provider_connection.backup', 'tfacme/web/backup'],
      ['gateway_route.r', 'tfacme/web/tf-test-model'],
      ['gateway_api_key.k', byAddr['gateway_api_key.k'] ?? ''],
      ['gateway_project_member.u', 'tfacme/web/user-1'],
      ['gateway_project_model.pm', `tfacme/web/${byAddr['gateway_model.m']}`],
      ['gateway_project_provider.pp', 'tfacme/web/openai'],
      ['gateway_project_setting.s', 'tfacme/web/rate-limit'],
      ['gateway_dataplane.d', byAddr['gateway_dataplane.d'] ?? ''],
      ['gateway_workspace.w', byAddr['gateway_workspace.w'] ?? ''],
      ['gateway_project_gateway.pg', byAddr['gateway_project_gateway.pg'] ?? ''],
    ];
    expect(imports.length).toBe(RESOURCES);
    // Secrets cannot be imported (the API never returns them): the importing config leaves them out.
    const other = workdir({
      'main.tf': config(false),
      'imports.tf': imports.map(([to, id]) => `import {\n  to = ${to}\n  id = "${id}"\n}\n`).join(''),
    });
    expect((await tf(['init', '-input=false', '-no-color'], other)).code).toBe(0);
    const vars = ['-var', 'weight=5', '-var', 'customer_name=Acme Corp'];
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color', ...vars], other);
    expect(a.code, a.out).toBe(0);
    expect(a.out).toContain(`Apply complete! Resources: ${RESOURCES} imported, 0 added, 0 changed, 0 destroyed.`);
    writeFileSync(join(other, 'imports.tf'), '');
    const p = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color', ...vars], other);
    expect(p.code, p.out).toBe(0);
  }, 90_000);

  test('a schema violation fails at plan, naming the attribute, and nothing reaches the API', async () => {
    const bad = workdir({
      'main.tf': `${PROVIDER_BLOCK}
resource "gateway_customer" "bad" {
  customer_id = "Not A Slug"
}
resource "gateway_route" "r" {
  customer_id = "tfacme"
  model       = "m"
  target {
    connection = "c"
    model      = "x"
    weight     = 20000
  }
}
`,
    });
    expect((await tf(['init', '-input=false', '-no-color'], bad)).code).toBe(0);
    const p = await tf(['plan', '-input=false', '-no-color'], bad);
    expect(p.code).toBe(1);
    expect(p.out).toContain('Invalid value for customer_id');
    expect(p.out).toContain('Invalid value for target[0].weight');
    const v = await tf(['validate', '-no-color'], bad);
    expect(v.code).toBe(1);
    expect(v.out).toContain('Invalid value for customer_id');
    expect((await g.call(admin('GetCustomer'), { customerId: 'Not A Slug' })).status).toBe(404);
  }, 60_000);

  test('destroy removes everything (soft delete; the key is revoked)', async () => {
    const keyId = ids()['gateway_api_key.k'];
    const d = await tf(['destroy', '-auto-approve', '-input=false', '-no-color', '-var', 'weight=5', '-var', 'customer_name=Acme Corp']);
    expect(d.code, d.out).toBe(0);
    expect(d.out).toContain(`Destroy complete! Resources: ${RESOURCES} destroyed.`);
    expect((await g.call(admin('GetCustomer'), { customerId: 'tfacme' })).status).toBe(404);
    const models = (await g.must(admin('ListModels'), {})).models as { model: string }[];
    expect(models.some((m) => m.model === 'tf-test-model')).toBe(false);
    const keys = await g.call(apikeyOp('ListApiKeys'), { customerId: 'tfacme', projectId: 'web', includeRevoked: true });
    const active = ((keys.body.apiKeys ?? []) as { id: string; revokedAt?: string }[]).filter((k) => k.id === keyId && !k.revokedAt);
    expect(active).toEqual([]);
  }, 60_000);
});
