import { expect, test } from 'bun:test';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, TerraformStack } from 'cdktf';
import {
  ByokKey,
  GatewayProvider,
  McpServer,
  ProviderConnection,
  ServiceAccount,
  secretVariable,
  TelemetryConfig,
} from '../../iac/index.ts';

/**
 * Issue 30, defect 4: the documented cdktf path (a sensitive variable into the write-only form)
 * never synthesizes a secret into cdktf.out, and a literal secret is refused at construction —
 * for every resource with a secret argument.
 */

const SECRET = 'sk-literal-secret-5b3d';

test('secrets from sensitive variables: the synthesized JSON holds ${var.…}, never the value', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'gw-synth-'));
  const app = new App({ outdir });
  const s = new TerraformStack(app, 'secrets');
  new GatewayProvider(s, 'gateway');
  const key = secretVariable(s, 'upstream_key');
  new ProviderConnection(s, 'conn', { customerId: 'acme', name: 'up', providerName: 'openai', apiKeyWo: key, apiKeyWoVersion: 1 });
  new TelemetryConfig(s, 'tel', {
    userId: 'ops',
    telemetryType: 'logs',
    sinkUrl: 'https://otel.example.com',
    protocol: 'http/json',
    authType: 'bearer',
    authValueWo: key,
    authValueWoVersion: 1,
  });
  new ByokKey(s, 'byok', {
    customerId: 'acme',
    projectId: 'default',
    providerName: 'PROVIDER_OPENAI',
    name: 'team',
    secretWo: key,
    secretWoVersion: 1,
  });
  new ServiceAccount(s, 'sa', { customerId: 'acme', workspaceId: 'edge', routerKeyWo: key, routerKeyWoVersion: 1 });
  new McpServer(s, 'mcp', { serverId: 'gh', url: 'https://mcp.example.com', authType: 'bearer', authValueWo: key, authValueWoVersion: 1 });
  app.synth();
  const json = readFileSync(join(outdir, 'stacks/secrets/cdk.tf.json'), 'utf8');
  const doc = JSON.parse(json) as {
    variable: Record<string, { sensitive: boolean }>;
    resource: Record<string, Record<string, Record<string, unknown>>>;
  };
  expect(doc.variable.upstream_key?.sensitive).toBe(true);
  expect(doc.resource.gateway_provider_connection?.conn?.api_key_wo).toBe('${var.upstream_key}');
  expect(doc.resource.gateway_telemetry_config?.tel?.auth_value_wo).toBe('${var.upstream_key}');
  expect(doc.resource.gateway_byok_key?.byok?.secret_wo).toBe('${var.upstream_key}');
  expect(doc.resource.gateway_service_account?.sa?.router_key_wo).toBe('${var.upstream_key}');
  expect(doc.resource.gateway_mcp_server?.mcp?.auth_value_wo).toBe('${var.upstream_key}');
});

test('a literal secret is refused when the construct is built (it would land in cdktf.out)', () => {
  const s = new TerraformStack(new App({ outdir: mkdtempSync(join(tmpdir(), 'gw-synth-')) }), 'literal');
  const cases: [string, () => unknown][] = [
    [
      'gateway_provider_connection.api_key_wo',
      () => new ProviderConnection(s, 'a', { customerId: 'acme', name: 'a', providerName: 'openai', apiKeyWo: SECRET, apiKeyWoVersion: 1 }),
    ],
    [
      'gateway_provider_connection.api_key',
      () => new ProviderConnection(s, 'b', { customerId: 'acme', name: 'b', providerName: 'openai', apiKey: SECRET }),
    ],
    [
      'gateway_telemetry_config.auth_value',
      () =>
        new TelemetryConfig(s, 'c', {
          userId: 'ops',
          telemetryType: 'logs',
          sinkUrl: 'https://o.example.com',
          protocol: 'grpc',
          authType: 'bearer',
          authValue: SECRET,
        }),
    ],
    [
      'gateway_byok_key.secret',
      () => new ByokKey(s, 'd', { customerId: 'acme', projectId: 'default', providerName: 'PROVIDER_OPENAI', name: 'd', secret: SECRET }),
    ],
    [
      'gateway_service_account.router_key',
      () => new ServiceAccount(s, 'e', { customerId: 'acme', workspaceId: 'edge', routerKey: SECRET }),
    ],
  ];
  for (const [attr, build] of cases) expect(build, attr).toThrow(`${attr} is a literal: cdktf would write it in plaintext into cdktf.out`);
});
