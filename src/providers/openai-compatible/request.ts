/** Canonical request → OpenAI Chat Completions wire request. */
import type { CanonicalRequest, ContentPart, JsonObject, JsonValue, Message, ToolChoice } from '../../canonical/types.ts';
import { textOf } from '../../canonical/types.ts';
import { type DocumentPart, documentRefused, NO_URL_FETCH, refuseDocuments } from '../mapping.ts';
import { compact, optionHeaders, optionString, setHeader, trimTrailingSlash } from '../json.ts';
import { EXTRA_ENDPOINT_PATHS, type ExtraEndpoint, type UpstreamHttpRequest, type UpstreamTarget } from '../types.ts';
import { assertModelReasons, reasoningEffortOf, refuseReasoning, wantsReasoning } from '../reasoning.ts';
import { providerMisconfigured } from '../upstream-error.ts';
import type { OpenAICompatibleSpec } from './spec.ts';
import { strictSchema } from './strict-schema.ts';
import { refuseTopK } from '../top-k.ts';

export const resolveBaseUrl = (spec: OpenAICompatibleSpec, target: UpstreamTarget): string => {
  const { connection } = target;
  if (connection.baseUrl !== undefined && connection.baseUrl !== '') return trimTrailingSlash(connection.baseUrl);
  const url = spec.defaultBaseUrl.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = optionString(connection.options, name);
    if (v === undefined) {
      throw providerMisconfigured(spec.id, `connection '${connection.name}' needs a baseUrl or options.${name}.`);
    }
    return encodeURIComponent(v);
  });
  return trimTrailingSlash(url);
};

/** Deterministic 9-character [A-Za-z0-9] id (Mistral), stable for the same input id. */
export const alnum9 = (id: string): string => {
  if (/^[A-Za-z0-9]{9}$/.test(id)) return id;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  let out = '';
  for (let i = 0; i < 9; i++) {
    const h = i % 2 === 0 ? h1 : h2;
    out += alphabet[h % 62] ?? 'A';
    if (i % 2 === 0) h1 = Math.imul(h1 ^ (h1 >>> 15), 0x2c1b3c6d) >>> 0;
    else h2 = Math.imul(h2 ^ (h2 >>> 13), 0x297a2d39) >>> 0;
  }
  return out;
};

/** How an OpenAI-shaped upstream differs in its message wire (Cohere v2 reuses this mapper). */
export interface MessageWireStyle {
  toolId: (id: string) => string;
  /** Send an image part's `detail` (OpenAI does; Cohere has none). */
  imageDetail: boolean;
  /** An assistant turn with tool calls and no text: `content: null` (OpenAI) or no content (Cohere). */
  emptyToolTurnContent: 'null' | 'omit';
  /** The upstream, for refusals. */
  provider: string;
  /** Send documents as Chat `file` parts (OpenAI does); without, a document is refused (Cohere). */
  files: boolean;
}

/**
 * A document → a Chat `file` part with `file_data` as a base64 data URL. Chat Completions takes
 * no file URL, and the gateway fetches none: a URL document is refused.
 */
const filePart = (d: DocumentPart, style: MessageWireStyle): JsonObject => {
  if (!style.files) throw documentRefused(d, `Provider '${style.provider}' reads no documents (PDF files).`);
  const { source } = d;
  if (source.kind === 'url') {
    throw documentRefused(
      d,
      `Provider '${style.provider}' (Chat Completions) takes files only as base64 file_data, not by URL; ${NO_URL_FETCH}.`,
    );
  }
  return { type: 'file', file: { file_data: `data:${source.mediaType};base64,${source.data}`, filename: d.filename ?? 'document.pdf' } };
};

const userContent = (parts: readonly ContentPart[], style: MessageWireStyle): JsonValue => {
  if (parts.every((p) => p.type === 'text')) return textOf(parts);
  return parts.map(
    (p): JsonObject =>
      p.type === 'text'
        ? { type: 'text', text: p.text }
        : p.type === 'document'
          ? filePart(p, style)
          : { type: 'image_url', image_url: style.imageDetail ? compact({ url: p.url, detail: p.detail }) : { url: p.url } },
  );
};

/** Canonical message → OpenAI Chat Completions message. */
export const toWireMessage = (m: Message, style: MessageWireStyle): JsonObject => {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: textOf(m.content) };
    case 'user':
      return { role: 'user', content: userContent(m.content, style) };
    case 'assistant': {
      const text = textOf(m.content);
      const calls = m.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: text };
      return compact({
        role: 'assistant',
        content: text !== '' ? text : style.emptyToolTurnContent === 'null' ? null : undefined,
        tool_calls: calls.map((c) => ({
          id: style.toolId(c.id),
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        })),
      });
    }
    case 'tool':
      refuseDocuments(m.content, `Provider '${style.provider}' takes only text in a tool result, not a document.`);
      return { role: 'tool', tool_call_id: style.toolId(m.toolCallId), content: textOf(m.content) };
  }
};

/**
 * The field the output limit goes in: the connection's `options.maxTokensField`, else
 * `max_completion_tokens` for a reasoning model of a spec whose reasoning models refuse
 * `max_tokens` (OpenAI, Azure), else the spec's default.
 */
const maxTokensField = (
  spec: OpenAICompatibleSpec,
  request: CanonicalRequest,
  target: UpstreamTarget,
): 'max_tokens' | 'max_completion_tokens' => {
  const option = optionString(target.connection.options, 'maxTokensField');
  if (option === 'max_completion_tokens' || option === 'max_tokens') return option;
  const r = spec.reasoningModels;
  if (r !== undefined && (request.modelReasons === true || wantsReasoning(request) || r.names.test(target.upstreamModel)))
    return 'max_completion_tokens';
  return spec.quirks?.maxTokensField ?? 'max_tokens';
};

const toolChoice = (c: ToolChoice): JsonValue => (typeof c === 'string' ? c : { type: 'function', function: { name: c.name } });

export const buildChatCompletionsBody = (spec: OpenAICompatibleSpec, request: CanonicalRequest, target: UpstreamTarget): JsonObject => {
  const q = spec.quirks ?? {};
  const toolId = q.toolCallIds === 'alnum9' ? alnum9 : (id: string) => id;
  const maxField = maxTokensField(spec, request, target);
  const tools = request.tools ?? [];
  const rf = request.responseFormat;
  if (q.noReasoning) refuseReasoning(request, spec.id);
  if (q.topK !== true) refuseTopK(request, spec.id);
  assertModelReasons(request);

  const body = compact({
    model: target.upstreamModel,
    messages: request.messages.map((m) =>
      toWireMessage(m, { toolId, imageDetail: true, emptyToolTurnContent: 'null', provider: spec.id, files: true }),
    ),
    [maxField]: request.maxTokens,
    temperature: request.temperature,
    top_p: request.topP,
    top_k: q.topK ? request.topK : undefined,
    stop: request.stop && request.stop.length > 0 ? request.stop : undefined,
    [q.seedField ?? 'seed']: request.seed,
    n: request.n,
    user: request.user,
    presence_penalty: request.presencePenalty,
    frequency_penalty: request.frequencyPenalty,
    tools:
      tools.length > 0
        ? tools.map((t) => ({
            type: 'function',
            function: compact({
              name: t.name,
              description: t.description,
              // Strict mode takes only strict schemas: made strict as for response_format, or refused naming the keyword.
              parameters: t.strict === true ? strictSchema(t.parameters, t.schemaParam ?? 'tools') : t.parameters,
              strict: t.strict,
            }),
          }))
        : undefined,
    tool_choice: tools.length > 0 && request.toolChoice !== undefined ? toolChoice(request.toolChoice) : undefined,
    parallel_tool_calls: tools.length > 0 ? request.parallelToolCalls : undefined,
    response_format:
      rf === undefined
        ? undefined
        : rf.type === 'json_schema'
          ? {
              type: 'json_schema',
              json_schema: compact({
                name: rf.name,
                schema: rf.strict === true ? strictSchema(rf.schema, rf.param ?? 'response_format.json_schema.schema') : rf.schema,
                strict: rf.strict,
                description: rf.description,
              }),
            }
          : { type: rf.type },
    // An effort as sent, or a Messages thinking budget as the effort of the shared table (reasoning.ts).
    reasoning_effort: reasoningEffortOf(request),
    // The gateway always wants usage, whatever the client asked for.
    stream: request.stream ? true : undefined,
    stream_options: request.stream ? { include_usage: true } : undefined,
  });
  for (const field of q.omit ?? []) delete body[field];
  return body;
};

/** Auth, organization/project and extra headers of an OpenAI-compatible connection. */
export const openAIHeaders = (spec: OpenAICompatibleSpec, target: UpstreamTarget, stream: boolean): Record<string, string> => {
  const { connection } = target;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (stream) headers['accept'] = 'text/event-stream';
  const key = connection.apiKey;
  if (spec.auth !== 'none' && key !== undefined && key !== '') headers['authorization'] = `Bearer ${key}`;
  const org = optionString(connection.options, 'organization');
  if (org !== undefined) headers['OpenAI-Organization'] = org;
  const project = optionString(connection.options, 'project');
  if (project !== undefined) headers['OpenAI-Project'] = project;
  for (const [k, v] of Object.entries(optionHeaders(connection.options))) setHeader(headers, k, v);
  return headers;
};

export const buildChatCompletionsRequest = (
  spec: OpenAICompatibleSpec,
  request: CanonicalRequest,
  target: UpstreamTarget,
): UpstreamHttpRequest => ({
  url: `${resolveBaseUrl(spec, target)}/chat/completions`,
  method: 'POST',
  headers: openAIHeaders(spec, target, request.stream),
  body: JSON.stringify(buildChatCompletionsBody(spec, request, target)),
});

/** Extra endpoints (embeddings, completions, images, speech, rerank): the body as sent, model replaced. */
export const buildExtraRequest = (
  spec: OpenAICompatibleSpec,
  endpoint: ExtraEndpoint,
  body: JsonObject,
  target: UpstreamTarget,
): UpstreamHttpRequest => ({
  url: `${resolveBaseUrl(spec, target)}${EXTRA_ENDPOINT_PATHS[endpoint]}`,
  method: 'POST',
  headers: openAIHeaders(spec, target, body.stream === true),
  body: JSON.stringify({ ...body, model: target.upstreamModel }),
});

/**
 * Headers per (connection, stream): computed once per connection object of a snapshot (immutable),
 * shared by every request to it. Nothing downstream mutates them.
 */
const headerCache = new WeakMap<object, { json: Record<string, string>; sse: Record<string, string>; url: string }>();
const cachedWire = (spec: OpenAICompatibleSpec, target: UpstreamTarget) => {
  let w = headerCache.get(target.connection);
  if (!w) {
    w = {
      json: openAIHeaders(spec, target, false),
      sse: openAIHeaders(spec, target, true),
      url: `${resolveBaseUrl(spec, target)}/chat/completions`,
    };
    headerCache.set(target.connection, w);
  }
  return w;
};

/**
 * Whether Chat Completions requests to this upstream are passed through (the client's JSON, not a
 * rebuilt one): OpenAI and every compatible upstream whose only quirk, if any, is accepting `top_k`.
 * Upstreams that rename fields, rewrite tool-call ids or refuse fields (Mistral, watsonx) are
 * translated.
 */
export const chatPassesThrough = (spec: OpenAICompatibleSpec): boolean =>
  spec.quirks === undefined || Object.keys(spec.quirks).every((k) => k === 'topK');

/**
 * Pass-through of a Chat Completions body: the client's JSON with the upstream model, and for
 * streams `stream_options.include_usage` on (the gateway always needs usage). Compatible upstreams
 * other than OpenAI get the output limit in the field the translated path uses (`max_tokens`, or
 * the connection's `maxTokensField`), since many do not know `max_completion_tokens`. Not for
 * OpenAI connections whose options change the body (`maxTokensField`): those are translated.
 */
export const buildChatPassThrough = (
  spec: OpenAICompatibleSpec,
  body: JsonObject,
  target: UpstreamTarget,
  stream: boolean,
): UpstreamHttpRequest | undefined => {
  const field = optionString(target.connection.options, 'maxTokensField');
  if (spec.id === 'openai' && field !== undefined) return undefined;
  const w = cachedWire(spec, target);
  const out: JsonObject = { ...body, model: target.upstreamModel };
  if (spec.id !== 'openai') {
    const want = field === 'max_completion_tokens' ? 'max_completion_tokens' : 'max_tokens';
    const other = want === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
    if (out[other] !== undefined && out[want] === undefined) {
      out[want] = out[other] as JsonValue;
      delete out[other];
    }
  }
  if (stream) {
    const so = body.stream_options;
    out.stream_options =
      so !== null && typeof so === 'object' && !Array.isArray(so) ? { ...so, include_usage: true } : { include_usage: true };
  }
  return { url: w.url, method: 'POST', headers: stream ? w.sse : w.json, body: JSON.stringify(out) };
};
