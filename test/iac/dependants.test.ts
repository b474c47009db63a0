import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * Issue 30, defect 8: a replaced workspace never leaves its service account ACTIVE. A new slug
 * replaces the account in the same apply (its workspace_id changes); a new project (same slug)
 * replaces the workspace alone, whose delete revokes the account (the API's cascade), so the next
 * plan creates a new one — or, with `replace_triggered_by = [gateway_workspace.w.id]` as the docs
 * advise, the same apply replaces it.
 */

const config = (slug: string, project: string, trigger = false) => `${PROVIDER_BLOCK}
resource "gateway_customer" "c" {
  customer_id = "tfdep"
}
resource "gateway_project" "a" {
  customer_id = gateway_customer.c.customer_id
  project_id  = "alpha"
}
resource "gateway_project" "b" {
  customer_id = gateway_customer.c.customer_id
  project_id  = "beta"
}
resource "gateway_workspace" "w" {
  customer_id  = gateway_customer.c.customer_id
  workspace_id = "${slug}"
  project_id   = ${project}.project_id
}
resource "gateway_service_account" "sa" {
  customer_id  = gateway_customer.c.customer_id
  workspace_id = gateway_workspace.w.workspace_id
${trigger ? '  lifecycle {\n    replace_triggered_by = [gateway_workspace.w.id]\n  }\n' : ''}}
`;

describe.skipIf(!HAVE_TERRAFORM)('terraform: a replaced workspace takes its service account with it', () => {
  let g: TestGateway;
  let env: Record<string, string>;
  let dir: string;
  const tf = (args: string[]) => terraform(dir, args, env);
  const saId = (): string => {
    const s = JSON.parse(readFileSync(join(dir, 'terraform.tfstate'), 'utf8')) as {
      resources: { type: string; instances: { attributes: { id: string } }[] }[];
    };
    return s.resources.find((r) => r.type === 'gateway_service_account')?.instances[0]?.attributes.id ?? '';
  };
  const account = async (id: string) =>
    (await g.must(admin('GetServiceAccount'), { id })).serviceAccount as { status: string; workspaceId: string };

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: g.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
    dir = workdir({ 'main.tf': config('edge-a', 'gateway_project.a') });
    expect((await tf(['init', '-input=false', '-no-color'])).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('a new slug, then a new project: the old account revoked, a new one active, then an empty plan', async () => {
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(a.code, a.out).toBe(0);
    const first = saId();
    expect((await account(first)).status).toBe('SERVICE_ACCOUNT_STATUS_ACTIVE');

    // Each step: the configuration, and whether the account is replaced in the same apply.
    for (const [slug, project, trigger, sameApply] of [
      ['edge-b', 'gateway_project.a', false, true],
      ['edge-b', 'gateway_project.b', false, false],
      ['edge-b', 'gateway_project.a', true, true],
    ] as const) {
      const before = saId();
      writeFileSync(join(dir, 'main.tf'), config(slug, project, trigger));
      const p = await tf(['plan', '-input=false', '-no-color']);
      expect(p.out, p.out).toContain('# gateway_workspace.w must be replaced');
      if (sameApply)
        expect(p.out).toMatch(/# gateway_service_account\.sa (must be replaced|will be replaced due to changes in replace_triggered_by)/);
      const r = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
      expect(r.code, r.out).toBe(0);
      // Never left ACTIVE on the replaced workspace.
      expect((await account(before)).status).toBe('SERVICE_ACCOUNT_STATUS_REVOKED');
      if (!sameApply) {
        const next = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
        expect(next.code, next.out).toBe(2);
        expect(next.out).toContain('# gateway_service_account.sa will be created');
        expect((await tf(['apply', '-auto-approve', '-input=false', '-no-color'])).code).toBe(0);
      }
      const after = saId();
      expect(after).not.toBe(before);
      expect(await account(after)).toMatchObject({ status: 'SERVICE_ACCOUNT_STATUS_ACTIVE', workspaceId: slug });
      const again = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
      expect(again.code, again.out).toBe(0);
    }
    expect((await tf(['destroy', '-auto-approve', '-input=false', '-no-color'])).code).toBe(0);
  }, 240_000);
});
