import { callInfo } from './control-plane/audit-record.ts';
import type { OpDef } from './control-plane/connect.ts';

export interface DemoSeed {
  apiKey: string;
  curl: (inferenceUrl: string) => string;
}

/**
 * First start with an empty embedded database: a demo customer and project, an `echo` model on the
 * built-in echo provider, a route and an API key — through the same operations the API exposes.
 */
export const seedDemo = async (ops: readonly OpDef[]): Promise<DemoSeed> => {
  const call = async (name: string, input: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const def = ops.find((o) => o.name === name);
    if (!def) throw new Error(`demo seeding needs the ${name} operation`);
    const request = new Request(`http://localhost/${def.service}/${name}`, {
      method: 'POST',
      headers: { 'user-agent': 'gateway demo seed' },
    });
    // The gateway seeds itself: audited with actorType system.
    return (await def.handler(input as never, { principal: { kind: 'system' }, request, call: callInfo(request) })) as Record<
      string,
      unknown
    >;
  };
  await call('CreateCustomer', { customerId: 'demo', name: 'Demo customer', labels: {} });
  const created = await call('CreateModel', {
    model: 'echo',
    provider: 'echo',
    mode: 'chat',
    capabilities: ['chat', 'tools'],
    contextWindow: 8192,
    maxOutputTokens: 4096,
    inputPricePerMillion: 1,
    outputPricePerMillion: 2,
  });
  const model = created.model as { id: string };
  await call('AddProjectModel', { customerId: 'demo', projectId: 'default', modelId: model.id });
  await call('CreateProviderConnection', { customerId: 'demo', projectId: 'default', name: 'echo', provider: 'echo' });
  await call('CreateRoute', { customerId: 'demo', projectId: 'default', model: 'echo', targets: [{ connection: 'echo', model: 'echo' }] });
  const key = await call('CreateApiKey', {
    name: 'demo',
    userId: 'demo-user',
    enterpriseContext: { customerId: 'demo', projectId: 'default' },
  });
  const apiKey = String(key.apiKey);
  return {
    apiKey,
    curl: (url) =>
      `curl -s ${url}/v1/chat/completions -H 'Authorization: Bearer ${apiKey}' -H 'Content-Type: application/json' -d '{"model":"echo","messages":[{"role":"user","content":"Hello, gateway!"}]}'`,
  };
};
