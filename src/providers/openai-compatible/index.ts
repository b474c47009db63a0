/**
 * The factory behind every OpenAI-compatible upstream: one spec line (id, base URL, auth style,
 * quirks) becomes a complete, pure HttpProviderAdapter.
 */
import type { HttpProviderAdapter } from '../types.ts';
import { parseOpenAIError } from './errors.ts';
import { createResponsesPassThrough } from '../openai-responses/index.ts';
import {
  buildChatCompletionsRequest,
  buildChatPassThrough,
  buildExtraRequest,
  chatPassesThrough,
  openAIHeaders,
  resolveBaseUrl,
} from './request.ts';
import { parseChatCompletion } from './response.ts';
import type { OpenAICompatibleSpec } from './spec.ts';
import { createChatCompletionsStreamDecoder } from './stream.ts';

export type { OpenAICompatibleAuth, OpenAICompatibleQuirks, OpenAICompatibleSpec } from './spec.ts';

export const createOpenAICompatibleAdapter = (spec: OpenAICompatibleSpec): HttpProviderAdapter => ({
  kind: 'http',
  id: spec.id,
  framing: 'sse',
  buildRequest: (request, target) => buildChatCompletionsRequest(spec, request, target),
  parseResponse: (body) => parseChatCompletion(spec.id, body),
  parseError: (status, body, headers) => parseOpenAIError(spec.id, status, body, headers),
  createStreamDecoder: () => createChatCompletionsStreamDecoder(spec.id),
  buildExtraRequest: (endpoint, body, target) => buildExtraRequest(spec, endpoint, body, target),
  // Chat: OpenAI and the compatible upstreams without field quirks (request.ts chatPassesThrough).
  // Responses: only OpenAI itself; of the compatible providers whose API documents /responses
  // (xAI), none is verified to take every Responses field.
  ...(chatPassesThrough(spec)
    ? {
        passThrough: {
          chat: { build: (body, target, stream) => buildChatPassThrough(spec, body, target, stream) },
          ...(spec.id === 'openai' && spec.quirks === undefined
            ? {
                responses: createResponsesPassThrough(spec.id, (target) => ({
                  url: `${resolveBaseUrl(spec, target)}/responses`,
                  headers: openAIHeaders(spec, target, false),
                  model: target.upstreamModel,
                })),
              }
            : {}),
        },
      }
    : {}),
});
