import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestAgent, type TestAgent } from '../support/a2a-agent.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * gateway_a2a_agent and gateway_project_a2a_agent with the real terraform binary against a real
 * `@a2a-js/sdk` agent (its card fetched and pinned): create with the write-only credential, an
 * empty second plan, a new write-only version sent in place, import by id, destroy in dependency
 * order. The credential never reaches the state.
 */

const WO_1 = 'a2a-tf-write-only-secret-7a8b';
const WO_2 = 'a2a-tf-write-only-secret-9c0d';

const config = (cardUrl: string, version: number) => `${PROVIDER_BLOCK}
variable "wo" {
  type      = string
  sensitive = true
  ephemeral = true
}
resource "gateway_customer" "c" {
  customer_id = "tfa2a"
}
resource "gateway_a2a_agent" "echo" {
  agent_id              = "echo"
  card_url              = "${cardUrl}"
  description           = "the echo agent"
  auth_type             = "bearer"
  auth_value_wo         = var.wo
  auth_value_wo_version = ${version}
  labels                = { team = "agents" }
}
resource "gateway_project_a2a_agent" "echo" {
  customer_id = gateway_customer.c.customer_id
  project_id  = "default"
  agent_id    = gateway_a2a_agent.echo.agent_id
}
`;

describe.skipIf(!HAVE_TERRAFORM)('terraform: gateway_a2a_agent, gateway_project_a2a_agent', () => {
  let g: TestGateway;
  let agent: TestAgent;
  let env: Record<string, string>;
  let dir: string;
  // The credential goes in as TF_VAR_wo, never `-var` (TF_LOG prints the command line).
  const tf = (args: string[], d = dir, wo = WO_1) => terraform(d, args, { ...env, TF_VAR_wo: wo });
  const apply = (d = dir, wo = WO_1) => tf(['apply', '-auto-approve', '-input=false', '-no-color'], d, wo);
  const planCode = async (wo = WO_1) => (await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color'], dir, wo)).code;
  const state = () => readFileSync(join(dir, 'terraform.tfstate'), 'utf8');
  /** What the served snapshot holds for the agent in the project (the sealed credential, opened). */
  const served = () => [...(g.gw.snapshots.current?.projects.values() ?? [])].find((p) => p.a2aAgents.has('echo'))?.a2aAgents.get('echo');

  beforeAll(async () => {
    agent = startTestAgent('Echo agent');
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: g.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
    dir = workdir({ 'main.tf': config(agent.cardUrl, 1) });
    const init = await tf(['init', '-input=false', '-no-color']);
    expect(init.code, init.out).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
    await agent?.stop();
  });

  test('create (card pinned), no diff, a new write-only version in place, import, destroy; the credential never in state', async () => {
    const a = await apply();
    expect(a.code, a.out).toBe(0);
    const { agent: got } = (await g.must(admin('GetA2aAgent'), { agentId: 'echo' })) as { agent: Record<string, unknown> };
    expect(got).toMatchObject({
      name: 'Echo agent',
      state: 'ACTIVE',
      hasAuthValue: true,
      description: 'the echo agent',
      labels: { team: 'agents' },
    });
    expect(String(got.cardSha256)).toMatch(/^[0-9a-f]{64}$/);
    const listed = (await g.must(admin('ListProjectA2aAgents'), { customerId: 'tfa2a', projectId: 'default' })) as {
      entries: { agentId: string }[];
    };
    expect(listed.entries.map((e) => e.agentId)).toEqual(['echo']);
    expect(await planCode()).toBe(0);
    expect(state()).not.toContain(WO_1);

    // A new version sends the new credential, in place.
    writeFileSync(join(dir, 'main.tf'), config(agent.cardUrl, 2));
    const u = await apply(dir, WO_2);
    expect(u.code, u.out).toBe(0);
    expect(u.out).toContain('0 added, 1 changed, 0 destroyed');
    await g.settle();
    expect(served()?.authValue).toBe(WO_2);
    expect(await planCode(WO_2)).toBe(0);
    expect(state()).not.toContain(WO_2);

    const imports = ['gateway_customer.c:tfa2a', 'gateway_a2a_agent.echo:echo', 'gateway_project_a2a_agent.echo:tfa2a/default/echo'];
    const other = workdir({
      'main.tf': config(agent.cardUrl, 2),
      'imports.tf': imports
        .map((x) => x.split(':'))
        .map(([to, id]) => `import {\n  to = ${to}\n  id = "${id}"\n}\n`)
        .join(''),
    });
    expect((await tf(['init', '-input=false', '-no-color'], other)).code).toBe(0);
    const imp = await tf(['plan', '-input=false', '-no-color'], other, WO_2);
    expect(imp.code, imp.out).toBe(0);
    expect(imp.out).toContain('3 to import');
    expect(imp.out).toContain('gateway_a2a_agent.echo: Preparing import... [id=echo]');
    expect(imp.out).toContain('Plan: 3 to import, 0 to add, 0 to change, 0 to destroy.');
    const imported = await apply(other, WO_2);
    expect(imported.code, imported.out).toBe(0);
    expect(imported.out).toContain('3 imported');
    expect((await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color'], other, WO_2)).code).toBe(0);
    expect(readFileSync(join(other, 'terraform.tfstate'), 'utf8')).not.toContain(WO_2);

    const destroy = await tf(['destroy', '-auto-approve', '-input=false', '-no-color'], dir, WO_2);
    expect(destroy.code, destroy.out).toBe(0);
    expect((await g.call(admin('GetA2aAgent'), { agentId: 'echo' })).status).toBe(404);
    expect(state()).not.toContain(WO_2);
  }, 240_000);
});
