/**
 * The inference listener's endpoints as the OpenAPI document names them (contract §2, §7, §11).
 * They are served by `Bun.serve`'s own route table (data-plane/server.ts), not by Elysia: mounted
 * as Elysia routes they cost 4.3 µs more per request than the 3 µs budget allows
 * (`bun bench/framework-floor.ts`), so the management listener's document lists them from here.
 * The route table `satisfies` a record keyed by exactly these paths (`InferenceRoute`), so the two
 * cannot drift; test/openapi-inference.test.ts checks the document and that every method is served.
 */

const METHODS = ['get', 'post', 'delete'] as const;
type Method = (typeof METHODS)[number];

/** What a request and its answer are, in words: the bodies are the upstream API's own. */
interface Operation {
  summary: string;
  /** The API whose request and response bodies this endpoint speaks (by reference; not re-described here). */
  body?: 'chat' | 'responses' | 'messages' | 'openai' | 'multipart' | 'jsonrpc' | 'a2arest' | 'gemini' | 'converse' | 'cohere';
  /** The answer may be a stream of server-sent events (`stream: true`). */
  streams?: boolean;
  /** The OpenAPI path of a route with a wildcard (`/model/*` → `/model/{modelId}/{operation}`). */
  path?: string;
}

export const INFERENCE_ENDPOINTS = {
  '/v1/chat/completions': { post: { summary: 'Chat Completions (OpenAI format), any routed model', body: 'chat', streams: true } },
  '/v1/responses': { post: { summary: 'Responses (OpenAI format); `store` defaults to true', body: 'responses', streams: true } },
  '/v1/messages': { post: { summary: 'Messages (Anthropic format); also `x-api-key`', body: 'messages', streams: true } },
  '/v1/messages/count_tokens': { post: { summary: 'Count the input tokens of a Messages request', body: 'messages' } },
  '/v1/responses/input_tokens': { post: { summary: 'Count the input tokens of a Responses request', body: 'responses' } },
  '/v1/responses/:id': { get: { summary: 'A stored response' }, delete: { summary: 'Delete a stored response' } },
  '/v1/responses/:id/input_items': { get: { summary: "A stored response's input items" } },
  '/v1/responses/:id/cancel': { post: { summary: 'Cancel a background response' } },
  '/v1/conversations': { post: { summary: 'Create a conversation', body: 'openai' } },
  '/v1/conversations/:id': {
    get: { summary: 'A conversation' },
    post: { summary: "Update a conversation's metadata", body: 'openai' },
    delete: { summary: 'Delete a conversation' },
  },
  '/v1/conversations/:id/items': { get: { summary: "A conversation's items" }, post: { summary: 'Add items', body: 'openai' } },
  '/v1/conversations/:id/items/:itemId': { get: { summary: 'One item' }, delete: { summary: 'Delete an item' } },
  '/v1/models': { get: { summary: "The models the key's project may call" } },
  '/v1/files': { get: { summary: 'Files of the project' }, post: { summary: 'Upload a file (batch input)', body: 'multipart' } },
  '/v1/files/:id': { get: { summary: 'A file' }, delete: { summary: 'Delete a file' } },
  '/v1/files/:id/content': { get: { summary: "A file's content" } },
  '/v1/batches': { get: { summary: 'Batches of the project' }, post: { summary: 'Create a batch', body: 'openai' } },
  '/v1/batches/:id': { get: { summary: 'A batch' } },
  '/v1/batches/:id/cancel': { post: { summary: 'Cancel a batch' } },
  '/v1/completions': { post: { summary: 'Legacy completions (OpenAI format)', body: 'openai', streams: true } },
  '/v1/embeddings': { post: { summary: 'Embeddings (OpenAI format)', body: 'openai' } },
  '/v1/images/generations': { post: { summary: 'Image generation (OpenAI format)', body: 'openai' } },
  '/v1/images': { post: { summary: 'Image generation (alias of /v1/images/generations)', body: 'openai' } },
  '/v1/audio/speech': { post: { summary: 'Text to speech (OpenAI format)', body: 'openai' } },
  '/v1/rerank': { post: { summary: 'Rerank (Cohere format)', body: 'openai' } },
  '/v1/audio/transcriptions': { post: { summary: 'Not supported: answers 400 `unsupported_endpoint`', body: 'multipart' } },
  '/mcp/:profileId': {
    post: { summary: 'MCP Streamable HTTP: a JSON-RPC message to the profile', body: 'jsonrpc', streams: true },
    get: { summary: 'MCP Streamable HTTP: the server-to-client stream of a session', streams: true },
    delete: { summary: 'MCP Streamable HTTP: end a session' },
  },
  '/healthz': { get: { summary: 'Liveness' } },
  '/readyz': { get: { summary: 'Readiness: a configuration is served' } },
  '/.well-known/oauth-protected-resource/mcp/:profileId': {
    get: { summary: 'RFC 9728 protected-resource metadata of an MCP profile (no authentication)' },
  },
  '/v1beta/models/*': {
    post: {
      summary: 'Gemini `{model}:generateContent`, `:streamGenerateContent` (`?alt=sse`), `:countTokens`',
      body: 'gemini',
      streams: true,
      path: '/v1beta/models/{modelMethod}',
    },
  },
  '/v1/models/*': {
    get: {
      summary: "OpenAI `GET /v1/models/{id}`: one of the key's models (as `/v1/models` lists it), else 404 `model_not_found`",
      path: '/v1/models/{modelMethod}',
    },
    post: {
      summary: 'Gemini methods under the SDK’s `v1` API version (as `/v1beta/models/…`)',
      body: 'gemini',
      streams: true,
      path: '/v1/models/{modelMethod}',
    },
  },
  '/model/*': {
    post: {
      summary: 'Bedrock `converse` and `converse-stream` (AWS event-stream framing)',
      body: 'converse',
      streams: true,
      path: '/model/{modelId}/{operation}',
    },
  },
  '/v2/chat': { post: { summary: 'Cohere v2 chat', body: 'cohere', streams: true } },
  '/a2a/:agentId': {
    post: {
      summary: 'A2A JSON-RPC to a catalog agent (SendMessage, SendStreamingMessage, GetTask, CancelTask, …)',
      body: 'jsonrpc',
      streams: true,
    },
  },
  '/a2a/:agentId/v1/*': {
    get: {
      summary: 'A2A HTTP+JSON to a catalog agent: GET tasks, tasks/{id} (when its card lists HTTP+JSON)',
      path: '/a2a/{agentId}/v1/{operation}',
    },
    post: {
      summary: 'A2A HTTP+JSON to a catalog agent: message:send, message:stream, tasks/{id}:cancel, tasks/{id}:subscribe',
      body: 'a2arest',
      streams: true,
      path: '/a2a/{agentId}/v1/{operation}',
    },
  },
  '/a2a/:agentId/.well-known/agent-card.json': {
    get: { summary: "The agent's card as the gateway serves it (URLs and security rewritten)" },
  },
} as const satisfies Readonly<Record<string, Partial<Record<Method, Operation>>>>;

/** The route table's keys (Bun's syntax): data-plane/server.ts's table `satisfies` a record of exactly these (tsc holds the two to the same paths). */
export type InferenceRoute = keyof typeof INFERENCE_ENDPOINTS;

const REFERENCE: Record<NonNullable<Operation['body']>, string> = {
  chat: 'The OpenAI Chat Completions request, exactly as the OpenAI API takes it.',
  responses: 'The OpenAI Responses request, exactly as the OpenAI API takes it.',
  messages: 'The Anthropic Messages request, exactly as the Anthropic API takes it.',
  openai: "The request of the OpenAI API's endpoint of the same path.",
  multipart: 'multipart/form-data, as the OpenAI API takes it.',
  a2arest:
    "An A2A v1.0 HTTP+JSON request body (SendMessageRequest for message:send and message:stream), as the agent's own HTTP+JSON interface takes it.",
  jsonrpc: 'A JSON-RPC 2.0 message (the Model Context Protocol on /mcp, the Agent2Agent protocol on /a2a).',
  gemini: 'The Gemini API request (`generateContent`, `countTokens`), exactly as Google’s API takes it.',
  converse: 'The Bedrock Converse request, exactly as the Bedrock runtime takes it.',
  cohere: 'The Cohere v2 chat request, exactly as Cohere’s API takes it.',
};

/** The OpenAPI tag of the inference listener's endpoints (the management operations carry none of it). */
export const INFERENCE_TAG = 'Inference (inference listener)';

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

const ERROR: Json = {
  description: 'An error: `{error: {message, type, param, code}}` in the format of the endpoint (Messages: Anthropic’s)',
  content: { 'application/json': { schema: { type: 'object' } } },
};

const operation = (path: string, method: Method, op: Operation): Json => {
  const answer: Record<string, Json> = { 'application/json': { schema: { type: 'object' } } };
  if (op.streams) answer['text/event-stream'] = { schema: { type: 'string' } };
  const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1] ?? '',
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  return {
    tags: [INFERENCE_TAG],
    operationId: `inference_${method}${path.replace(/[^A-Za-z0-9]+/g, '_')}`,
    summary: op.summary,
    description:
      'Served on the inference listener (`GATEWAY_PORT`, a data plane), not on this management listener. Authentication: `Authorization: Bearer sk-…` (an API key) or a user token. Every answer carries `X-Request-ID`.',
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: true,
            description: REFERENCE[op.body],
            content: { [op.body === 'multipart' ? 'multipart/form-data' : 'application/json']: { schema: { type: 'object' } } },
          },
        }
      : {}),
    responses: { '200': { description: 'The answer of the endpoint', content: answer }, '4XX': ERROR, '5XX': ERROR },
  };
};

/** The OpenAPI path items of the inference listener, for the management listener's document. */
export const inferencePaths = (): Record<string, Record<string, Json>> => {
  const out: Record<string, Record<string, Json>> = {};
  for (const [route, ops] of Object.entries(INFERENCE_ENDPOINTS) as [string, Partial<Record<Method, Operation>>][])
    for (const method of METHODS) {
      const op = ops[method];
      if (!op) continue;
      const path = op.path ?? route.replace(/:(\w+)/g, '{$1}');
      out[path] = { ...out[path], [method]: operation(path, method, op) };
    }
  return out;
};
