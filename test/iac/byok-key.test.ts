import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * gateway_byok_key with the real terraform binary: register, empty second plan, a change replaces,
 * an out-of-band revoke plans a re-register, import by `customer/project/id`, destroy revokes; the
 * secret is sensitive (never in terraform's output).
 */

const SECRET_A = 'sk-byok-tf-a-7c1e';
const SECRET_B = 'sk-byok-tf-b-93d0';
const config = (secret: string, extra = '') => `${PROVIDER_BLOCK}
resource "gateway_customer" "c" {
  customer_id = "tfbyok"
}
resource "gateway_byok_key" "k" {
  customer_id   = gateway_customer.c.customer_id
  project_id    = "default"
  provider_name = "PROVIDER_OPENAI"
  name          = "team openai"
  secret        = "${secret}"
  ${extra}
}
`;

describe.skipIf(!HAVE_TERRAFORM)('terraform: gateway_byok_key', () => {
  let g: TestGateway;
  let env: Record<string, string>;
  let dir: string;
  const tf = (args: string[], d = dir) => terraform(d, args, env);
  const keyId = (d = dir): string => {
    const s = JSON.parse(readFileSync(join(d, 'terraform.tfstate'), 'utf8')) as {
      resources: { type: string; instances: { attributes: { id: string } }[] }[];
    };
    return s.resources.find((r) => r.type === 'gateway_byok_key')?.instances[0]?.attributes.id ?? '';
  };
  const fetchSecret = async (id: string) => (await g.call('/byok.v1.ByokService/Fetch', { id })).body as { secret?: string; code?: string };

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: g.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
    dir = workdir({ 'main.tf': config(SECRET_A) });
    const init = await tf(['init', '-input=false', '-no-color']);
    expect(init.code, init.out).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('register, no diff, replace on change, drift on revoke, import, destroy', async () => {
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(a.code, a.out).toBe(0);
    expect(a.out).not.toContain(SECRET_A);
    const first = keyId();
    expect(first).toStartWith('byok_');
    expect((await fetchSecret(first)).secret).toBe(SECRET_A);
    expect((await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color'])).code).toBe(0);

    writeFileSync(join(dir, 'main.tf'), config(SECRET_B));
    const p = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
    expect(p.code, p.out).toBe(2);
    expect(p.out).toContain('must be replaced');
    expect(p.out).not.toContain(SECRET_B);
    expect((await tf(['apply', '-auto-approve', '-input=false', '-no-color'])).code).toBe(0);
    const second = keyId();
    expect(second).not.toBe(first);
    expect((await fetchSecret(second)).secret).toBe(SECRET_B);
    expect((await fetchSecret(first)).secret).toBeUndefined(); // the old key was revoked

    await g.must('/byok.v1.ByokService/Revoke', { id: second, customerId: 'tfbyok', projectId: 'default' });
    const drift = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
    expect(drift.code, drift.out).toBe(2);
    expect(drift.out).toContain('will be created');
    expect((await tf(['apply', '-auto-approve', '-input=false', '-no-color'])).code).toBe(0);
    const third = keyId();

    // The secret cannot be read back: an imported key keeps its stored secret when the config
    // ignores changes to it (documented); otherwise the next apply would register it again.
    const other = workdir({
      'main.tf': config(SECRET_B, 'lifecycle {\n    ignore_changes = [secret]\n  }'),
      'imports.tf': `import {\n  to = gateway_customer.c\n  id = "tfbyok"\n}\nimport {\n  to = gateway_byok_key.k\n  id = "tfbyok/default/${third}"\n}\n`,
    });
    expect((await tf(['init', '-input=false', '-no-color'], other)).code).toBe(0);
    const imp = await tf(['apply', '-auto-approve', '-input=false', '-no-color'], other);
    expect(imp.code, imp.out).toBe(0);
    expect(imp.out).toContain('2 imported, 0 added, 0 changed, 0 destroyed');
    const after = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color'], other);
    expect(after.code, after.out).toBe(0);

    const d = await tf(['destroy', '-auto-approve', '-input=false', '-no-color']);
    expect(d.code, d.out).toBe(0);
    expect((await fetchSecret(third)).secret).toBeUndefined();
    expect(JSON.stringify(await g.must(admin('ListCustomers'), {}))).not.toContain('"tfbyok"');
  }, 180_000);
});
