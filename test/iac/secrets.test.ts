import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setLogSink } from '../../src/core/log.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, providerInstalled, type TfResult, terraform, workdir } from './support.ts';

/**
 * Issue 8, "no secret in any log": apply, plan and destroy run with TF_LOG and TF_LOG_PROVIDER
 * at trace, which includes debug (Terraform core and the provider's own stderr), with a write-only
 * `api_key_wo`, a sensitive `api_key` and the provider `token` set in configuration. No secret —
 * neither upstream key, the token, nor the inference key the provider creates — appears in
 * terraform's stdout/stderr or in the gateway's log lines; the write-only key is not in state.
 */

const WO_SECRET = 'sk-wo-debug-log-5d1e8b';
const SENSITIVE_SECRET = 'sk-sensitive-debug-log-c07a';

const config = `terraform {
  required_providers {
    gateway = { source = "gateway.local/gateway/gateway" }
  }
}
variable "endpoint" { type = string }
variable "token" {
  type      = string
  sensitive = true
}
variable "wo_key" {
  type      = string
  sensitive = true
  ephemeral = true
}
provider "gateway" {
  endpoint = var.endpoint
  token    = var.token
}
resource "gateway_customer" "c" {
  customer_id = "logacme"
  name        = "Log Acme"
}
resource "gateway_project" "p" {
  customer_id = gateway_customer.c.customer_id
  project_id  = "web"
}
resource "gateway_provider_connection" "wo" {
  customer_id        = gateway_project.p.customer_id
  project_id         = gateway_project.p.project_id
  name               = "primary"
  provider_name      = "echo"
  api_key_wo         = var.wo_key
  api_key_wo_version = 1
}
resource "gateway_provider_connection" "sensitive" {
  customer_id   = gateway_project.p.customer_id
  project_id    = gateway_project.p.project_id
  name          = "backup"
  provider_name = "echo"
  api_key       = "${SENSITIVE_SECRET}"
}
resource "gateway_api_key" "k" {
  customer_id = gateway_project.p.customer_id
  project_id  = gateway_project.p.project_id
  name        = "logs"
  scopes      = ["inference"]
}
`;

describe.skipIf(!HAVE_TERRAFORM)('terraform provider: no secret in any log', () => {
  let g: TestGateway;
  let dir: string;
  let env: Record<string, string>;
  const gatewayLines: string[] = [];
  const runs: { name: string; r: TfResult }[] = [];
  const tf = async (name: string, args: string[]) => {
    const r = await terraform(dir, [...args, '-input=false', '-no-color'], env);
    runs.push({ name, r });
    return r;
  };

  beforeAll(async () => {
    setLogSink((line) => gatewayLines.push(line));
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    // No GATEWAY_TOKEN: the token reaches the provider only through its (sensitive) configuration.
    // Secrets go in as TF_VAR_* (or a .tfvars file), never `-var`: TF_LOG prints the command line.
    env = {
      TF_CLI_CONFIG_FILE: built.rc,
      // trace: everything debug prints and more (gRPC-level detail of core and provider).
      TF_LOG: 'trace',
      TF_LOG_PROVIDER: 'trace',
      TF_VAR_endpoint: g.adminUrl,
      TF_VAR_token: ADMIN_TOKEN,
      TF_VAR_wo_key: WO_SECRET,
    };
    dir = workdir({ 'main.tf': config });
    const init = await terraform(dir, ['init', '-input=false', '-no-color'], env);
    expect(init.code, init.out).toBe(0);
  }, 120_000);
  afterAll(async () => {
    setLogSink(undefined);
    await g?.stop();
  });

  test('apply, plan and destroy at trace/debug log level print no secret; the write-only key is not in state', async () => {
    const apply = await tf('apply', ['apply', '-auto-approve']);
    expect(apply.code, apply.out).toBe(0);
    expect(apply.out).toContain('Apply complete! Resources: 5 added');
    // The logs are real debug logs, provider included: otherwise the assertions below prove nothing.
    expect(apply.out).toContain('[DEBUG]');
    expect(apply.out).toContain('[DEBUG] provider: plugin started');
    const conn = (await g.must(admin('GetProviderConnection'), { customerId: 'logacme', projectId: 'web', name: 'primary' }))
      .connection as { hasApiKey: boolean };
    expect(conn.hasApiKey).toBe(true);

    const state = readFileSync(join(dir, 'terraform.tfstate'), 'utf8');
    expect(state).not.toContain(WO_SECRET);
    expect(state).not.toContain(ADMIN_TOKEN);
    const inferenceKey = (
      JSON.parse(state) as { resources: { type: string; instances: { attributes: { key?: string } }[] }[] }
    ).resources.find((r) => r.type === 'gateway_api_key')?.instances[0]?.attributes.key;
    expect(inferenceKey).toMatch(/^sk-/);

    const plan = await tf('plan', ['plan', '-detailed-exitcode']);
    expect(plan.code, plan.out).toBe(0);
    const destroy = await tf('destroy', ['destroy', '-auto-approve']);
    expect(destroy.code, destroy.out).toBe(0);

    const secrets = { WO_SECRET, SENSITIVE_SECRET, ADMIN_TOKEN, inferenceKey: inferenceKey ?? '' };
    for (const { name, r } of runs) {
      for (const [what, value] of Object.entries(secrets)) {
        expect(r.out.includes(value), `${what} in terraform ${name} output`).toBe(false);
      }
    }
    // Whatever the gateway logged meanwhile (management calls log little; any line counts).
    const gatewayLog = gatewayLines.join('\n');
    for (const [what, value] of Object.entries(secrets)) expect(gatewayLog.includes(value), `${what} in the gateway's log`).toBe(false);
  }, 90_000);
});
