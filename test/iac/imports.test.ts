import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESOURCES } from '../../iac/provider/registry.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * Issue 30, defect 3: `terraform import` of every resource of a stack, then plan. Nothing is
 * replaced; what the API returns (an API key's expires_in_days, a telemetry config's auth_value)
 * is read, so it plans nothing; what it never returns (secrets, their *_wo_version, an API key's
 * user_key_address, a service account's arguments) is adopted from the configuration by one apply
 * that calls no API (docs: iac/docs, "Import"); the plan after it is empty. A write-only version
 * that is the only thing to adopt plans nothing at all (issue 46, item 3).
 */

const STACK = `${PROVIDER_BLOCK}
variable "upstream_key" {
  type      = string
  sensitive = true
  ephemeral = true
  default   = "sk-upstream-imp-1"
}
resource "gateway_customer" "c" {
  customer_id = "tfimp"
}
resource "gateway_provider_connection" "wo" {
  customer_id        = gateway_customer.c.customer_id
  project_id         = "default"
  name               = "wo"
  provider_name      = "echo"
  api_key_wo         = var.upstream_key
  api_key_wo_version = 1
}
resource "gateway_provider_connection" "plain" {
  customer_id   = gateway_customer.c.customer_id
  project_id    = "default"
  name          = "plain"
  provider_name = "echo"
  api_key       = "sk-plain-imp-2"
}
resource "gateway_api_key" "k" {
  customer_id      = gateway_customer.c.customer_id
  project_id       = "default"
  name             = "ci"
  user_key_address = "ci@example.com"
  expires_in_days  = 30
}
resource "gateway_telemetry_config" "plain" {
  user_id        = "ops"
  telemetry_type = "logs"
  sink_url       = "https://otel.example.com"
  protocol       = "http/json"
  auth_type      = "bearer"
  auth_value     = "sink-imp-3"
}
resource "gateway_telemetry_config" "wo" {
  user_id               = "ops"
  telemetry_type        = "traces"
  sink_url              = "https://otel.example.com"
  protocol              = "http/json"
  auth_type             = "bearer"
  auth_value_wo         = var.upstream_key
  auth_value_wo_version = 1
}
resource "gateway_byok_key" "b" {
  customer_id       = gateway_customer.c.customer_id
  project_id        = "default"
  provider_name     = "PROVIDER_OPENAI"
  name              = "team"
  secret_wo         = var.upstream_key
  secret_wo_version = 1
}
resource "gateway_workspace" "w" {
  customer_id  = gateway_customer.c.customer_id
  workspace_id = "edge-imp"
}
resource "gateway_service_account" "sa" {
  customer_id           = gateway_customer.c.customer_id
  workspace_id          = gateway_workspace.w.workspace_id
  validity_days         = 30
  router_key_wo         = var.upstream_key
  router_key_wo_version = 1
}
resource "gateway_mcp_server" "mcp" {
  server_id             = "imp-mcp"
  url                   = "https://mcp.example.com/mcp"
  auth_type             = "bearer"
  auth_value_wo         = var.upstream_key
  auth_value_wo_version = 1
}
resource "gateway_budget" "m" {
  customer_id = gateway_customer.c.customer_id
  project_id  = "default"
  name        = "monthly"
  limit_usd   = "25"
  period      = "month"
}
`;

/** What the plan after import may change, by address: exactly the documented adoptions. */
const ADOPTED: Record<string, string[]> = {
  'gateway_provider_connection.plain': ['api_key'],
  'gateway_api_key.k': ['user_key_address'],
  'gateway_telemetry_config.wo': ['auth_value', 'auth_value_wo_version'],
  'gateway_service_account.sa': ['router_key_wo_version', 'validity_days'],
};
/**
 * Issue 46, item 3: a write-only version that is all there is to adopt plans nothing (the plan is
 * empty for the resource), with a warning naming the version taken from the configuration.
 */
const ADOPTED_SILENTLY: Record<string, string> = {
  'gateway_provider_connection.wo': 'api_key_wo_version',
  'gateway_byok_key.b': 'secret_wo_version',
  'gateway_mcp_server.mcp': 'auth_value_wo_version',
};

interface StateFile {
  resources: { type: string; name: string; instances: { attributes: Record<string, unknown> }[] }[];
}
interface PlanJson {
  resource_changes: {
    address: string;
    change: { actions: string[]; before: Record<string, unknown> | null; after: Record<string, unknown> | null };
  }[];
}

describe.skipIf(!HAVE_TERRAFORM)('terraform import of every resource: no replacement, documented adoptions, then an empty plan', () => {
  let g: TestGateway;
  let env: Record<string, string>;

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: g.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
  }, 180_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('import, plan (adoptions only), apply without API calls, empty plan', async () => {
    const src = workdir({ 'main.tf': STACK });
    expect((await terraform(src, ['init', '-input=false', '-no-color'], env)).code).toBe(0);
    const created = await terraform(src, ['apply', '-auto-approve', '-input=false', '-no-color'], env);
    expect(created.code, created.out).toBe(0);
    const state = JSON.parse(readFileSync(join(src, 'terraform.tfstate'), 'utf8')) as StateFile;

    const dst = workdir({ 'main.tf': STACK });
    expect((await terraform(dst, ['init', '-input=false', '-no-color'], env)).code).toBe(0);
    for (const r of state.resources) {
      const attrs = r.instances[0]?.attributes ?? {};
      const def = RESOURCES.find((d) => d.type === r.type);
      const id = (def?.importKeys ?? ['id']).map((k) => String(attrs[k] ?? '')).join('/');
      const imp = await terraform(dst, ['import', '-input=false', '-no-color', `${r.type}.${r.name}`, id], env);
      expect(imp.code, `${r.type}.${r.name} ${id}: ${imp.out}`).toBe(0);
    }

    const connBefore = (await g.must(admin('GetProviderConnection'), { customerId: 'tfimp', projectId: 'default', name: 'plain' }))
      .connection as { updatedAt: string };
    const planned = await terraform(dst, ['plan', '-input=false', '-no-color', '-out=import.plan'], env);
    expect(planned.code, planned.out).toBe(0);
    expect(planned.out).not.toContain('must be replaced');
    expect(planned.out).toContain(`0 to add, ${Object.keys(ADOPTED).length} to change, 0 to destroy`);
    const shown = await terraform(dst, ['show', '-json', 'import.plan'], env);
    const json = JSON.parse(shown.out.slice(shown.out.indexOf('{'), shown.out.lastIndexOf('}') + 1)) as PlanJson;
    const changes: Record<string, string[]> = {};
    for (const rc of json.resource_changes) {
      if (rc.change.actions.join() === 'no-op') continue;
      const before = rc.change.before ?? {};
      const after = rc.change.after ?? {};
      changes[rc.address] = Object.keys(after)
        .filter((k) => JSON.stringify(before[k] ?? null) !== JSON.stringify(after[k] ?? null))
        .sort();
      expect(rc.change.actions, rc.address).toEqual(['update']);
    }
    expect(changes).toEqual(ADOPTED);
    for (const [address, attr] of Object.entries(ADOPTED_SILENTLY)) {
      expect(json.resource_changes.find((rc) => rc.address === address)?.change.actions, address).toEqual(['no-op']);
      expect(planned.out).toContain(`Warning: ${attr} adopted from the configuration after the import`);
      expect(planned.out).toContain(`${address.split('.')[0]}.${address.split('.')[1]}`);
    }

    const applied = await terraform(dst, ['apply', '-auto-approve', '-input=false', '-no-color', 'import.plan'], env);
    expect(applied.code, applied.out).toBe(0);
    // The adoptions called no API: the connection is untouched, the key is live and the same.
    const connAfter = (await g.must(admin('GetProviderConnection'), { customerId: 'tfimp', projectId: 'default', name: 'plain' }))
      .connection as { updatedAt: string };
    expect(connAfter.updatedAt).toBe(connBefore.updatedAt);
    const keys = (await g.must('/apikey.v1.ApiKeyService/ListApiKeys', { customerId: 'tfimp', includeRevoked: true })).apiKeys as {
      revokedAt?: string;
    }[];
    expect(keys).toHaveLength(1);
    expect(keys[0]?.revokedAt).toBeUndefined();
    const again = await terraform(dst, ['plan', '-detailed-exitcode', '-input=false', '-no-color'], env);
    expect(again.code, again.out).toBe(0);
    expect(again.out).toContain('No changes.');
    // The write-only secret never reached the imported state.
    expect(readFileSync(join(dst, 'terraform.tfstate'), 'utf8')).not.toContain('sk-upstream-imp-1');
  }, 400_000);
});
