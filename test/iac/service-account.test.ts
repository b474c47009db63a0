import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, TerraformOutput, TerraformStack } from 'cdktf';
import { Customer, GatewayProvider, ServiceAccount, secretVariable, Workspace } from '../../iac/index.ts';
import { readServiceAccountFile } from '../../src/data-plane/remote/service-account-file.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * gateway_service_account with the real terraform binary: apply creates the account (private key
 * and credentials file content in state, sensitive), a second plan is empty, a changed argument
 * replaces it (the old one revoked), import by UUID, destroy revokes. And the L1 construct's synthesis.
 */

type Body = Record<string, unknown>;

const config = (validityDays: number) => `${PROVIDER_BLOCK}
resource "gateway_customer" "c" {
  customer_id = "tfsa"
}
resource "gateway_workspace" "w" {
  customer_id  = gateway_customer.c.customer_id
  workspace_id = "edge-tf"
}
resource "gateway_service_account" "sa" {
  customer_id   = gateway_customer.c.customer_id
  workspace_id  = gateway_workspace.w.workspace_id
  validity_days = ${validityDays}
  router_key    = "router-secret-1234"
}
output "credentials" {
  value     = gateway_service_account.sa.credentials_json
  sensitive = true
}
output "private_key" {
  value     = gateway_service_account.sa.private_key
  sensitive = true
}
output "id" {
  value = gateway_service_account.sa.id
}
`;

describe.skipIf(!HAVE_TERRAFORM)('terraform: gateway_service_account', () => {
  let g: TestGateway;
  let env: Record<string, string>;
  let dir: string;
  const tf = (args: string[], d = dir) => terraform(d, args, env);
  const status = async (id: string) => ((await g.must(admin('GetServiceAccount'), { id })).serviceAccount as Body).status;

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: g.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
    dir = workdir({ 'main.tf': config(30) });
    const init = await tf(['init', '-input=false', '-no-color']);
    expect(init.code, init.out).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('apply, no diff, replacement on change, import, destroy revokes', async () => {
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(a.code, a.out).toBe(0);
    expect(a.out).not.toContain('BEGIN PRIVATE KEY');
    const id = (await tf(['output', '-raw', 'id'])).out.trim();
    expect(await status(id)).toBe('SERVICE_ACCOUNT_STATUS_ACTIVE');
    // The credentials output is the file a data plane starts with (its checksum verifies).
    const creds = (await tf(['output', '-raw', 'credentials'])).out.trim();
    const file = join(dir, 'sa.json');
    writeFileSync(file, creds, { mode: 0o600 });
    const sa = readServiceAccountFile(file);
    expect(sa.workspaceId).toBe('edge-tf');
    expect(sa.privateKey).toContain('BEGIN PRIVATE KEY');
    expect((await tf(['output', '-raw', 'private_key'])).out.trim()).toBe(sa.privateKey.trim());
    const state = JSON.parse(readFileSync(join(dir, 'terraform.tfstate'), 'utf8')) as {
      resources: { type: string; instances: { attributes: Body; sensitive_attributes: unknown[] }[] }[];
    };
    const inst = state.resources.find((r) => r.type === 'gateway_service_account')?.instances[0];
    expect(inst?.attributes.status).toBe('SERVICE_ACCOUNT_STATUS_ACTIVE');
    expect(JSON.stringify(inst?.sensitive_attributes)).toContain('private_key');

    expect((await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color'])).code).toBe(0);

    // No update operation: a changed argument replaces the account; the old one is revoked.
    writeFileSync(join(dir, 'main.tf'), config(60));
    const plan = await tf(['plan', '-input=false', '-no-color']);
    expect(plan.out).toContain('gateway_service_account.sa must be replaced');
    const r = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('1 added, 0 changed, 1 destroyed');
    const id2 = (await tf(['output', '-raw', 'id'])).out.trim();
    expect(id2).not.toBe(id);
    expect(await status(id)).toBe('SERVICE_ACCOUNT_STATUS_REVOKED');
    expect((await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color'])).code).toBe(0);

    // Revoked out of band: reads as gone, the next plan creates a new one.
    await g.must(admin('RevokeServiceAccount'), { id: id2, reason: 'test' });
    const drift = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
    expect(drift.code, drift.out).toBe(2);
    expect(drift.out).toContain('# gateway_service_account.sa will be created');
    expect((await tf(['apply', '-auto-approve', '-input=false', '-no-color'])).code).toBe(0);
    const id3 = (await tf(['output', '-raw', 'id'])).out.trim();

    // Import by UUID: GetServiceAccount does not return the create arguments nor the private key, so
    // an imported account is described by customer_id and workspace_id alone (any other argument
    // would plan a replacement, as documented).
    const wsId = String(((await g.must(admin('ListWorkspaces'), { customerId: 'tfsa' })).workspaces as Body[])[0]?.id ?? '');
    const other = workdir({
      'main.tf': config(60)
        .replace(/\n {2}validity_days = 60\n {2}router_key {4}= "router-secret-1234"/, '')
        .replace(/output "(credentials|private_key)" \{[^}]*\}\n/g, ''),
      'imports.tf': [`gateway_customer.c:tfsa`, `gateway_workspace.w:${wsId}`, `gateway_service_account.sa:${id3}`]
        .map((x) => x.split(':'))
        .map(([to, i]) => `import {\n  to = ${to}\n  id = "${i}"\n}\n`)
        .join(''),
    });
    expect((await tf(['init', '-input=false', '-no-color'], other)).code).toBe(0);
    const imp = await tf(['plan', '-input=false', '-no-color'], other);
    expect(imp.code, imp.out).toBe(0);
    expect(imp.out).toContain('gateway_service_account.sa will be imported');
    expect(imp.out).toContain('Plan: 3 to import, 0 to add, 0 to change, 0 to destroy.');

    // Validation at plan time: validity_days is 1..3650.
    const bad = workdir({ 'main.tf': config(5000) });
    expect((await tf(['init', '-input=false', '-no-color'], bad)).code).toBe(0);
    const v = await tf(['plan', '-input=false', '-no-color'], bad);
    expect(v.code).not.toBe(0);
    expect(v.out).toContain('validity_days');

    const destroy = await tf(['destroy', '-auto-approve', '-input=false', '-no-color']);
    expect(destroy.code, destroy.out).toBe(0);
    expect(await status(id3)).toBe('SERVICE_ACCOUNT_STATUS_REVOKED');
  }, 240_000);
});

describe('cdktf: ServiceAccount (L1)', () => {
  test('synthesizes gateway_service_account with snake_case arguments and sensitive outputs by reference', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'gw-cdktf-sa-'));
    const app = new App({ outdir });
    const stack = new TerraformStack(app, 'sa');
    new GatewayProvider(stack, 'gateway', {});
    const c = new Customer(stack, 'c', { customerId: 'acme' });
    new Workspace(stack, 'w', { customerId: c.customerId, workspaceId: 'edge-eu' });
    const sa = new ServiceAccount(stack, 'sa', {
      customerId: c.customerId,
      workspaceId: 'edge-eu',
      validityDays: 90,
      scopes: ['dataplane'],
      // A sensitive map: each value a reference (a literal is refused, test/iac/secret-guard.test.ts).
      telemetryHeaders: { 'X-Team': secretVariable(stack, 'team_header') },
    });
    new TerraformOutput(stack, 'creds', { value: sa.credentialsJson, sensitive: true });
    app.synth();
    const json = JSON.parse(readFileSync(join(outdir, 'stacks', 'sa', 'cdk.tf.json'), 'utf8')) as {
      resource: Record<string, Record<string, Body>>;
      output: Record<string, Body>;
    };
    const res = json.resource.gateway_service_account?.sa;
    expect(res).toMatchObject({
      customer_id: '${gateway_customer.c.customer_id}',
      workspace_id: 'edge-eu',
      validity_days: 90,
      scopes: ['dataplane'],
      telemetry_headers: { 'X-Team': '${var.team_header}' },
    });
    expect(json.output.creds).toMatchObject({ value: '${gateway_service_account.sa.credentials_json}', sensitive: true });
  });
});
