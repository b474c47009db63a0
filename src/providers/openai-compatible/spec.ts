/** What distinguishes one OpenAI-compatible upstream from another. Data, not code. */

export type OpenAICompatibleAuth = 'bearer' | 'none' | 'bearer-optional';

export interface OpenAICompatibleQuirks {
  /** Default field for the output limit; `options.maxTokensField` on the connection overrides it. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Mistral calls the seed `random_seed`. */
  seedField?: 'seed' | 'random_seed';
  /** Mistral only accepts tool-call ids of exactly 9 characters [a-zA-Z0-9]; others are rewritten. */
  toolCallIds?: 'alnum9';
  /** The upstream accepts `top_k` (vLLM and most open-model servers). */
  topK?: boolean;
  /** Top-level body fields the upstream rejects; removed after mapping (none a client's request depends on). */
  omit?: readonly string[];
  /** The upstream takes no reasoning setting: a request asking for one is refused (400 naming the client's field), never sent without it. */
  noReasoning?: boolean;
}

export interface OpenAICompatibleSpec {
  id: string;
  /**
   * Public default base URL (the `…/v1` form). `{name}` placeholders are filled from the
   * connection's `options.name` (e.g. Cloudflare's `{accountId}`); a connection `baseUrl` wins.
   */
  defaultBaseUrl: string;
  auth: OpenAICompatibleAuth;
  quirks?: OpenAICompatibleQuirks;
  /**
   * OpenAI's reasoning models (o-series, gpt-5) refuse `max_tokens` and take `max_completion_tokens`.
   * With this set, a translated request to a reasoning model — its catalog entry has the `reasoning`
   * capability, the request asks for reasoning, or its upstream name matches `names` — carries its
   * limit as `max_completion_tokens`, unless the connection's `options.maxTokensField` says otherwise.
   */
  reasoningModels?: { names: RegExp };
}
