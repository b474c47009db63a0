/** Gemini `generateContent` / `streamGenerateContent` (`POST /v1beta/models/{model}:…`) ↔ canonical. */
import type { ClientFormatCodec } from '../types.ts';
import { decodeGeminiRequest } from './request.ts';
import { encodeGeminiError, encodeGeminiResponse } from './response.ts';
import { createGeminiStreamEncoder } from './stream.ts';

export const geminiCodec: ClientFormatCodec = {
  id: 'gemini',
  decodeRequest: decodeGeminiRequest,
  encodeResponse: encodeGeminiResponse,
  createStreamEncoder: createGeminiStreamEncoder,
  encodeError: encodeGeminiError,
};

export { decodeGeminiRequest } from './request.ts';
export { encodeGeminiError, encodeGeminiResponse, geminiUsage } from './response.ts';
export { createGeminiStreamEncoder } from './stream.ts';
