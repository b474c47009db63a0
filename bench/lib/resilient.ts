/** The bench customer's project with circuit breakers on (the failing-primary scenario). */
export const RESILIENT_PROJECT = 'resilient';

type Call = (path: string, body: unknown) => Promise<unknown>;

/**
 * The bench customer's circuit-breaker setup: its `default` project turns breakers off (so
 * fallback-json pays the failing primary on every request, as it measures), and the `resilient`
 * project serves `model` from the same two targets — primary answering 503, backup the mock
 * OpenAI — with the default breakers, which bench the primary after its first failures. Returns
 * a key of that project.
 */
export const provisionResilient = async (
  call: Call,
  customerId: string,
  connections: readonly Record<string, string>[],
  modelId: string | undefined,
  model: string,
): Promise<string> => {
  const admin = (op: string, body: unknown) => call(`/admin.v1.AdminService/${op}`, body);
  await admin('UpsertProjectSetting', { customerId, projectId: 'default', settingName: 'circuit-breaker', settingValue: '{"failures":0}' });
  const base = { customerId, projectId: RESILIENT_PROJECT };
  await admin('CreateProject', base);
  for (const c of connections) await admin('CreateProviderConnection', { ...base, ...c });
  await admin('AddProjectModel', { ...base, modelId });
  await admin('CreateRoute', {
    ...base,
    model,
    targets: [
      { connection: 'mock-failing', model: 'gpt-4o-mini', priority: 0, weight: 1 },
      { connection: 'mock-openai', model: 'gpt-4o-mini', priority: 1, weight: 1 },
    ],
  });
  const key = (await call('/apikey.v1.ApiKeyService/CreateApiKey', {
    name: 'resilient',
    userId: 'user-0',
    enterpriseContext: { customerId, projectId: RESILIENT_PROJECT },
  })) as { apiKey: string };
  return key.apiKey;
};
