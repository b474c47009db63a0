/**
 * OpenAI Responses API (`POST {base}/responses`) spoken natively: a Responses client's request goes
 * to an upstream that has the endpoint (openai, azure-openai) as the client's own JSON with only
 * `model` replaced, instead of being translated to Chat Completions (which loses reasoning items,
 * encrypted reasoning, built-in tools, `include`, `text.verbosity`, …). What the data plane changes
 * before that (`store: false`, references expanded) is described in src/data-plane/responses-native.ts.
 */
import type { JsonObject } from '../../canonical/types.ts';
import type { PassThrough, UpstreamHttpRequest, UpstreamTarget } from '../types.ts';
import { parseResponsesAnswer } from './response.ts';
import { createResponsesStreamDecoder } from './stream.ts';

export { createResponsesStreamDecoder } from './stream.ts';
export { parseResponsesAnswer, parseResponsesUsage } from './response.ts';

/** Where and how to send: the URL, headers (auth included) and the model name the upstream knows. */
export interface ResponsesEndpoint {
  url: string;
  headers: Record<string, string>;
  model: string;
}

export const createResponsesPassThrough = (provider: string, endpoint: (target: UpstreamTarget) => ResponsesEndpoint): PassThrough => ({
  build: (body: JsonObject, target: UpstreamTarget, stream: boolean): UpstreamHttpRequest => {
    const e = endpoint(target);
    const headers: Record<string, string> = { ...e.headers, 'content-type': 'application/json' };
    if (stream) headers['accept'] = 'text/event-stream';
    return { url: e.url, method: 'POST', headers, body: JSON.stringify({ ...body, model: e.model }) };
  },
  parseResponse: (text: string) => parseResponsesAnswer(provider, text),
  createStreamDecoder: () => createResponsesStreamDecoder(provider),
});
