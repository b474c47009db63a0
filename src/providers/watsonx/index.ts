/**
 * IBM watsonx.ai chat (`{baseUrl}/text/chat?version=…`, `/text/chat_stream?version=…`).
 *
 * - `baseUrl` is the `…/ml/v1` form; the default is `https://{options.region ?? 'us-south'}.ml.cloud.ibm.com/ml/v1`.
 * - The body is OpenAI-like with `model_id`, `project_id` or `space_id` (`options.projectId` /
 *   `options.spaceId`, one required), `tool_choice_option` for string choices and `tool_choice`
 *   for a named function; there are no `stream`/`stream_options` fields (the path streams).
 * - `version` is `options.apiVersion` or `WATSONX_DEFAULT_VERSION`.
 * - The connection key is an IBM Cloud API key, exchanged in `authorize` for an IAM bearer token
 *   at `options.iamUrl` (default IBM's), cached until a minute before it expires.
 * - Answers are OpenAI chat completions (`model_id` for `model`); errors are
 *   `{errors:[{code,message}], trace, status_code}`.
 */
import type { CanonicalResponse } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import {
  asArray,
  asNumber,
  asRecord,
  asString,
  isRecord,
  optionHeaders,
  optionString,
  parseJson,
  setHeader,
  trimTrailingSlash,
  type UnknownRecord,
} from '../json.ts';
import { buildChatCompletionsBody } from '../openai-compatible/request.ts';
import { parseChatCompletion } from '../openai-compatible/response.ts';
import type { OpenAICompatibleSpec } from '../openai-compatible/spec.ts';
import { createChatCompletionsStreamDecoder } from '../openai-compatible/stream.ts';
import { formBody, TokenCache, tokenExchangeFailed, tokenHost, unreachable, type AccessToken } from '../token-cache.ts';
import type { HttpProviderAdapter, StreamDecoder, TokenHttp, UpstreamTarget } from '../types.ts';
import { badGateway, mapInStreamError, mapUpstreamError, providerMisconfigured } from '../upstream-error.ts';

export const WATSONX_DEFAULT_VERSION = '2024-10-08';
export const WATSONX_DEFAULT_IAM_URL = 'https://iam.cloud.ibm.com/identity/token';
const APIKEY_GRANT = 'urn:ibm:params:oauth:grant-type:apikey';

const spec = (id: string): OpenAICompatibleSpec => ({
  id,
  defaultBaseUrl: 'https://us-south.ml.cloud.ibm.com/ml/v1',
  auth: 'bearer',
  quirks: { omit: ['stream', 'stream_options', 'user', 'parallel_tool_calls'], noReasoning: true },
});

const baseUrl = (target: UpstreamTarget): string => {
  const { connection } = target;
  if (connection.baseUrl !== undefined && connection.baseUrl !== '') return trimTrailingSlash(connection.baseUrl);
  return `https://${encodeURIComponent(optionString(connection.options, 'region') ?? 'us-south')}.ml.cloud.ibm.com/ml/v1`;
};

const errorsOf = (o: UnknownRecord | undefined): { message?: string; code?: string } => {
  const first = asRecord(asArray(o?.['errors'])?.[0]);
  return { message: asString(first?.['message']) ?? asString(o?.['message']), code: asString(first?.['code']) };
};

/** watsonx names the model `model_id`; the OpenAI readers want `model`. */
const normalise = (provider: string, raw: string): string => {
  const parsed = parseJson(raw);
  if (!parsed.ok || !isRecord(parsed.value)) throw badGateway(provider, 'returned a response that is not JSON.', raw);
  const o = parsed.value;
  if (Array.isArray(o['errors'])) {
    const e = errorsOf(o);
    throw mapInStreamError(provider, raw, e.message, e.code);
  }
  if (o['model'] !== undefined || typeof o['model_id'] !== 'string') return raw;
  return JSON.stringify({ ...o, model: o['model_id'] });
};

const exchange = async (provider: string, url: string, apiKey: string, http: TokenHttp, now: number): Promise<AccessToken> => {
  const host = tokenHost(provider, url);
  const res = await http({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: formBody({ grant_type: APIKEY_GRANT, apikey: apiKey }),
  }).catch((e: unknown) => {
    throw unreachable(provider, host, e);
  });
  if (res.status < 200 || res.status >= 300) {
    throw tokenExchangeFailed(provider, `the IAM token exchange at ${host} failed (HTTP ${res.status}).`, res.status, res.body, [apiKey]);
  }
  const parsed = parseJson(res.body);
  const o = parsed.ok ? asRecord(parsed.value) : undefined;
  const token = asString(o?.['access_token']);
  if (token === undefined || token === '')
    throw tokenExchangeFailed(provider, `the IAM endpoint at ${host} returned no access_token.`, res.status, res.body, [apiKey]);
  const expiration = asNumber(o?.['expiration']);
  const expiresIn = asNumber(o?.['expires_in']) ?? 3600;
  return { token, expiresAt: expiration !== undefined ? expiration * 1000 : now + expiresIn * 1000 };
};

export interface WatsonxAdapterOptions {
  id?: string;
  now?: () => number;
}

export const createWatsonxAdapter = (opts: WatsonxAdapterOptions = {}): HttpProviderAdapter & { clearTokens(): void } => {
  const id = opts.id ?? 'watsonx';
  const now = opts.now ?? Date.now;
  const s = spec(id);
  const tokens = new TokenCache(now);
  return {
    kind: 'http',
    id,
    framing: 'sse',
    buildRequest: (request, target) => {
      const { connection } = target;
      const projectId = optionString(connection.options, 'projectId');
      const spaceId = optionString(connection.options, 'spaceId');
      if (projectId === undefined && spaceId === undefined) {
        throw providerMisconfigured(id, `connection '${connection.name}' needs options.projectId or options.spaceId.`);
      }
      const { model, tool_choice, ...rest } = buildChatCompletionsBody(s, request, target);
      const body = {
        model_id: model ?? target.upstreamModel,
        ...(projectId !== undefined ? { project_id: projectId } : { space_id: spaceId ?? '' }),
        ...rest,
        ...(typeof tool_choice === 'string' ? { tool_choice_option: tool_choice } : tool_choice !== undefined ? { tool_choice } : {}),
      };
      const version = encodeURIComponent(optionString(connection.options, 'apiVersion') ?? WATSONX_DEFAULT_VERSION);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: request.stream ? 'text/event-stream' : 'application/json',
      };
      for (const [k, v] of Object.entries(optionHeaders(connection.options))) setHeader(headers, k, v);
      return {
        url: `${baseUrl(target)}/text/${request.stream ? 'chat_stream' : 'chat'}?version=${version}`,
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      };
    },
    authorize: async (request, target, http) => {
      const { connection } = target;
      const key = connection.apiKey;
      if (key === undefined || key === '')
        throw providerMisconfigured(id, `connection '${connection.name}' needs an IBM Cloud API key (apiKey).`);
      const iamUrl = optionString(connection.options, 'iamUrl') ?? WATSONX_DEFAULT_IAM_URL;
      const token = await tokens.get(`${TokenCache.keyFor(connection)}:${iamUrl}`, () => exchange(id, iamUrl, key, http, now()));
      return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
    },
    parseResponse: (body): CanonicalResponse => parseChatCompletion(id, normalise(id, body)),
    parseError: (status, body, headers): GatewayError => {
      if (status === 401) tokens.clear(); // a revoked or expired token: the next request exchanges again
      const parsed = parseJson(body);
      const e = errorsOf(parsed.ok ? asRecord(parsed.value) : undefined);
      return mapUpstreamError({ provider: id, status, body, headers, message: e.message, code: status === 404 ? e.code : undefined });
    },
    createStreamDecoder: (): StreamDecoder => {
      const inner = createChatCompletionsStreamDecoder(id);
      return {
        push: (frame) => {
          const data = frame.data.trim();
          return data === '' || data === '[DONE]' ? inner.push(frame) : inner.push({ ...frame, data: normalise(id, data) });
        },
        end: () => inner.end(),
      };
    },
    clearTokens: () => tokens.clear(),
  };
};

export const watsonxAdapter = createWatsonxAdapter();
