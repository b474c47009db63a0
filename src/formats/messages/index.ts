/** Anthropic Messages (`POST /v1/messages`) ↔ canonical. */
import { type GatewayError, toInferenceBody } from '../../core/errors.ts';
import type { ClientFormatCodec } from '../types.ts';
import { decodeMessagesRequest } from './request.ts';
import { encodeMessagesResponse } from './response.ts';
import { createMessagesStreamEncoder } from './stream.ts';

/**
 * `{type:'error', error:{message,type,param,code}}`: the Anthropic SDK reads `type` and
 * `error.{type,message}`; the seed's `error.{message,type,param,code}` is kept as well.
 */
export const encodeMessagesError = (error: GatewayError) => ({
  type: 'error',
  error: { ...toInferenceBody(error).error, ...(error.details ? { details: error.details } : {}) },
});

export const messagesCodec: ClientFormatCodec = {
  id: 'messages',
  decodeRequest: decodeMessagesRequest,
  encodeResponse: encodeMessagesResponse,
  createStreamEncoder: createMessagesStreamEncoder,
  encodeError: encodeMessagesError,
};

export { decodeMessagesRequest } from './request.ts';
export { encodeMessagesResponse, messagesUsage, stopReason } from './response.ts';
export { createMessagesStreamEncoder } from './stream.ts';
