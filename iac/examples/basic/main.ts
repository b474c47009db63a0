import { App, LocalBackend, TerraformOutput, TerraformStack } from 'cdktf';
import type { Construct } from 'constructs';
import { Customer, GatewayProject, GatewayProvider, Model, secretVariable, Targets } from '../../index.ts';

/**
 * A customer, a project with two provider connections, a route with a backup target and an
 * inference key. Endpoint and token come from GATEWAY_ENDPOINT / GATEWAY_TOKEN; the knobs below
 * from the environment so the same file runs against OpenAI or the built-in `echo` provider.
 * The upstream keys are sensitive variables (TF_VAR_upstream_api_key, TF_VAR_upstream_backup_api_key)
 * fed to the write-only `api_key_wo`: neither cdktf.out nor the state ever holds them.
 */
const env = (k: string, d: string): string => process.env[k] ?? d;

class GatewayStack extends TerraformStack {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    if (process.env.EXAMPLE_STATE) new LocalBackend(this, { path: process.env.EXAMPLE_STATE });
    new GatewayProvider(this, 'gateway');

    const provider = env('EXAMPLE_PROVIDER', 'openai');
    const customer = new Customer(this, 'customer', { customerId: env('EXAMPLE_CUSTOMER', 'acme'), name: 'Acme Inc.' });
    const model = new Model(this, 'model', {
      model: env('EXAMPLE_MODEL', 'gpt-4o-mini'),
      providerName: provider,
      capabilities: ['chat', 'tools'],
      inputPricePerMillion: 0.15,
      outputPricePerMillion: 0.6,
    });

    const web = new GatewayProject(this, 'web', {
      customerId: customer.customerId,
      projectId: 'web',
      description: 'the web shop',
      modelIds: [model.id],
      connections: {
        primary: { providerName: provider, apiKeyWo: secretVariable(this, 'upstream_api_key'), apiKeyWoVersion: 1 },
        backup: { providerName: provider, apiKeyWo: secretVariable(this, 'upstream_backup_api_key'), apiKeyWoVersion: 1 },
      },
      routes: {
        [env('EXAMPLE_MODEL', 'gpt-4o-mini')]: {
          targets: Targets.splitWithFallback(
            [{ connection: 'primary', model: env('UPSTREAM_MODEL', 'gpt-4o-mini'), weight: Number(env('PRIMARY_WEIGHT', '1')) }],
            {
              connection: 'backup',
              model: env('UPSTREAM_MODEL', 'gpt-4o-mini'),
            },
          ),
          dependsOn: [model],
        },
      },
      keys: { app: { scopes: ['inference'] } },
    });
    new TerraformOutput(this, 'api_key', { value: web.keys.app?.key, sensitive: true });
  }
}

const app = new App();
new GatewayStack(app, 'gateway-example');
app.synth();
