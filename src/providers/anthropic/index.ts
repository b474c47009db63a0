/** The Anthropic Messages adapter (`x-api-key`, `anthropic-version`, SSE with `event:` lines). */
import type { HttpProviderAdapter } from '../types.ts';
import { parseAnthropicError } from './errors.ts';
import { buildMessagesPassThrough, buildMessagesRequest } from './request.ts';
import { parseMessagesResponse } from './response.ts';
import { createMessagesStreamDecoder } from './stream.ts';

export const createAnthropicAdapter = (id = 'anthropic'): HttpProviderAdapter => ({
  kind: 'http',
  id,
  framing: 'sse',
  buildRequest: (request, target) => buildMessagesRequest(request, target),
  parseResponse: (body) => parseMessagesResponse(id, body),
  parseError: (status, body, headers) => parseAnthropicError(id, status, body, headers),
  createStreamDecoder: () => createMessagesStreamDecoder(id),
  ...(id === 'anthropic' ? { passThrough: { messages: { build: buildMessagesPassThrough } } } : {}),
});

export const anthropicAdapter = createAnthropicAdapter();
