import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * gateway_telemetry_config with the real terraform binary: create, empty second plan, in-place
 * update, drift, import round-trip, plan-time validation, the sensitive auth value, destroy.
 */

const SINK_SECRET = 'sink-token-9f2c41';
const config = (interval: number, extra = '') => `${PROVIDER_BLOCK}
resource "gateway_telemetry_config" "audit" {
  user_id                  = "ops"
  telemetry_type           = "audit_logs"
  sink_url                 = "http://127.0.0.1:1"
  protocol                 = "http/json"
  auth_type                = "bearer"
  auth_value               = "${SINK_SECRET}"
  forward_interval_seconds = ${interval}
  ${extra}
}
`;

describe.skipIf(!HAVE_TERRAFORM)('terraform: gateway_telemetry_config', () => {
  let g: TestGateway;
  let env: Record<string, string>;
  let dir: string;
  const tf = (args: string[], d = dir) => terraform(d, args, env);
  const id = (d = dir): string =>
    (JSON.parse(readFileSync(join(d, 'terraform.tfstate'), 'utf8')) as { resources: { instances: { attributes: { id: string } }[] }[] })
      .resources[0]?.instances[0]?.attributes.id ?? '';
  const get = async (cid: string) => (await g.must(admin('GetTelemetryConfig'), { id: cid })).config as Record<string, unknown>;

  beforeAll(async () => {
    // The sink is on loopback (it refuses connections): inward sinks need the operator setting.
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway({ GATEWAY_UPSTREAM_ALLOW_PRIVATE: '1' })]);
    g = gw;
    env = { TF_CLI_CONFIG_FILE: built.rc, GATEWAY_ENDPOINT: g.adminUrl, GATEWAY_TOKEN: ADMIN_TOKEN };
    dir = workdir({ 'main.tf': config(600) });
    const init = await tf(['init', '-input=false', '-no-color']);
    expect(init.code, init.out).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('create, empty second plan, in-place update, drift, import, validation, destroy', async () => {
    const a = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(a.code, a.out).toBe(0);
    expect(a.out).not.toContain(SINK_SECRET);
    const cid = id();
    expect(await get(cid)).toMatchObject({
      telemetryType: 'audit_logs',
      authValue: SINK_SECRET,
      forwardIntervalSeconds: 600,
      enabled: true,
    });
    expect((await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color'])).code).toBe(0);

    // In place.
    dir = workdirWith(dir, config(900));
    const u = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(u.code, u.out).toBe(0);
    expect(u.out).toContain('0 added, 1 changed, 0 destroyed');
    expect(id()).toBe(cid);
    expect((await get(cid)).forwardIntervalSeconds).toBe(900);

    // Drift: changed outside → update planned; deleted outside → re-create planned.
    await g.must(admin('UpdateTelemetryConfig'), { id: cid, sinkUrl: 'http://127.0.0.1:2' });
    const d = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
    expect(d.code, d.out).toBe(2);
    expect(d.out).toContain('will be updated in-place');
    expect(d.out).toContain('"http://127.0.0.1:2" -> "http://127.0.0.1:1"');
    await g.must(admin('UpdateTelemetryConfig'), { id: cid, sinkUrl: 'http://127.0.0.1:1' });

    // Import by UUID into a fresh directory round-trips to an empty plan.
    const other = workdir({
      'main.tf': config(900),
      'imports.tf': `import {\n  to = gateway_telemetry_config.audit\n  id = "${cid}"\n}\n`,
    });
    expect((await tf(['init', '-input=false', '-no-color'], other)).code).toBe(0);
    const imp = await tf(['apply', '-auto-approve', '-input=false', '-no-color'], other);
    expect(imp.code, imp.out).toBe(0);
    expect(imp.out).toContain('1 imported');

    // A schema violation fails at plan, naming the attribute, and reaches no API.
    const bad = workdir({ 'main.tf': config(86_401) });
    expect((await tf(['init', '-input=false', '-no-color'], bad)).code).toBe(0);
    const v = await tf(['plan', '-input=false', '-no-color'], bad);
    expect(v.code).not.toBe(0);
    expect(v.out).toContain('forward_interval_seconds');

    await g.must(admin('DeleteTelemetryConfig'), { id: cid });
    const gone = await tf(['plan', '-detailed-exitcode', '-input=false', '-no-color']);
    expect(gone.code, gone.out).toBe(2);
    expect(gone.out).toContain('will be created');
    const re = await tf(['apply', '-auto-approve', '-input=false', '-no-color']);
    expect(re.code, re.out).toBe(0);
    const recreated = id();
    expect(recreated).not.toBe(cid);
    const destroy = await tf(['destroy', '-auto-approve', '-input=false', '-no-color']);
    expect(destroy.code, destroy.out).toBe(0);
    expect((await g.call(admin('GetTelemetryConfig'), { id: recreated })).status).toBe(404);
  }, 180_000);
});

/** Rewrites main.tf in place (keeps .terraform and the state). */
const workdirWith = (d: string, mainTf: string): string => {
  writeFileSync(join(d, 'main.tf'), mainTf);
  return d;
};
