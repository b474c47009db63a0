import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Glob } from 'bun';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Fn, LocalBackend, TerraformLocal, TerraformStack } from 'cdktf';
import { GatewayProvider, McpServer, ProviderConnection, ServiceAccount, secretVariable, Workspace } from '../../iac/index.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { HAVE_TERRAFORM, providerInstalled, terraform } from './support.ts';

/**
 * Issue 46, item 2: no path writes a secret into cdktf.out. `Fn.sensitive("…")`, a TerraformLocal
 * holding the literal (directly or through another local), a string template around a variable, a
 * literal map of a sensitive map argument, and the provider's own `token` are refused at synth and
 * nothing is written; the same shapes built from references synthesize, terraform applies them
 * against a gateway, and neither cdktf.out nor the state holds any of the secrets.
 */

const SECRET = 'sk-guard-literal-9f41';
const TOKEN_SECRET = 'tok-guard-literal-77ab';

/** Every file under a directory (nothing when it does not exist). */
const filesUnder = (dir: string): string[] =>
  existsSync(dir) ? [...new Glob('**/*').scanSync({ cwd: dir, onlyFiles: true, dot: true })].map((f) => join(dir, f)) : [];
/** The files holding any of the secrets (the installed provider binary aside). */
const holding = (dir: string, secrets: string[]): string[] =>
  filesUnder(dir)
    .filter((f) => !f.includes('/.terraform/providers/'))
    .filter((f) => {
      const text = readFileSync(f, 'utf8');
      return secrets.some((s) => text.includes(s));
    });

type Build = (s: TerraformStack) => void;
const connection = (s: TerraformStack, apiKeyWo: string) =>
  new ProviderConnection(s, 'conn', { customerId: 'guard', name: 'up', providerName: 'echo', apiKeyWo, apiKeyWoVersion: 1 });

const BYPASSES: [string, string, Build][] = [
  [
    'Fn.sensitive of a literal',
    'gateway_provider_connection.api_key_wo is an expression with a literal',
    (s) => connection(s, Fn.sensitive(SECRET)),
  ],
  [
    'a TerraformLocal holding the literal',
    'gateway_provider_connection.api_key_wo is local.upstream, which is a literal',
    (s) => connection(s, new TerraformLocal(s, 'upstream', SECRET).asString),
  ],
  [
    'a local of a local of Fn.sensitive of the literal',
    'local.outer, which is local.inner, which is an expression with a literal',
    (s) => connection(s, new TerraformLocal(s, 'outer', new TerraformLocal(s, 'inner', Fn.sensitive(SECRET)).asString).asString),
  ],
  [
    'a string template around a variable',
    'gateway_provider_connection.api_key_wo is a string template with literal text',
    (s) => connection(s, `${SECRET}-${secretVariable(s, 'suffix')}`),
  ],
  [
    'a sensitive map given literal values through a local',
    'gateway_service_account.telemetry_headers is local.headers, which is a literal',
    (s) =>
      new ServiceAccount(s, 'sa', {
        customerId: 'guard',
        workspaceId: 'edge',
        telemetryHeaders: new TerraformLocal(s, 'headers', { authorization: SECRET }).asStringMap,
      }),
  ],
  [
    'the provider token as Fn.sensitive of a literal',
    'provider "gateway".token is an expression with a literal',
    (s) => new GatewayProvider(s, 'gw2', { alias: 'two', token: Fn.sensitive(TOKEN_SECRET) }),
  ],
];

describe('cdktf: a secret that resolves to a literal is refused at synth, and nothing is written', () => {
  for (const [name, message, build] of BYPASSES)
    test(name, () => {
      const outdir = mkdtempSync(join(tmpdir(), 'gw-guard-'));
      const app = new App({ outdir });
      const s = new TerraformStack(app, 'guard');
      new GatewayProvider(s, 'gateway');
      build(s);
      expect(() => app.synth()).toThrow(message);
      expect(holding(outdir, [SECRET, TOKEN_SECRET])).toEqual([]);
    });

  test('literals are refused when the construct is built: the provider token, a sensitive map', () => {
    const s = new TerraformStack(new App({ outdir: mkdtempSync(join(tmpdir(), 'gw-guard-')) }), 'lit');
    expect(() => new GatewayProvider(s, 'gateway', { token: TOKEN_SECRET })).toThrow(
      'provider "gateway".token is a literal: cdktf would write it in plaintext into cdktf.out',
    );
    expect(
      () => new ServiceAccount(s, 'sa', { customerId: 'guard', workspaceId: 'edge', telemetryHeaders: { authorization: SECRET } }),
    ).toThrow('gateway_service_account.telemetry_headers is a literal');
    // The error never repeats the secret.
    try {
      new GatewayProvider(s, 'again', { alias: 'again', token: TOKEN_SECRET });
    } catch (e) {
      expect(String(e)).not.toContain(TOKEN_SECRET);
    }
  });
});

describe.skipIf(!HAVE_TERRAFORM)('cdktf: the same shapes from references synthesize and deploy; no secret in cdktf.out or state', () => {
  let g: TestGateway;
  let rc: string;
  const tmp = mkdtempSync(join(tmpdir(), 'gw-guard-ok-'));

  beforeAll(async () => {
    const [built, gw] = await Promise.all([providerInstalled(), startTestGateway()]);
    rc = built.rc;
    g = gw;
    await g.must(admin('CreateCustomer'), { customerId: 'guard' });
  }, 180_000);
  afterAll(async () => {
    await g?.stop();
  });

  test('Fn.sensitive(variable), locals of variables, the provider token from a variable', async () => {
    const outdir = join(tmp, 'cdktf.out');
    const app = new App({ outdir });
    const s = new TerraformStack(app, 'guardok');
    new LocalBackend(s, { path: join(tmp, 'state.tfstate') });
    new GatewayProvider(s, 'gateway', { token: Fn.sensitive(secretVariable(s, 'gateway_token')) });
    const upstream = secretVariable(s, 'upstream_key');
    connection(s, Fn.sensitive(upstream));
    const viaLocal = new TerraformLocal(s, 'mcp_auth', new TerraformLocal(s, 'mcp_inner', secretVariable(s, 'mcp_key')).asString);
    new McpServer(s, 'mcp', {
      serverId: 'guard-mcp',
      url: 'https://mcp.example.com/mcp',
      authType: 'bearer',
      authValueWo: viaLocal.asString,
      authValueWoVersion: 1,
    });
    const ws = new Workspace(s, 'ws', { customerId: 'guard', workspaceId: 'edge-guard' });
    new ServiceAccount(s, 'sa', {
      customerId: 'guard',
      workspaceId: ws.workspaceId,
      workspaceUuid: ws.id,
      routerKeyWo: upstream,
      routerKeyWoVersion: 1,
    });
    app.synth();
    const secrets = [SECRET, `${SECRET}-mcp`, TOKEN_SECRET];
    expect(holding(outdir, secrets)).toEqual([]);
    const doc = readFileSync(join(outdir, 'stacks/guardok/cdk.tf.json'), 'utf8');
    expect(doc).toContain('"token": "${sensitive(var.gateway_token)}"');
    expect(doc).toContain('"api_key_wo": "${sensitive(var.upstream_key)}"');
    expect(doc).toContain('"auth_value_wo": "${local.mcp_auth}"');

    const env = {
      TF_CLI_CONFIG_FILE: rc,
      GATEWAY_ENDPOINT: g.adminUrl,
      TF_VAR_gateway_token: ADMIN_TOKEN,
      TF_VAR_upstream_key: SECRET,
      TF_VAR_mcp_key: `${SECRET}-mcp`,
    };
    const stackDir = join(outdir, 'stacks/guardok');
    expect((await terraform(stackDir, ['init', '-input=false', '-no-color'], env)).code).toBe(0);
    const applied = await terraform(stackDir, ['apply', '-auto-approve', '-input=false', '-no-color'], env);
    expect(applied.code, applied.out).toBe(0);
    expect(applied.out).not.toContain(SECRET);
    const conn = await g.must(admin('GetProviderConnection'), { customerId: 'guard', projectId: 'default', name: 'up' });
    expect(conn.connection).toMatchObject({ name: 'up' });
    // The provider token and the secrets reach neither cdktf.out (plan files included) nor the state.
    expect(readFileSync(join(tmp, 'state.tfstate'), 'utf8')).toContain('gateway_service_account');
    expect(holding(tmp, [...secrets, ADMIN_TOKEN])).toEqual([]);
    const again = await terraform(stackDir, ['plan', '-detailed-exitcode', '-input=false', '-no-color'], env);
    expect(again.code, again.out).toBe(0);
  }, 180_000);
});
