/**
 * Every OpenAI-compatible upstream the gateway knows, one line each (reference: providers.md §1).
 * A `{name}` in a base URL is filled from the connection's `options.name`; a connection's
 * `baseUrl` always wins (self-hosted servers, mock upstreams in tests).
 */
import type { HttpProviderAdapter } from '../types.ts';
import { createOpenAICompatibleAdapter } from './index.ts';
import type { OpenAICompatibleSpec } from './spec.ts';

export const OPENAI_COMPATIBLE_SPECS: readonly OpenAICompatibleSpec[] = [
  { id: 'groq', defaultBaseUrl: 'https://api.groq.com/openai/v1', auth: 'bearer' },
  { id: 'together', defaultBaseUrl: 'https://api.together.xyz/v1', auth: 'bearer', quirks: { topK: true } },
  { id: 'fireworks', defaultBaseUrl: 'https://api.fireworks.ai/inference/v1', auth: 'bearer', quirks: { topK: true } },
  { id: 'deepseek', defaultBaseUrl: 'https://api.deepseek.com', auth: 'bearer' },
  { id: 'xai', defaultBaseUrl: 'https://api.x.ai/v1', auth: 'bearer' },
  { id: 'perplexity', defaultBaseUrl: 'https://api.perplexity.ai', auth: 'bearer' },
  { id: 'openrouter', defaultBaseUrl: 'https://openrouter.ai/api/v1', auth: 'bearer', quirks: { topK: true } },
  { id: 'cerebras', defaultBaseUrl: 'https://api.cerebras.ai/v1', auth: 'bearer' },
  { id: 'deepinfra', defaultBaseUrl: 'https://api.deepinfra.com/v1/openai', auth: 'bearer' },
  // Mistral rejects unknown body fields (verify) and wants 9-char alphanumeric tool-call ids.
  {
    id: 'mistral',
    defaultBaseUrl: 'https://api.mistral.ai/v1',
    auth: 'bearer',
    quirks: { seedField: 'random_seed', toolCallIds: 'alnum9', omit: ['stream_options', 'user'] },
  },
  { id: 'vllm', defaultBaseUrl: 'http://localhost:8000/v1', auth: 'bearer-optional', quirks: { topK: true } },
  { id: 'ollama-openai', defaultBaseUrl: 'http://localhost:11434/v1', auth: 'none', quirks: { topK: true } },
  { id: 'hf-router', defaultBaseUrl: 'https://router.huggingface.co/v1', auth: 'bearer' },
  { id: 'hf-tgi', defaultBaseUrl: 'https://{host}/v1', auth: 'bearer-optional', quirks: { topK: true } },
  { id: 'cloudflare-workers-ai', defaultBaseUrl: 'https://api.cloudflare.com/client/v4/accounts/{accountId}/ai/v1', auth: 'bearer' },
  { id: 'nvidia-nim', defaultBaseUrl: 'https://integrate.api.nvidia.com/v1', auth: 'bearer-optional' },
  { id: 'sambanova', defaultBaseUrl: 'https://api.sambanova.ai/v1', auth: 'bearer' },
  { id: 'moonshot', defaultBaseUrl: 'https://api.moonshot.ai/v1', auth: 'bearer' },
  { id: 'nebius', defaultBaseUrl: 'https://api.studio.nebius.com/v1', auth: 'bearer' },
  { id: 'novita', defaultBaseUrl: 'https://api.novita.ai/v3/openai', auth: 'bearer' },
  { id: 'lambda', defaultBaseUrl: 'https://api.lambda.ai/v1', auth: 'bearer' },
  { id: 'ai21', defaultBaseUrl: 'https://api.ai21.com/studio/v1', auth: 'bearer' },
  { id: 'databricks', defaultBaseUrl: 'https://{workspaceHost}/serving-endpoints', auth: 'bearer' },
];

export const openAICompatibleAdapters = (): HttpProviderAdapter[] => OPENAI_COMPATIBLE_SPECS.map(createOpenAICompatibleAdapter);
