/**
 * Ollama's native API (`/api/chat`, NDJSON streams; `baseUrl` is the server root). Ollama's
 * OpenAI-compatible endpoint is the separate `ollama-openai` id (or `openai` with a `…/v1` baseUrl).
 */
import type { HttpProviderAdapter } from '../types.ts';
import { buildOllamaRequest } from './request.ts';
import { createOllamaStreamDecoder, parseOllamaError, parseOllamaResponse } from './response.ts';

export const createOllamaAdapter = (id = 'ollama'): HttpProviderAdapter => ({
  kind: 'http',
  id,
  framing: 'ndjson',
  buildRequest: (request, target) => buildOllamaRequest(id, request, target),
  parseResponse: (body) => parseOllamaResponse(id, body),
  parseError: (status, body, headers) => parseOllamaError(id, status, body, headers),
  createStreamDecoder: () => createOllamaStreamDecoder(id),
});

export const ollamaAdapter = createOllamaAdapter();
