import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * Issue 30, defects 1-2: everything the API would refuse is refused at validate/plan, on the
 * attribute, in words that say what is allowed — before any resource is created. The provider
 * runs the API's own checks (schema bounds, patterns, enums and the cross-field rules).
 */

const CUSTOMER = `resource "gateway_customer" "c" {
  customer_id = "tfchk"
}
`;

/** Each case: a resource block (referring to the customer) and what its diagnostic must say. */
const CASES: { name: string; hcl: string; attr: string; says: string[] }[] = [
  {
    name: 'a guardrail pattern that is not a regular expression',
    hcl: `resource "gateway_guardrail" "g" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  name = "re"\n  stage = "input"\n  kind = "regex"\n  pattern = "([a-"\n  action = "block"\n}`,
    attr: 'pattern',
    says: ['not a valid regular expression'],
  },
  {
    name: 'a guardrail pattern RE2 cannot match in linear time (issue 38: lookahead)',
    hcl: `resource "gateway_guardrail" "lin" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  name = "lin"\n  stage = "input"\n  kind = "regex"\n  pattern = "(?=.*secret)token"\n  action = "block"\n}`,
    attr: 'pattern',
    says: ['lookahead', 'RE2 syntax', 'linear time'],
  },
  {
    name: 'a Bedrock guardrail without its guardrailIdentifier option (issue 45)',
    hcl: `resource "gateway_guardrail" "bg" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  name = "bg"\n  stage = "input"\n  kind = "bedrock_guardrail"\n  action = "block"\n  provider_auth_value_wo = "k"\n  provider_options = jsonencode({ region = "us-east-1", guardrailVersion = "1" })\n}`,
    attr: 'provider_options',
    says: ["provider_options: 'guardrailIdentifier' required for this kind"],
  },
  {
    name: 'a Lakera guardrail without a credential (issue 45)',
    hcl: `resource "gateway_guardrail" "lk" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  name = "lk"\n  stage = "input"\n  kind = "lakera"\n  action = "block"\n  provider_url = "https://api.lakera.ai"\n}`,
    attr: 'provider_auth_value',
    says: ["provider_auth_value: kind 'lakera' needs a credential"],
  },
  {
    name: 'an unknown provider_name',
    hcl: `resource "gateway_provider_connection" "p" {\n  customer_id = gateway_customer.c.customer_id\n  name = "up"\n  provider_name = "openaii"\n}`,
    attr: 'provider_name',
    says: ["provider_name: unknown provider 'openaii'; one of: ", 'anthropic', 'openai'],
  },
  {
    name: 'a negative limit_usd',
    hcl: `resource "gateway_budget" "b" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  name = "m"\n  limit_usd = "-5"\n  period = "month"\n}`,
    attr: 'limit_usd',
    says: ['limit_usd: a decimal string', 'at most 9000000'],
  },
  {
    name: 'a rate-limit value that does not parse',
    hcl: `resource "gateway_project_setting" "s" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  setting_name = "rate-limit"\n  setting_value = jsonencode({ requestsPerMinute = "many" })\n}`,
    attr: 'setting_value',
    says: ["not a valid 'rate-limit' value", 'requestsPerMinute'],
  },
  {
    name: 'an unknown service-account scope',
    hcl: `resource "gateway_service_account" "sa" {\n  customer_id = gateway_customer.c.customer_id\n  workspace_id = "edge"\n  scopes = ["everything"]\n}`,
    attr: 'scopes',
    says: ["unknown scope 'everything'; one of: dataplane, read, admin"],
  },
  {
    name: 'a name that is too long',
    hcl: `resource "gateway_provider_connection" "long" {\n  customer_id = gateway_customer.c.customer_id\n  name = "${'n'.repeat(300)}"\n  provider_name = "openai"\n}`,
    attr: 'name',
    says: ['name must be 1 to 253 characters long (got 300)'],
  },
  {
    name: 'a bad period',
    hcl: `resource "gateway_budget" "f" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  name = "f"\n  limit_usd = "5"\n  period = "fortnight"\n}`,
    attr: 'period',
    says: ['period must be one of "day", "week", "month", "total" (got "fortnight")'],
  },
  {
    name: 'a bad stage',
    hcl: `resource "gateway_guardrail" "s" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  name = "s"\n  stage = "sideways"\n  kind = "pii"\n  pii_types = ["email"]\n  action = "flag"\n}`,
    attr: 'stage',
    says: ['stage must be one of "input", "output", "both" (got "sideways")'],
  },
  {
    name: 'a guardrail documents value that is not scan or refuse',
    hcl: `resource "gateway_guardrail" "d" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  name = "d"\n  stage = "input"\n  kind = "pii"\n  pii_types = ["email"]\n  action = "flag"\n  documents = "sometimes"\n}`,
    attr: 'documents',
    says: ['documents must be one of "scan", "refuse" (got "sometimes")'],
  },
  {
    name: 'documents refuse on an output-only guardrail',
    hcl: `resource "gateway_guardrail" "o" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  name = "o"\n  stage = "output"\n  kind = "pii"\n  pii_types = ["email"]\n  action = "flag"\n  documents = "refuse"\n}`,
    attr: 'documents',
    says: ["documents: refuse applies to input documents; the stage is 'output'"],
  },
  {
    name: 'a negative expires_in_days',
    hcl: `resource "gateway_api_key" "k" {\n  customer_id = gateway_customer.c.customer_id\n  expires_in_days = -1\n}`,
    attr: 'expires_in_days',
    says: ['expires_in_days must be 1 to 3650 (got -1)'],
  },
  {
    name: 'an ftp:// base_url',
    hcl: `resource "gateway_provider_connection" "ftp" {\n  customer_id = gateway_customer.c.customer_id\n  name = "ftp"\n  provider_name = "openai"\n  base_url = "ftp://example.com"\n}`,
    attr: 'base_url',
    says: ['base_url must be an http:// or https:// URL'],
  },
  {
    name: 'a connection api_key that cannot be an HTTP header value (the ellipsis of a pasted placeholder)',
    hcl: `resource "gateway_provider_connection" "ell" {\n  customer_id = gateway_customer.c.customer_id\n  name = "ell"\n  provider_name = "openai"\n  api_key = "sk-upstream-\u2026"\n}`,
    attr: 'api_key',
    says: ['api_key: must be a valid HTTP header value'],
  },
  {
    name: 'a BYOK secret with a line break',
    hcl: `resource "gateway_byok_key" "nl" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  provider_name = "PROVIDER_OPENAI"\n  name = "nl"\n  secret = "sk-a\\nb"\n}`,
    attr: 'secret',
    says: ['secret: must be a valid HTTP header value'],
  },
  {
    name: 'an MCP server auth_value with a carriage return',
    hcl: `resource "gateway_mcp_server" "cr" {\n  server_id = "cr"\n  url = "https://93.184.216.34/mcp"\n  auth_type = "bearer"\n  auth_value = "tok\\rX: y"\n}`,
    attr: 'auth_value',
    says: ['must be a valid HTTP header value'],
  },
  {
    name: 'a telemetry config without the secret its auth type needs',
    hcl: `resource "gateway_telemetry_config" "t" {\n  user_id = "ops"\n  telemetry_type = "logs"\n  sink_url = "https://otel.example.com"\n  protocol = "grpc"\n  auth_type = "bearer"\n}`,
    attr: 'auth_value',
    says: ["auth_value: required with auth_type 'bearer'"],
  },
];

describe.skipIf(!HAVE_TERRAFORM)('terraform: refused at validate/plan, on the attribute, saying what is allowed', () => {
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

  test('terraform validate refuses each case on its attribute; apply creates nothing', async () => {
    const dir = workdir({ 'main.tf': `${PROVIDER_BLOCK}${CUSTOMER}${CASES.map((c) => c.hcl).join('\n')}\n` });
    expect((await terraform(dir, ['init', '-input=false', '-no-color'], env)).code).toBe(0);
    const v = await terraform(dir, ['validate', '-no-color'], env);
    expect(v.code).not.toBe(0);
    expect(v.out).not.toContain('Expected union value');
    for (const c of CASES) {
      expect(v.out, c.name).toContain(`Error: Invalid value for ${c.attr}`);
      for (const s of c.says) expect(v.out, c.name).toContain(s);
    }
    // One diagnostic per case, each pointing at its resource.
    expect(v.out.match(/Error: Invalid value for /g)?.length).toBe(CASES.length);
    const a = await terraform(dir, ['apply', '-auto-approve', '-input=false', '-no-color'], env);
    expect(a.code).not.toBe(0);
    expect((await g.call(admin('GetCustomer'), { customerId: 'tfchk' })).status).toBe(404);
  }, 240_000);

  test('a value known only at plan (a variable) is checked at plan', async () => {
    const dir = workdir({
      'main.tf': `${PROVIDER_BLOCK}${CUSTOMER}variable "limit" {\n  type = string\n}\nresource "gateway_budget" "b" {\n  customer_id = gateway_customer.c.customer_id\n  project_id = "default"\n  name = "m"\n  limit_usd = var.limit\n  period = "month"\n}\n`,
    });
    expect((await terraform(dir, ['init', '-input=false', '-no-color'], env)).code).toBe(0);
    const p = await terraform(dir, ['plan', '-input=false', '-no-color', '-var', 'limit=0.0000000001'], env);
    expect(p.code).not.toBe(0);
    expect(p.out).toContain('Error: Invalid value for limit_usd');
    expect(p.out).toContain('at most 9 fractional');
  }, 120_000);

  test('the API refuses what the provider refuses (the same checks)', async () => {
    await g.must(admin('CreateCustomer'), { customerId: 'tfapi' });
    await g.must(admin('CreateWorkspace'), { customerId: 'tfapi', workspaceId: 'edge' });
    const sa = await g.call(admin('CreateServiceAccount'), { customerId: 'tfapi', workspaceId: 'edge', scopes: ['everything'] });
    expect(sa.status).toBe(400);
    expect(JSON.stringify(sa.body)).toContain("unknown scope 'everything'");
    const conn = await g.call(admin('CreateProviderConnection'), { customerId: 'tfapi', name: 'up', provider: 'openaii' });
    expect(conn.status).toBe(400);
    expect(JSON.stringify(conn.body)).toContain("unknown provider 'openaii'; one of: ");
  }, 60_000);
});
