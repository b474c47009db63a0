/** Every provider adapter by id. Adding an OpenAI-compatible upstream is one line in its catalog. */
import { anthropicAdapter } from './anthropic/index.ts';
import { azureOpenAIAdapter } from './azure/index.ts';
import { bedrockAdapter } from './bedrock/index.ts';
import { cohereAdapter } from './cohere/index.ts';
import { echoAdapter } from './echo.ts';
import { geminiAdapter } from './gemini/index.ts';
import { ollamaAdapter } from './ollama/index.ts';
import { openaiAdapter } from './openai.ts';
import { openAICompatibleAdapters } from './openai-compatible/catalog.ts';
import { PROVIDER_IDS } from '../api/providers.ts';
import type { ProviderAdapter } from './types.ts';
import { vertexAdapter } from './vertex/index.ts';
import { watsonxAdapter } from './watsonx/index.ts';

const adapters = new Map<string, ProviderAdapter>();
for (const a of [
  openaiAdapter,
  anthropicAdapter,
  echoAdapter,
  azureOpenAIAdapter,
  geminiAdapter,
  vertexAdapter,
  bedrockAdapter,
  cohereAdapter,
  ollamaAdapter,
  watsonxAdapter,
  ...openAICompatibleAdapters(),
]) {
  if (adapters.has(a.id)) throw new Error(`duplicate provider adapter id '${a.id}'`);
  adapters.set(a.id, a);
}

{
  const ids = [...adapters.keys()].sort().join(',');
  if (ids !== [...PROVIDER_IDS].sort().join(','))
    throw new Error(`provider adapters (${ids}) differ from src/api/providers.ts PROVIDER_IDS`);
}

export const getAdapter = (id: string): ProviderAdapter | undefined => adapters.get(id);

export const listProviderIds = (): string[] => [...adapters.keys()].sort();
