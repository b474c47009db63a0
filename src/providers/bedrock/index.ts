/**
 * AWS Bedrock through the Converse API (`/model/{id}/converse`, `/converse-stream`), for every
 * model family including Anthropic's — one wire for all, so Anthropic-only `invoke` features
 * (beta flags, thinking signatures) are out of reach by design.
 *
 * Connection: `options.region` (required); with `options.accessKeyId` the key is the AWS secret
 * access key and requests are SigV4-signed (service `bedrock`) in `authorize`; without it the key
 * is a Bedrock API key sent as `Authorization: Bearer`. Temporary credentials (session tokens) are
 * not supported: the token would have to live in the non-secret options.
 */
import type { HttpProviderAdapter } from '../types.ts';
import { optionString } from '../json.ts';
import { providerMisconfigured } from '../upstream-error.ts';
import { parseBedrockError } from './errors.ts';
import { buildConversePassThrough, buildConverseRequest } from './request.ts';
import { parseConverseResponse } from './response.ts';
import { signSigV4 } from './sigv4.ts';
import { createConverseStreamDecoder } from './stream.ts';

export interface BedrockAdapterOptions {
  id?: string;
  /** Clock for the signature date (tests inject a fixed one). */
  now?: () => Date;
}

export const createBedrockAdapter = (opts: BedrockAdapterOptions = {}): HttpProviderAdapter => {
  const id = opts.id ?? 'bedrock';
  const now = opts.now ?? (() => new Date());
  return {
    kind: 'http',
    id,
    framing: 'aws-eventstream',
    buildRequest: (request, target) => buildConverseRequest(id, request, target),
    authorize: async (request, target) => {
      const { connection } = target;
      const accessKeyId = optionString(connection.options, 'accessKeyId');
      if (accessKeyId === undefined) return request; // bearer API key, set by buildRequest
      const region = optionString(connection.options, 'region');
      if (region === undefined) throw providerMisconfigured(id, `connection '${connection.name}' needs options.region.`);
      const secret = connection.apiKey;
      if (secret === undefined || secret === '') {
        throw providerMisconfigured(id, `connection '${connection.name}' has options.accessKeyId but no secret access key (apiKey).`);
      }
      const headers = signSigV4(request, {
        region,
        service: 'bedrock',
        credentials: { accessKeyId, secretAccessKey: secret },
        now: now(),
        contentSha256: true,
      });
      return { ...request, headers };
    },
    parseResponse: (body) => parseConverseResponse(id, body),
    parseError: (status, body, headers) => parseBedrockError(id, status, body, headers),
    createStreamDecoder: () => createConverseStreamDecoder(id),
    passThrough: { converse: { build: (body, target, stream) => buildConversePassThrough(id, body, target, stream) } },
  };
};

export const bedrockAdapter = createBedrockAdapter();
