/**
 * The OpenTelemetry GenAI names (contract §8) the gateway's spans and metrics use, free of the SDK:
 * `gen_ai.operation.name` per endpoint and `gen_ai.provider.name` per provider adapter.
 */

const OPERATIONS: Readonly<Record<string, string>> = {
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'chat',
  '/v1/messages': 'chat',
  '/v1/embeddings': 'embeddings',
  '/v1/completions': 'text_completion',
  '/v1/images/generations': 'image_generation',
  '/v1/images': 'image_generation',
  '/v1/audio/speech': 'text_to_speech',
  '/v1/rerank': 'rerank',
};

/** The operation of an endpoint that is no GenAI operation (`/v1/models`, count-tokens, stored responses, files…). */
export const OTHER_OPERATION = 'other';

/** `gen_ai.operation.name` of an inference endpoint (`chat`, `embeddings`, …); MCP tool calls are `execute_tool`. */
export const operationOf = (endpoint: string, mcpMethod?: string): string => {
  if (mcpMethod !== undefined) return mcpMethod === 'tools/call' ? 'execute_tool' : mcpMethod;
  return OPERATIONS[endpoint] ?? OTHER_OPERATION;
};

/** Adapter ids whose GenAI provider name differs from the id. */
const PROVIDERS: Readonly<Record<string, string>> = {
  'azure-openai': 'azure.ai.openai',
  bedrock: 'aws.bedrock',
  vertex: 'gcp.vertex_ai',
  gemini: 'gcp.gemini',
  watsonx: 'ibm.watsonx.ai',
  mistral: 'mistral_ai',
  xai: 'x_ai',
};

/** `gen_ai.provider.name` of a provider adapter id (bounded: adapter ids are fixed in code). */
export const providerNameOf = (adapterId: string): string => PROVIDERS[adapterId] ?? adapterId;

/**
 * The `gateway_api` label of `gateway_requests_total` (contract §17): which client API a request
 * spoke, so Chat Completions and Messages traffic (both `chat`) tell apart. Bounded: paths not
 * listed are `other`; an MCP call is `mcp` (an A2A call is `a2a`: telemetry/metrics-observer.ts).
 */
const APIS: Readonly<Record<string, string>> = {
  '/v1/chat/completions': 'chat_completions',
  '/v1/responses': 'responses',
  '/v1/messages': 'messages',
  '/v1/messages/count_tokens': 'messages_count_tokens',
  '/v1/responses/input_tokens': 'responses_input_tokens',
  '/v1/embeddings': 'embeddings',
  '/v1/completions': 'completions',
  '/v1/images/generations': 'images',
  '/v1/images': 'images',
  '/v1/audio/speech': 'audio_speech',
  '/v1/rerank': 'rerank',
  '/v1/models': 'models',
  '/v1/models/{id}': 'models',
};

/** `gateway_api` of a request's endpoint (`mcp` for an MCP call). */
export const apiOf = (endpoint: string, mcp: boolean): string => (mcp ? 'mcp' : (APIS[endpoint] ?? OTHER_OPERATION));
