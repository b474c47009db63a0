/**
 * OpenAI itself: the baseline of the OpenAI-compatible family. Reasoning models take
 * `max_completion_tokens` (a translated request to one gets it: `reasoningModels`); a connection's
 * `options.maxTokensField` sets the field for every model. Organization and project headers come
 * from `options.organization` / `options.project`.
 */
import { createOpenAICompatibleAdapter } from './openai-compatible/index.ts';
import type { OpenAICompatibleSpec } from './openai-compatible/spec.ts';

/** OpenAI's reasoning model names: o1, o3, o4-mini…, gpt-5 and its sizes (not gpt-5-chat). */
export const OPENAI_REASONING_MODELS = /^(o\d|gpt-5(?!-chat))/;

export const OPENAI_SPEC: OpenAICompatibleSpec = {
  id: 'openai',
  defaultBaseUrl: 'https://api.openai.com/v1',
  auth: 'bearer',
  reasoningModels: { names: OPENAI_REASONING_MODELS },
};

export const openaiAdapter = createOpenAICompatibleAdapter(OPENAI_SPEC);
