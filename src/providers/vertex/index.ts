/**
 * Vertex AI: Gemini and Anthropic models behind one connection (service-account JSON key,
 * `options.projectId` (default: the key's project), `options.location` (default `us-central1`,
 * `global` supported)). Requests pick their publisher from the model name (see request.ts);
 * responses, streams and errors are recognised by their shape, since decoding happens without
 * the request at hand.
 */
import type { StreamEvent } from '../../canonical/types.ts';
import { parseAnthropicError } from '../anthropic/errors.ts';
import { parseMessagesResponse } from '../anthropic/response.ts';
import { createMessagesStreamDecoder } from '../anthropic/stream.ts';
import { parseGoogleError } from '../gemini/errors.ts';
import { parseGenerateContentResponse } from '../gemini/response.ts';
import { createGenerateContentStreamDecoder } from '../gemini/stream.ts';
import { asRecord, asString, isRecord, parseJson } from '../json.ts';
import type { HttpProviderAdapter, StreamDecoder, UpstreamFrame } from '../types.ts';
import { streamEndedEarly } from '../upstream-error.ts';
import { createVertexAuth } from './auth.ts';
import { buildVertexRequest } from './request.ts';

/** Anthropic bodies and events carry a string `type` (`message`, `message_start`, `error`, …); Gemini's never do. */
const isAnthropicShape = (text: string): boolean => {
  const parsed = parseJson(text);
  return parsed.ok && isRecord(parsed.value) && asString(parsed.value['type']) !== undefined;
};

/** Picks the Anthropic or Gemini decoder on the first non-empty frame. */
const createVertexStreamDecoder = (provider: string): StreamDecoder => {
  let inner: StreamDecoder | undefined;
  return {
    push(frame: UpstreamFrame): StreamEvent[] {
      if (!inner) {
        if (frame.data.trim() === '') return [];
        const anthropic = (frame.event !== undefined && frame.event !== 'message') || isAnthropicShape(frame.data);
        inner = anthropic ? createMessagesStreamDecoder(provider) : createGenerateContentStreamDecoder(provider);
      }
      return inner.push(frame);
    },
    end(): StreamEvent[] {
      if (!inner) throw streamEndedEarly(provider);
      return inner.end();
    },
  };
};

export interface VertexAdapterOptions {
  id?: string;
  /** Clock for JWT timestamps and token expiry (tests inject one). */
  now?: () => number;
}

export const createVertexAdapter = (opts: VertexAdapterOptions = {}): HttpProviderAdapter & { clearTokens(): void } => {
  const id = opts.id ?? 'vertex';
  const auth = createVertexAuth(id, opts.now);
  return {
    kind: 'http',
    id,
    framing: 'sse',
    buildRequest: (request, target) => buildVertexRequest(id, request, target),
    authorize: async (request, target, http) => {
      const token = await auth.token(target.connection, http);
      return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
    },
    parseResponse: (body) => (isAnthropicShape(body) ? parseMessagesResponse(id, body) : parseGenerateContentResponse(id, body)),
    parseError: (status, body, headers) => {
      if (status === 401) auth.cache.clear(); // a revoked or expired token: the next request exchanges again
      const parsed = parseJson(body);
      const o = parsed.ok ? asRecord(parsed.value) : undefined;
      return o?.['type'] === 'error' ? parseAnthropicError(id, status, body, headers) : parseGoogleError(id, status, body, headers);
    },
    createStreamDecoder: () => createVertexStreamDecoder(id),
    clearTokens: () => auth.cache.clear(),
  };
};

export const vertexAdapter = createVertexAdapter();
