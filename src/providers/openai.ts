/**
 * OpenAI itself: the baseline of the OpenAI-compatible family. Reasoning models take
 * `max_completion_tokens`; set `options.maxTokensField: "max_completion_tokens"` on the connection.
 * Organization and project headers come from `options.organization` / `options.project`.
 */
import { createOpenAICompatibleAdapter } from './openai-compatible/index.ts';
import type { OpenAICompatibleSpec } from './openai-compatible/spec.ts';

export const OPENAI_SPEC: OpenAICompatibleSpec = { id: 'openai', defaultBaseUrl: 'https://api.openai.com/v1', auth: 'bearer' };

export const openaiAdapter = createOpenAICompatibleAdapter(OPENAI_SPEC);
