import type { CanonicalRequest } from '../canonical/types.ts';
import { invalidRequest } from '../core/errors.ts';

/**
 * For upstreams with no top-k sampling (OpenAI, Azure OpenAI, most OpenAI-compatible servers,
 * Bedrock models other than Anthropic's): a client's `top_k` (Messages `top_k`, Gemini
 * `generationConfig.topK`, Cohere `k`, Converse `additionalModelRequestFields.top_k`) is refused
 * with a 400 naming the client's member and the upstream, never dropped silently.
 */
export const refuseTopK = (r: CanonicalRequest, upstream: string): void => {
  // 0 is "no top-k" (Cohere `k: 0`, Anthropic's disabled value): nothing to honour.
  if (r.topK === undefined || r.topK === 0) return;
  const param = r.topKParam ?? 'top_k';
  throw invalidRequest(
    `'${param}' cannot be honoured by the ${upstream} upstream this model is routed to: it has no top-k sampling. Remove '${param}' or route the model to an upstream that takes it.`,
    param,
  );
};
