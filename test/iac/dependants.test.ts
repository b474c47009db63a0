import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PullController } from '../../src/data-plane/remote/pull.ts';
import { readServiceAccountFile } from '../../src/data-plane/remote/service-account-file.ts';
import { SnapshotHolder } from '../../src/propagation/holder.ts';
import { getAdapter } from '../../src/providers/registry.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * Issue 30, defect 8: a replaced workspace never leaves its service account ACTIVE. A new slug
 * replaces the account in the same apply (its workspace_id changes); a new project (same slug)
 * replaces the workspace alone, whose delete revokes the account (the API's cascade), so the next
 * plan creates a new one — or, with `replace_triggered_by = [gateway_workspace.w.id]`, the same
 * apply replaces it. Issue 46, item 1: with `workspace_uuid = gateway_workspace.w.id` the provider
 * itself plans the account's replacement (the workspace's new id), so a workspace replacement —
 * a new project, or `-replace` — converges in one apply and the data plane's new credentials pull.
 */

type Link = 'none' | 'trigger' | 'uuid';
const config = (slug: string, project: string, link: Link = 'none') => `${PROVIDER_BLOCK}
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
${link === 'trigger' ? '  lifecycle {\n    replace_triggered_by = [gateway_workspace.w.id]\n  }\n' : ''}${link === 'uuid' ? '  workspace_uuid = gateway_workspace.w.id\n' : ''}}
output "creds" {
  value     = gateway_service_account.sa.credentials_json
  sensitive = true
}
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
  const credentials = async (): Promise<string> => {
    const file = join(dir, `sa-${crypto.randomUUID()}.json`);
    writeFileSync(file, (await tf(['output', '-raw', 'creds'])).out.trim(), { mode: 0o600 });
    return file;
  };
  /** One pull of the data plane protocol as the account of that credentials file. */
  const pull = async (file: string) => {
    const pc = new PullController(readServiceAccountFile(file), new SnapshotHolder(), getAdapter, {
      dataDir: dir,
      pollMs: 60_000,
      driftSweepMs: 60_000,
    });
    try {
      return await pc.client.protocol('Pull', { full: true });
    } finally {
      pc.stop();
    }
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

  test('a new slug, a new project, -replace: the old account revoked, a new one active (in one apply with workspace_uuid), then an empty plan', async () => {
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(a.code, a.out).toBe(0);
    const first = saId();
    expect((await account(first)).status).toBe('SERVICE_ACCOUNT_STATUS_ACTIVE');

    // Each step: the configuration, and whether the account is replaced in the same apply.
    for (const [slug, project, link, sameApply] of [
      ['edge-b', 'gateway_project.a', 'none', true],
      ['edge-b', 'gateway_project.b', 'none', false],
      ['edge-b', 'gateway_project.a', 'trigger', true],
      ['edge-b', 'gateway_project.b', 'uuid', true],
    ] as const) {
      const before = saId();
      writeFileSync(join(dir, 'main.tf'), config(slug, project, link));
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

    // Issue 46, item 1: with workspace_uuid, `-replace` of the workspace (no configuration change)
    // replaces the account in the same apply; then the plan is empty and the new credentials pull.
    const oldCreds = await credentials();
    const before = saId();
    const p = await tf(['plan', '-replace=gateway_workspace.w', '-input=false', '-no-color']);
    expect(p.out).toContain('# gateway_service_account.sa must be replaced');
    expect(p.out).toMatch(/~ workspace_uuid += "[0-9a-f-]{36}" -> \(known after apply\) # forces replacement/);
    const r = await tf(['apply', '-replace=gateway_workspace.w', '-auto-approve', '-input=false', '-no-color']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('2 added, 0 changed, 2 destroyed');
    expect((await account(before)).status).toBe('SERVICE_ACCOUNT_STATUS_REVOKED');
    expect(await account(saId())).toMatchObject({ status: 'SERVICE_ACCOUNT_STATUS_ACTIVE', workspaceId: 'edge-b' });
    const empty = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
    expect(empty.code, empty.out).toBe(0);
    expect(await pull(await credentials())).toMatchObject({ dataplaneId: 'edge-b', customerId: 'tfdep' });
    expect(await pull(oldCreds).catch((e: unknown) => e)).toMatchObject({ status: 401, code: 'unauthenticated' });

    // A workspace_uuid naming another workspace is refused at create, naming both.
    const other = (await g.must(admin('CreateWorkspace'), { customerId: 'tfdep', workspaceId: 'edge-other' })).workspace as { id: string };
    writeFileSync(join(dir, 'main.tf'), config('edge-b', 'gateway_project.b', 'uuid').replace('gateway_workspace.w.id', `"${other.id}"`));
    const wrong = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.out.replace(/\s+/g, ' ')).toContain(
      `workspace_uuid ${other.id} is not the workspace tfdep/edge-b (it is tfdep/edge-other)`,
    );
    writeFileSync(join(dir, 'main.tf'), config('edge-b', 'gateway_project.b', 'uuid'));
    expect((await tf(['destroy', '-auto-approve', '-input=false', '-no-color'])).code).toBe(0);
  }, 300_000);
});
