/**
 * Azure OpenAI: the OpenAI Chat Completions wire behind deployment URLs.
 *
 * - `baseUrl` is the `…/openai` form (`https://{resource}.openai.azure.com/openai`); without one,
 *   `options.resource` fills the public host.
 * - URL: `{baseUrl}/deployments/{deployment}/chat/completions?api-version={apiVersion}`, where the
 *   deployment is `options.deployments[upstreamModel]` or the upstream model itself and
 *   `apiVersion` defaults to `AZURE_DEFAULT_API_VERSION` (the current GA data-plane version, which
 *   supports `stream_options.include_usage`).
 * - A `baseUrl` ending in `/openai/v1` uses Azure's versionless v1 API instead:
 *   `{baseUrl}/chat/completions`, the deployment as `model`, no `api-version`.
 * - Chat Completions requests are passed through (the client's JSON, the deployment as `model`)
 *   unless the connection sets `options.maxTokensField` (then translated).
 * - Responses requests are sent natively (openai-responses/): `{baseUrl}/responses?api-version=…`
 *   (`options.responsesApiVersion`, default `AZURE_RESPONSES_API_VERSION`), or `{baseUrl}/responses`
 *   with a `/openai/v1` base; the deployment goes in the body's `model`, as Azure documents.
 * - The key goes in `api-key`. Streams (the first chunk with `choices: []` and
 *   `prompt_filter_results`, `finish_reason: content_filter`) and errors are OpenAI's.
 */
import { isRecord, optionHeaders, optionString, setHeader } from '../json.ts';
import { extractOpenAIError } from '../openai-compatible/errors.ts';
import { buildChatCompletionsBody, resolveBaseUrl } from '../openai-compatible/request.ts';
import { parseChatCompletion } from '../openai-compatible/response.ts';
import type { OpenAICompatibleSpec } from '../openai-compatible/spec.ts';
import { createChatCompletionsStreamDecoder } from '../openai-compatible/stream.ts';
import type { JsonObject } from '../../canonical/types.ts';
import { EXTRA_ENDPOINT_PATHS, type HttpProviderAdapter, type PassThrough, type UpstreamTarget } from '../types.ts';
import { mapUpstreamError } from '../upstream-error.ts';
import { createResponsesPassThrough } from '../openai-responses/index.ts';
import { OPENAI_REASONING_MODELS } from '../openai.ts';

export const AZURE_DEFAULT_API_VERSION = '2024-10-21';
/** The Responses API is not in the GA dated versions: `options.responsesApiVersion` overrides this. */
export const AZURE_RESPONSES_API_VERSION = '2025-04-01-preview';

const spec = (id: string): OpenAICompatibleSpec => ({
  id,
  defaultBaseUrl: 'https://{resource}.openai.azure.com/openai',
  auth: 'bearer',
  // Azure's reasoning deployments refuse max_tokens as OpenAI's do (deployments often bear the model's name).
  reasoningModels: { names: OPENAI_REASONING_MODELS },
});

/** `options.deployments[upstreamModel]`, else the upstream model name. */
export const azureDeployment = (target: UpstreamTarget): string => {
  const map = target.connection.options['deployments'];
  const named = isRecord(map) ? map[target.upstreamModel] : undefined;
  return typeof named === 'string' && named !== '' ? named : target.upstreamModel;
};

const azureHeaders = (target: UpstreamTarget): Record<string, string> => {
  const { connection } = target;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (connection.apiKey !== undefined && connection.apiKey !== '') headers['api-key'] = connection.apiKey;
  for (const [k, v] of Object.entries(optionHeaders(connection.options))) setHeader(headers, k, v);
  return headers;
};

export const createAzureOpenAIAdapter = (id = 'azure-openai'): HttpProviderAdapter => {
  const s = spec(id);
  const responses = createResponsesPassThrough(id, (target) => {
    const base = resolveBaseUrl(s, target);
    const version = optionString(target.connection.options, 'responsesApiVersion') ?? AZURE_RESPONSES_API_VERSION;
    const url = /\/openai\/v1$/.test(base) ? `${base}/responses` : `${base}/responses?api-version=${encodeURIComponent(version)}`;
    return { url, headers: azureHeaders(target), model: azureDeployment(target) };
  });
  const chatUrl = (target: UpstreamTarget): string => {
    const base = resolveBaseUrl(s, target);
    if (/\/openai\/v1$/.test(base)) return `${base}/chat/completions`;
    const version = optionString(target.connection.options, 'apiVersion') ?? AZURE_DEFAULT_API_VERSION;
    return `${base}/deployments/${encodeURIComponent(azureDeployment(target))}/chat/completions?api-version=${encodeURIComponent(version)}`;
  };
  // Chat passed through as on OpenAI (the client's JSON, the deployment as `model`, usage asked
  // for on streams); connections with `options.maxTokensField` are translated.
  const chat: PassThrough = {
    build: (body, target, stream) => {
      if (optionString(target.connection.options, 'maxTokensField') !== undefined) return undefined;
      const out: JsonObject = { ...body, model: azureDeployment(target) };
      const headers = azureHeaders(target);
      if (stream) {
        headers['accept'] = 'text/event-stream';
        const so = body.stream_options;
        out.stream_options = isRecord(so) ? { ...so, include_usage: true } : { include_usage: true };
      }
      return { url: chatUrl(target), method: 'POST', headers, body: JSON.stringify(out) };
    },
  };
  return {
    kind: 'http',
    id,
    framing: 'sse',
    buildRequest: (request, target) => {
      const deployment = azureDeployment(target);
      const headers = azureHeaders(target);
      if (request.stream) headers['accept'] = 'text/event-stream';
      const body = buildChatCompletionsBody(s, request, { ...target, upstreamModel: deployment });
      return { url: chatUrl(target), method: 'POST', headers, body: JSON.stringify(body) };
    },
    parseResponse: (body) => parseChatCompletion(id, body),
    parseError: (status, body, headers) => {
      const e = extractOpenAIError(body);
      // A missing deployment is the routed model not existing upstream.
      return mapUpstreamError({
        provider: id,
        status,
        body,
        headers,
        ...e,
        code: e.code === 'DeploymentNotFound' ? 'model_not_found' : e.code,
      });
    },
    createStreamDecoder: () => createChatCompletionsStreamDecoder(id),
    passThrough: { chat, responses },
    buildExtraRequest: (endpoint, body, target) => {
      if (endpoint === 'rerank') return undefined;
      const { connection } = target;
      const base = resolveBaseUrl(s, target);
      const deployment = azureDeployment(target);
      const path = EXTRA_ENDPOINT_PATHS[endpoint];
      const url = /\/openai\/v1$/.test(base)
        ? `${base}${path}`
        : `${base}/deployments/${encodeURIComponent(deployment)}${path}?api-version=${encodeURIComponent(optionString(connection.options, 'apiVersion') ?? AZURE_DEFAULT_API_VERSION)}`;
      return { url, method: 'POST', headers: azureHeaders(target), body: JSON.stringify({ ...body, model: deployment }) };
    },
  };
};

export const azureOpenAIAdapter = createAzureOpenAIAdapter();
