import { connectError } from '../core/errors.ts';

/**
 * The upstream provider (adapter) ids, as API data: the management API and the Terraform
 * provider's plan-time check refuse any other name with the same function. The adapter registry
 * (src/providers/registry.ts) refuses to load when its adapters and this list differ.
 */
export const PROVIDER_IDS = [
  'ai21',
  'anthropic',
  'azure-openai',
  'bedrock',
  'cerebras',
  'cloudflare-workers-ai',
  'cohere',
  'databricks',
  'deepinfra',
  'deepseek',
  'echo',
  'fireworks',
  'gemini',
  'groq',
  'hf-router',
  'hf-tgi',
  'lambda',
  'mistral',
  'moonshot',
  'nebius',
  'novita',
  'nvidia-nim',
  'ollama',
  'ollama-openai',
  'openai',
  'openrouter',
  'perplexity',
  'sambanova',
  'together',
  'vertex',
  'vllm',
  'watsonx',
  'xai',
] as const;

const KNOWN: ReadonlySet<string> = new Set(PROVIDER_IDS);

/** `invalid_argument` naming `field` unless `name` is a provider id; the message lists the ids. */
export const checkProviderName = (field: string, name: string): void => {
  if (!KNOWN.has(name))
    throw connectError(
      'invalid_argument',
      `invalid field '${field}': unknown provider '${name}'; one of: ${PROVIDER_IDS.join(', ')}`,
      field,
    );
};
