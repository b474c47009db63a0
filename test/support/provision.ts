import { admin, apikeyOp, startTestGateway, type TestGateway } from './gateway.ts';
import { type MockUpstream, startMockUpstream } from './mock-upstreams.ts';

export interface Provisioned {
  apiKey: string;
  keyId: string;
  models: Record<string, string>;
}

export interface ProvisionOptions {
  customerId?: string;
  projectId?: string;
  openaiUrl: string;
  anthropicUrl: string;
}

/**
 * A customer with two public models: `gpt-mini` routed to the mock OpenAI upstream and
 * `claude-mini` routed to the mock Anthropic upstream, and an API key for the project.
 */
export const provision = async (tg: TestGateway, o: ProvisionOptions): Promise<Provisioned> => {
  const customerId = o.customerId ?? 'acme';
  const projectId = o.projectId ?? 'default';
  await tg.must(admin('CreateCustomer'), { customerId, name: 'Acme' });
  if (projectId !== 'default') await tg.must(admin('CreateProject'), { customerId, projectId });
  const models: Record<string, string> = {};
  for (const [model, provider, upstream] of [
    ['gpt-mini', 'openai', 'gpt-4o-mini'],
    ['claude-mini', 'anthropic', 'claude-haiku-4-5'],
  ] as const) {
    const created = (await tg.must(admin('CreateModel'), {
      model,
      provider,
      mode: 'chat',
      capabilities: ['chat', 'tools', 'vision'],
      contextWindow: 128000,
      maxOutputTokens: 16384,
      inputPricePerMillion: 0.15,
      outputPricePerMillion: 0.6,
      cachedPricePerMillion: 0.075,
    })) as { model: { id: string } };
    models[model] = created.model.id;
    await tg.must(admin('AddProjectModel'), { customerId, projectId, modelId: created.model.id });
    await tg.must(admin('CreateProviderConnection'), {
      customerId,
      projectId,
      name: `mock-${provider}`,
      provider,
      baseUrl: provider === 'openai' ? `${o.openaiUrl}/v1` : o.anthropicUrl,
      apiKey: provider === 'openai' ? 'sk-upstream-openai-secret' : 'sk-ant-upstream-secret',
    });
    await tg.must(admin('CreateRoute'), { customerId, projectId, model, targets: [{ connection: `mock-${provider}`, model: upstream }] });
  }
  const key = (await tg.must(apikeyOp('CreateApiKey'), { name: 'test', userId: 'u1', enterpriseContext: { customerId, projectId } })) as {
    apiKey: string;
    id: string;
  };
  return { apiKey: key.apiKey, keyId: key.id, models };
};

export interface World {
  tg: TestGateway;
  oa: MockUpstream;
  an: MockUpstream;
  p: Provisioned;
}

/** Mock OpenAI and Anthropic upstreams, a running gateway, and the `acme` customer provisioned. */
export const startWorld = async (env: Record<string, string> = {}): Promise<World> => {
  const oa = startMockUpstream('openai');
  const an = startMockUpstream('anthropic');
  const tg = await startTestGateway(env);
  const p = await provision(tg, { openaiUrl: oa.url, anthropicUrl: an.url });
  return { tg, oa, an, p };
};

export const stopWorld = async (w: World | undefined): Promise<void> => {
  if (!w) return;
  await w.tg.stop();
  w.oa.stop();
  w.an.stop();
};
