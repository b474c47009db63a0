/**
 * Route-table entries of the client formats of contract §13 (Gemini, Converse, Cohere), kept out
 * of server.ts: each maps its paths to its own handler module.
 */
import type { RequestIds } from '../pipeline/context.ts';
import type { InferenceDeps } from './deps.ts';
import { handleConverse } from './converse.ts';
import { handleGemini } from './gemini.ts';
import { handleInference } from './inference.ts';
import { handleModel } from './models.ts';

type Handler = (req: Request, ids: RequestIds) => Response | Promise<Response>;

/**
 * `POST /v1beta/models/{model}:{method}` and the same under `/v1/models/` (the Google SDK's default
 * API version), whose `GET` is OpenAI's `GET /v1/models/{id}` (`models.retrieve`).
 */
export const geminiRoutes = <R, G>(deps: InferenceDeps, post: (h: Handler) => R, guard: (h: Handler) => G) => ({
  '/v1beta/models/*': post((req, ids) => handleGemini(deps, '/v1beta/models/', req, ids)),
  '/v1/models/*': {
    ...post((req, ids) => handleGemini(deps, '/v1/models/', req, ids)),
    GET: guard((req, ids) => handleModel(deps, req, ids)),
  },
});

/** `POST /model/{modelId}/converse` and `/converse-stream` (Bedrock Converse). */
export const converseRoutes = <R>(deps: InferenceDeps, post: (h: Handler) => R) => ({
  '/model/*': post((req, ids) => handleConverse(deps, req, ids)),
});

/** `POST /v2/chat` (Cohere v2; the key as the bearer, stream and not). */
export const cohereRoutes = <R>(deps: InferenceDeps, post: (h: Handler) => R) => ({
  '/v2/chat': post((req, ids) => handleInference(deps, 'cohere', req, ids)),
});
