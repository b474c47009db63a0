/** OpenAI Chat Completions (`POST /v1/chat/completions`) ↔ canonical. */
import { type GatewayError, toInferenceBody } from '../../core/errors.ts';
import type { ClientFormatCodec } from '../types.ts';
import { decodeChatRequest } from './request.ts';
import { encodeChatResponse } from './response.ts';
import { createChatStreamEncoder } from './stream.ts';

/** `{error:{message,type,param,code}}` — the seed's error body, shared by both OpenAI formats. */
export const encodeOpenAIError = (error: GatewayError) => ({ error: { ...toInferenceBody(error).error } });

export const chatCompletionsCodec: ClientFormatCodec = {
  id: 'chat',
  decodeRequest: decodeChatRequest,
  encodeResponse: encodeChatResponse,
  createStreamEncoder: createChatStreamEncoder,
  encodeError: encodeOpenAIError,
};

export { chatUsage, encodeChatResponse } from './response.ts';
export { decodeChatRequest } from './request.ts';
export { createChatStreamEncoder } from './stream.ts';
