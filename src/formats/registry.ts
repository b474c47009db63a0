/** Client format id → its codec. */
import type { ClientFormat } from '../canonical/types.ts';
import { chatCompletionsCodec } from './chat-completions/index.ts';
import { cohereCodec } from './cohere/index.ts';
import { converseCodec } from './converse/index.ts';
import { geminiCodec } from './gemini/index.ts';
import { messagesCodec } from './messages/index.ts';
import { responsesCodec } from './responses/index.ts';
import type { ClientFormatCodec } from './types.ts';

const CODECS: Record<ClientFormat, ClientFormatCodec> = {
  chat: chatCompletionsCodec,
  responses: responsesCodec,
  messages: messagesCodec,
  gemini: geminiCodec,
  converse: converseCodec,
  cohere: cohereCodec,
};

export const codecFor = (format: ClientFormat): ClientFormatCodec => CODECS[format];

export { chatCompletionsCodec, cohereCodec, converseCodec, geminiCodec, messagesCodec, responsesCodec };
