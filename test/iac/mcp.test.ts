import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * gateway_mcp_server, gateway_project_mcp_server and gateway_mcp_profile with the real terraform
 * binary: create (the write-only credential), an empty second plan, in-place updates (the profile's
 * server blocks replaced, a new write-only version), drift, import by id, plan-time validation with
 * the API's own cross-field rules, destroy in dependency order. The credential never reaches the state.
 */

const WO_1 = 'mcp-tf-write-only-secret-1a2b';
const WO_2 = 'mcp-tf-write-only-secret-3c4d';
const SENSITIVE = 'mcp-tf-sensitive-secret-5e6f';

interface Cfg {
  version: number;
  tools: string;
  prefix?: string;
  extra?: string;
}
const config = (c: Cfg) => `${PROVIDER_BLOCK}
variable "wo" {
  type      = string
  sensitive = true
  ephemeral = true
}
resource "gateway_customer" "c" {
  customer_id = "tfmcp"
}
resource "gateway_mcp_server" "gh" {
  server_id             = "github"
  url                   = "https://93.184.216.34/mcp"
  auth_type             = "bearer"
  auth_value_wo         = var.wo
  auth_value_wo_version = ${c.version}
  labels                = { team = "dev" }
}
resource "gateway_mcp_server" "docs" {
  server_id   = "docs"
  url         = "https://93.184.216.35/sse"
  transport   = "sse"
  auth_type   = "header"
  auth_header = "X-Docs-Key"
  auth_value  = "${SENSITIVE}"
}
resource "gateway_project_mcp_server" "gh" {
  customer_id = gateway_customer.c.customer_id
  project_id  = "default"
  server_id   = gateway_mcp_server.gh.server_id
}
resource "gateway_project_mcp_server" "docs" {
  customer_id = gateway_customer.c.customer_id
  project_id  = "default"
  server_id   = gateway_mcp_server.docs.server_id
}
resource "gateway_mcp_profile" "dev" {
  customer_id = gateway_customer.c.customer_id
  project_id  = "default"
  profile_id  = "dev"
  depends_on  = [gateway_project_mcp_server.gh, gateway_project_mcp_server.docs]
  server {
    server_id = "github"
    tools     = ${c.tools}
  }
  server {
    server_id = "docs"
    ${c.prefix === undefined ? '' : `prefix = "${c.prefix}"`}
  }
  ${c.extra ?? ''}
}
`;

describe.skipIf(!HAVE_TERRAFORM)('terraform: gateway_mcp_server, gateway_project_mcp_server, gateway_mcp_profile', () => {
  let g: TestGateway;
  let env: Record<string, string>;
  let dir: string;
  // The credential goes in as TF_VAR_wo, never `-var` (TF_LOG prints the command line).
  const tf = (args: string[], d = dir, wo = WO_2) => terraform(d, args, { ...env, TF_VAR_wo: wo });
  const apply = (d = dir, wo = WO_1) => tf(['apply', '-auto-approve', '-input=false', '-no-color'], d, wo);
  const planCode = async (wo = WO_1) => (await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color'], dir, wo)).code;
  const ref = { customerId: 'tfmcp', projectId: 'default' };
  const profile = async () => (await g.must(admin('GetMcpProfile'), { ...ref, profileId: 'dev' })).profile as { servers: unknown[] };
  const authValue = () => g.gw.snapshots.current?.mcp.servers.get('github')?.authValue;

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: g.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
    dir = workdir({ 'main.tf': config({ version: 1, tools: '["search_*"]' }) });
    const init = await tf(['init', '-input=false', '-no-color']);
    expect(init.code, init.out).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('create, no diff, update in place, drift, import, validation, destroy', async () => {
    const a = await apply();
    expect(a.code, a.out).toBe(0);
    await g.settle();
    expect(((await g.must(admin('GetMcpServer'), { serverId: 'github' })).server as { hasAuthValue: boolean }).hasAuthValue).toBe(true);
    expect(authValue()).toBe(WO_1);
    expect(await profile()).toMatchObject({
      servers: [
        { serverId: 'github', tools: ['search_*'], prefix: 'github' },
        { serverId: 'docs', prefix: 'docs' },
      ],
    });
    expect(await planCode()).toBe(0);
    const state = readFileSync(join(dir, 'terraform.tfstate'), 'utf8');
    expect(state).not.toContain(WO_1);

    // The profile's blocks replaced in place; a new write-only version sends the new credential.
    writeFileSync(join(dir, 'main.tf'), config({ version: 2, tools: '["search_*", "get_issue"]', prefix: '' }));
    const u = await apply(dir, WO_2);
    expect(u.code, u.out).toBe(0);
    expect(u.out).toContain('0 added, 2 changed, 0 destroyed');
    await g.settle();
    expect(authValue()).toBe(WO_2);
    expect(await profile()).toMatchObject({
      servers: [
        { serverId: 'github', tools: ['search_*', 'get_issue'] },
        { serverId: 'docs', prefix: '' },
      ],
    });
    expect(await planCode(WO_2)).toBe(0);

    // Drift: the profile edited and the assignment removed out of band.
    await g.must(admin('UpdateMcpProfile'), { ...ref, profileId: 'dev', servers: [{ serverId: 'github' }] });
    await g.must(admin('RemoveProjectMcpServer'), { ...ref, serverId: 'docs' });
    const d = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
    expect(d.code, d.out).toBe(2);
    expect(d.out).toContain('# gateway_mcp_profile.dev will be updated in-place');
    expect(d.out).toContain('# gateway_project_mcp_server.docs will be created');
    const fix = await apply(dir, WO_2);
    expect(fix.code, fix.out).toBe(0);

    const imports = [
      'gateway_customer.c:tfmcp',
      'gateway_mcp_server.gh:github',
      'gateway_mcp_server.docs:docs',
      'gateway_project_mcp_server.gh:tfmcp/default/github',
      'gateway_project_mcp_server.docs:tfmcp/default/docs',
      'gateway_mcp_profile.dev:tfmcp/default/dev',
    ];
    const other = workdir({
      'main.tf': config({ version: 2, tools: '["search_*", "get_issue"]', prefix: '' }),
      'imports.tf': imports
        .map((x) => x.split(':'))
        .map(([to, id]) => `import {\n  to = ${to}\n  id = "${id}"\n}\n`)
        .join(''),
    });
    expect((await tf(['init', '-input=false', '-no-color'], other)).code).toBe(0);
    const imp = await tf(['plan', '-input=false', '-no-color'], other);
    expect(imp.code, imp.out).toBe(0);
    expect(imp.out).toContain('6 to import');
    expect(imp.out).toContain('gateway_mcp_profile.dev: Preparing import... [id=tfmcp/default/dev]');

    // Plan-time validation: a URL scheme, header auth without its name, duplicate prefixes.
    for (const [broken, needle] of [
      [config({ version: 2, tools: '["x"]' }).replace('https://93.184.216.35/sse', 'ftp://93.184.216.35/sse'), 'url'],
      [config({ version: 2, tools: '["x"]' }).replace('auth_header = "X-Docs-Key"', ''), 'authHeader'],
      [config({ version: 2, tools: '["x"]', prefix: 'github' }), 'prefix'],
    ] as const) {
      const bad = workdir({ 'main.tf': broken });
      expect((await tf(['init', '-input=false', '-no-color'], bad)).code).toBe(0);
      const v = await tf(['validate', '-no-color'], bad);
      expect(v.code, v.out).not.toBe(0);
      expect(v.out).toContain(needle);
    }

    const destroy = await tf(['destroy', '-auto-approve', '-input=false', '-no-color']);
    expect(destroy.code, destroy.out).toBe(0);
    expect((await g.call(admin('GetMcpServer'), { serverId: 'github' })).status).toBe(404);
    expect(readFileSync(join(dir, 'terraform.tfstate'), 'utf8')).not.toContain(WO_2);
  }, 240_000);
});
