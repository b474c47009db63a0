/** OpenAI Responses (`POST /v1/responses`) ↔ canonical. */
import { encodeOpenAIError } from '../chat-completions/index.ts';
import type { ClientFormatCodec } from '../types.ts';
import { decodeResponsesRequest } from './request.ts';
import { encodeResponsesResponse } from './response.ts';
import { createResponsesStreamEncoder } from './stream.ts';

export const responsesCodec: ClientFormatCodec = {
  id: 'responses',
  decodeRequest: decodeResponsesRequest,
  encodeResponse: encodeResponsesResponse,
  createStreamEncoder: createResponsesStreamEncoder,
  encodeError: encodeOpenAIError,
};

export { decodeResponsesRequest } from './request.ts';
export { encodeResponsesResponse, responsesUsage } from './response.ts';
export { createResponsesStreamEncoder } from './stream.ts';
