/**
 * Canonical request → Cohere v2 `/v2/chat`. Messages keep the OpenAI shape (system messages stay
 * inline); sampling is `p`/`k`; `tool_choice` is `REQUIRED`/`NONE` (a named function narrows
 * `tools` to that one and requires it); JSON Schema output is `json_object` + `json_schema`.
 */
import { refuseReasoning } from '../reasoning.ts';
import type { CanonicalRequest, JsonObject, Message } from '../../canonical/types.ts';
import { compact, optionHeaders, setHeader, trimTrailingSlash } from '../json.ts';
import { type MessageWireStyle, toWireMessage } from '../openai-compatible/request.ts';
import type { ExtraEndpoint, UpstreamHttpRequest, UpstreamTarget } from '../types.ts';

export const COHERE_DEFAULT_BASE_URL = 'https://api.cohere.com';

const STYLE: MessageWireStyle = { toolId: (id) => id, imageDetail: false, emptyToolTurnContent: 'omit', provider: 'cohere', files: false };
const toWire = (m: Message): JsonObject => toWireMessage(m, STYLE);

export const buildCohereBody = (request: CanonicalRequest, target: UpstreamTarget): JsonObject => {
  refuseReasoning(request, 'Cohere');
  const choice = request.toolChoice;
  const all = request.tools ?? [];
  const tools = typeof choice === 'object' ? all.filter((t) => t.name === choice.name) : all;
  const rf = request.responseFormat;
  return compact({
    model: target.upstreamModel,
    messages: request.messages.map(toWire),
    max_tokens: request.maxTokens,
    temperature: request.temperature,
    p: request.topP,
    k: request.topK,
    stop_sequences: request.stop && request.stop.length > 0 ? request.stop : undefined,
    seed: request.seed,
    frequency_penalty: request.frequencyPenalty,
    presence_penalty: request.presencePenalty,
    tools:
      tools.length > 0
        ? tools.map((t) => ({
            type: 'function',
            function: compact({ name: t.name, description: t.description, parameters: t.parameters }),
          }))
        : undefined,
    strict_tools: tools.length > 0 && tools.some((t) => t.strict === true) ? true : undefined,
    tool_choice: tools.length === 0 || choice === undefined || choice === 'auto' ? undefined : choice === 'none' ? 'NONE' : 'REQUIRED',
    response_format:
      rf === undefined || rf.type === 'text'
        ? undefined
        : compact({ type: 'json_object', json_schema: rf.type === 'json_schema' ? rf.schema : undefined }),
    stream: request.stream ? true : undefined,
  });
};

const cohereEndpoint = (target: UpstreamTarget, path: string, stream: boolean, body: string): UpstreamHttpRequest => {
  const { connection } = target;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
  if (connection.apiKey !== undefined && connection.apiKey !== '') headers['authorization'] = `Bearer ${connection.apiKey}`;
  for (const [k, v] of Object.entries(optionHeaders(connection.options))) setHeader(headers, k, v);
  const base = connection.baseUrl !== undefined && connection.baseUrl !== '' ? connection.baseUrl : COHERE_DEFAULT_BASE_URL;
  return { url: `${trimTrailingSlash(base)}${path}`, method: 'POST', headers, body };
};

export const buildCohereRequest = (request: CanonicalRequest, target: UpstreamTarget): UpstreamHttpRequest =>
  cohereEndpoint(target, '/v2/chat', request.stream, JSON.stringify(buildCohereBody(request, target)));

/** Cohere's rerank has the de-facto rerank shape (model, query, documents, top_n): forwarded as is. */
export const buildCohereExtraRequest = (
  endpoint: ExtraEndpoint,
  body: JsonObject,
  target: UpstreamTarget,
): UpstreamHttpRequest | undefined =>
  endpoint === 'rerank' ? cohereEndpoint(target, '/v2/rerank', false, JSON.stringify({ ...body, model: target.upstreamModel })) : undefined;

/** Pass-through of a Cohere v2 chat body: the client's JSON with the upstream model. */
export const buildCoherePassThrough = (body: JsonObject, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest =>
  cohereEndpoint(target, '/v2/chat', stream, JSON.stringify({ ...body, model: target.upstreamModel }));
