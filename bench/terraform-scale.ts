/**
 * Terraform at scale: one HCL stack of ~600 resources (customers, projects, catalog models,
 * connections, routes, budgets, guardrails, settings, API keys) applied with the real terraform
 * binary and the gateway's provider against a real gateway; times `plan`, `apply`, a no-change
 * `plan` (which must be empty) and `destroy`.
 *
 *   bun bench/terraform-scale.ts                 # embedded store (PGlite in memory)
 *   TEST_DATABASE_URL=postgres://gateway:gateway@127.0.0.1:5432/postgres bun bench/terraform-scale.ts
 *   bun bench/terraform-scale.ts --customers=13  # 13 customers: 602 resources (default)
 *
 * Prints one JSON line: {"store", "resources", "plan_s", "apply_s", "noop_plan_s", "destroy_s"}.
 */
import { ADMIN_TOKEN, startTestGateway } from '../test/support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from '../test/iac/support.ts';

const arg = (name: string, fallback: number): number => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.slice(name.length + 3)) : fallback;
};

const CUSTOMERS = arg('customers', 13);
const PROJECTS = 3;
const ROUTES = 4;

/** The stack: per customer 1 customer, per project 1 project + 2 connections + 4 routes + 1 budget + 1 guardrail + 1 setting + 1 key + 4 model assignments. */
const stack = (): { hcl: string; resources: number } => {
  const parts: string[] = [PROVIDER_BLOCK];
  let resources = 0;
  for (let m = 0; m < ROUTES; m++) {
    parts.push(
      `resource "gateway_model" "m${m}" {\n  model = "scale-model-${m}"\n  provider_name = "echo"\n  capabilities = ["chat"]\n  context_window = 128000\n}\n`,
    );
    resources++;
  }
  for (let c = 0; c < CUSTOMERS; c++) {
    const cust = `c${c}`;
    parts.push(`resource "gateway_customer" "${cust}" {\n  customer_id = "scale-${c}"\n  name = "Scale ${c}"\n}\n`);
    resources++;
    for (let p = 0; p < PROJECTS; p++) {
      const proj = `${cust}p${p}`;
      const at = `customer_id = gateway_customer.${cust}.customer_id\n  project_id = gateway_project.${proj}.project_id`;
      parts.push(
        `resource "gateway_project" "${proj}" {\n  customer_id = gateway_customer.${cust}.customer_id\n  project_id = "p${p}"\n}\n`,
      );
      for (const n of ['primary', 'backup'])
        parts.push(`resource "gateway_provider_connection" "${proj}_${n}" {\n  ${at}\n  name = "${n}"\n  provider_name = "echo"\n}\n`);
      for (let m = 0; m < ROUTES; m++) {
        parts.push(`resource "gateway_project_model" "${proj}_m${m}" {\n  ${at}\n  model_id = gateway_model.m${m}.id\n}\n`);
        parts.push(
          `resource "gateway_route" "${proj}_r${m}" {\n  ${at}\n  model = gateway_model.m${m}.model\n  target {\n    connection = gateway_provider_connection.${proj}_primary.name\n    model = "echo-${m}"\n  }\n  target {\n    connection = gateway_provider_connection.${proj}_backup.name\n    model = "echo-${m}"\n    priority = 1\n  }\n  depends_on = [gateway_project_model.${proj}_m${m}]\n}\n`,
        );
      }
      parts.push(`resource "gateway_budget" "${proj}" {\n  ${at}\n  name = "monthly"\n  limit_usd = "100"\n  period = "month"\n}\n`);
      parts.push(
        `resource "gateway_guardrail" "${proj}" {\n  ${at}\n  name = "no-pins"\n  stage = "input"\n  kind = "regex"\n  pattern = "PIN-[0-9]{4}"\n  action = "block"\n}\n`,
      );
      parts.push(
        `resource "gateway_project_setting" "${proj}" {\n  ${at}\n  setting_name = "rate-limit"\n  setting_value = jsonencode({ requestsPerMinute = 600 })\n}\n`,
      );
      parts.push(`resource "gateway_api_key" "${proj}" {\n  name = "scale"\n  user_id = "bench"\n  ${at}\n}\n`);
      resources += 1 + 2 + ROUTES * 2 + 4;
    }
  }
  return { hcl: parts.join('\n'), resources };
};

if (!HAVE_TERRAFORM) {
  console.error('terraform-scale: no terraform binary (set TERRAFORM_BIN)');
  process.exit(1);
}
const built = await providerInstalled();
const gw = await startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' });
try {
  const { hcl, resources } = stack();
  const dir = workdir({ 'main.tf': hcl });
  const env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: gw.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
  const step = async (args: string[]): Promise<{ s: number; out: string }> => {
    const r = await terraform(dir, args, env);
    if (r.code !== 0 && !(args[0] === 'plan' && r.code === 2))
      throw new Error(`terraform ${args.join(' ')} failed:\n${r.out.slice(-3000)}`);
    return { s: r.ms / 1000, out: r.out };
  };
  const parallelism = '-parallelism=10';
  await step(['init', '-input=false']);
  const plan = await step(['plan', '-input=false', parallelism, '-out=tfplan']);
  const apply = await step(['apply', '-input=false', parallelism, 'tfplan']);
  const noop = await step(['plan', '-input=false', parallelism, '-detailed-exitcode']);
  if (!/No changes\./.test(noop.out)) throw new Error(`the second plan is not empty:\n${noop.out.slice(-3000)}`);
  const destroy = await step(['destroy', '-input=false', parallelism, '-auto-approve']);
  const round = (n: number) => Math.round(n * 10) / 10;
  console.log(
    JSON.stringify({
      store: process.env.TEST_DATABASE_URL ? 'postgresql' : 'pglite',
      resources,
      plan_s: round(plan.s),
      apply_s: round(apply.s),
      noop_plan_s: round(noop.s),
      destroy_s: round(destroy.s),
    }),
  );
} finally {
  await gw.stop();
}
