import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * gateway_budget and gateway_guardrail with the real terraform binary: create, empty second plan,
 * in-place update, drift, import by `customer/project/name`, plan-time validation, destroy.
 */

const config = (limit: string, action: string, period = 'month') => `${PROVIDER_BLOCK}
resource "gateway_customer" "c" {
  customer_id = "tfgov"
}
resource "gateway_budget" "b" {
  customer_id = gateway_customer.c.customer_id
  project_id  = "default"
  name        = "monthly"
  limit_usd   = "${limit}"
  period      = "${period}"
}
resource "gateway_guardrail" "g" {
  customer_id = gateway_customer.c.customer_id
  project_id  = "default"
  name        = "no-pii"
  stage       = "both"
  kind        = "pii"
  pii_types   = ["email", "credit_card"]
  action      = "${action}"
}
`;

describe.skipIf(!HAVE_TERRAFORM)('terraform: gateway_budget, gateway_guardrail', () => {
  let g: TestGateway;
  let env: Record<string, string>;
  let dir: string;
  const tf = (args: string[], d = dir) => terraform(d, args, env);
  const ref = { customerId: 'tfgov', projectId: 'default' };

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    g = gw;
    env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: g.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
    dir = workdir({ 'main.tf': config('25', 'redact') });
    const init = await tf(['init', '-input=false', '-no-color']);
    expect(init.code, init.out).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('create, no diff, update in place, drift, import, validation, destroy', async () => {
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(a.code, a.out).toBe(0);
    expect(((await g.must(admin('GetBudget'), { ...ref, name: 'monthly' })).budget as { limitUsd: string }).limitUsd).toBe('25');
    expect(((await g.must(admin('GetGuardrail'), { ...ref, name: 'no-pii' })).guardrail as { action: string }).action).toBe('redact');
    expect((await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color'])).code).toBe(0);

    writeFileSync(join(dir, 'main.tf'), config('40', 'block'));
    const u = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(u.code, u.out).toBe(0);
    expect(u.out).toContain('0 added, 2 changed, 0 destroyed');
    expect((await g.must(admin('GetBudget'), { ...ref, name: 'monthly' })).budget as { limitUsd: string; period: string }).toMatchObject({
      limitUsd: '40',
      period: 'month',
    });
    expect((await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color'])).code).toBe(0);

    await g.must(admin('UpsertBudget'), { ...ref, name: 'monthly', limitUsd: '99', period: 'day' });
    await g.must(admin('DeleteGuardrail'), { ...ref, name: 'no-pii' });
    const d = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
    expect(d.code, d.out).toBe(2);
    expect(d.out).toContain('# gateway_budget.b will be updated in-place');
    expect(d.out).toContain('# gateway_guardrail.g will be created');
    const fix = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(fix.code, fix.out).toBe(0);

    const other = workdir({
      'main.tf': config('40', 'block'),
      'imports.tf': ['gateway_customer.c:tfgov', 'gateway_budget.b:tfgov/default/monthly', 'gateway_guardrail.g:tfgov/default/no-pii']
        .map((x) => x.split(':'))
        .map(([to, id]) => `import {\n  to = ${to}\n  id = "${id}"\n}\n`)
        .join(''),
    });
    expect((await tf(['init', '-input=false', '-no-color'], other)).code).toBe(0);
    const imp = await tf(['apply', '-auto-approve', '-input=false', '-no-color'], other);
    expect(imp.code, imp.out).toBe(0);
    expect(imp.out).toContain('3 imported, 0 added, 0 changed, 0 destroyed');

    const bad = workdir({ 'main.tf': config('40', 'block', 'fortnight') });
    expect((await tf(['init', '-input=false', '-no-color'], bad)).code).toBe(0);
    const v = await tf(['plan', '-input=false', '-no-color'], bad);
    expect(v.code).not.toBe(0);
    expect(v.out).toContain('period');

    const destroy = await tf(['destroy', '-auto-approve', '-input=false', '-no-color']);
    expect(destroy.code, destroy.out).toBe(0);
    expect((await g.call(admin('GetCustomer'), { customerId: 'tfgov' })).status).toBe(404);
  }, 180_000);
});
