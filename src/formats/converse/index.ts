/** Bedrock Converse (`POST /model/{modelId}/converse`, `/converse-stream`) ↔ canonical. */
import type { ClientFormatCodec } from '../types.ts';
import { decodeConverseRequest } from './request.ts';
import { encodeConverseError, encodeConverseResponse } from './response.ts';
import { createConverseStreamEncoder } from './stream.ts';

export const converseCodec: ClientFormatCodec = {
  id: 'converse',
  decodeRequest: decodeConverseRequest,
  encodeResponse: encodeConverseResponse,
  createStreamEncoder: createConverseStreamEncoder,
  encodeError: encodeConverseError,
};

export { decodeConverseRequest } from './request.ts';
export { converseErrorType, converseUsage, encodeConverseError, encodeConverseResponse } from './response.ts';
export { createConverseStreamEncoder } from './stream.ts';
