import { admin } from './gateway.ts';
import type { Recorded } from './mock-upstreams.ts';
import type { World } from './provision.ts';

/**
 * For the client-format SDK suites (Gemini, Converse, Cohere): the world's OpenAI and Anthropic
 * mocks plus a mock of the format's own provider, with a connection, a model and a route to it in
 * the `acme` default project — so each SDK is tried translated and same-format.
 */
export interface NativeUpstream {
  /** The mock's base URL as the connection names it, and its recorded requests. */
  baseUrl: string;
  requests: readonly Recorded[];
  provider: string;
  connection: string;
  apiKey: string;
  options?: Record<string, string>;
  /** The gateway model, and the upstream model its route sends. */
  model: string;
  upstreamModel: string;
}

export const addNativeUpstream = async (w: World, n: NativeUpstream): Promise<void> => {
  const scope = { customerId: 'acme', projectId: 'default' };
  await w.tg.must(admin('CreateProviderConnection'), {
    ...scope,
    name: n.connection,
    provider: n.provider,
    baseUrl: n.baseUrl,
    apiKey: n.apiKey,
    ...(n.options ? { options: n.options } : {}),
  });
  const m = (await w.tg.must(admin('CreateModel'), {
    model: n.model,
    provider: n.provider,
    capabilities: ['chat', 'tools'],
    maxOutputTokens: 8192,
  })) as { model: { id: string } };
  await w.tg.must(admin('AddProjectModel'), { ...scope, modelId: m.model.id });
  await w.tg.must(admin('CreateRoute'), { ...scope, model: n.model, targets: [{ connection: n.connection, model: n.upstreamModel }] });
};

/** The three upstream families each SDK is tried against: two translated, its own passed through. */
export const upstreamsOf = (model: string, family: string) =>
  [
    { model: 'gpt-mini', family: 'openai' },
    { model: 'claude-mini', family: 'anthropic' },
    { model, family },
  ] as const;

/** The last request that reached the upstream of `family` (the world's mocks, else the native one). */
export const lastSentTo = (w: World, native: NativeUpstream, family: string): Recorded => {
  const list = family === 'openai' ? w.oa.requests : family === 'anthropic' ? w.an.requests : native.requests;
  const r = list.at(-1);
  if (!r) throw new Error('nothing reached the upstream');
  return r;
};
