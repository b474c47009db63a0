/** Cohere v2 chat (`POST /v2/chat`) ↔ canonical. */
import type { ClientFormatCodec } from '../types.ts';
import { decodeCohereRequest } from './request.ts';
import { encodeCohereError, encodeCohereResponse } from './response.ts';
import { createCohereStreamEncoder } from './stream.ts';

export const cohereCodec: ClientFormatCodec = {
  id: 'cohere',
  decodeRequest: decodeCohereRequest,
  encodeResponse: encodeCohereResponse,
  createStreamEncoder: createCohereStreamEncoder,
  encodeError: encodeCohereError,
};

export { decodeCohereRequest } from './request.ts';
export { cohereUsage, encodeCohereError, encodeCohereResponse } from './response.ts';
export { createCohereStreamEncoder } from './stream.ts';
