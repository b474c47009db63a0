/** Cohere v2 chat (`/v2/chat`, Bearer, SSE dispatched on the JSON `type`). */
import type { HttpProviderAdapter } from '../types.ts';
import { buildCohereExtraRequest, buildCoherePassThrough, buildCohereRequest } from './request.ts';
import { parseCohereError, parseCohereResponse } from './response.ts';
import { createCohereStreamDecoder } from './stream.ts';

export const createCohereAdapter = (id = 'cohere'): HttpProviderAdapter => ({
  kind: 'http',
  id,
  framing: 'sse',
  buildRequest: (request, target) => buildCohereRequest(request, target),
  parseResponse: (body) => parseCohereResponse(id, body),
  parseError: (status, body, headers) => parseCohereError(id, status, body, headers),
  createStreamDecoder: () => createCohereStreamDecoder(id),
  buildExtraRequest: buildCohereExtraRequest,
  passThrough: { cohere: { build: buildCoherePassThrough } },
});

export const cohereAdapter = createCohereAdapter();
