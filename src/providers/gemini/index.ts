/** Gemini on Google AI Studio (`x-goog-api-key`, `…/v1beta/models/{m}:generateContent`, SSE). */
import type { HttpProviderAdapter } from '../types.ts';
import { parseGoogleError } from './errors.ts';
import { buildGeminiPassThrough, buildGeminiRequest } from './request.ts';
import { parseGenerateContentResponse } from './response.ts';
import { createGenerateContentStreamDecoder } from './stream.ts';

export const createGeminiAdapter = (id = 'gemini'): HttpProviderAdapter => ({
  kind: 'http',
  id,
  framing: 'sse',
  buildRequest: (request, target) => buildGeminiRequest(request, target),
  parseResponse: (body) => parseGenerateContentResponse(id, body),
  parseError: (status, body, headers) => parseGoogleError(id, status, body, headers),
  createStreamDecoder: () => createGenerateContentStreamDecoder(id),
  passThrough: { gemini: { build: (body, target, stream) => buildGeminiPassThrough(body, target, stream) } },
});

export const geminiAdapter = createGeminiAdapter();
