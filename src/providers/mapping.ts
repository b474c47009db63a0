/** Small canonical-request readers shared by the non-OpenAI families (Gemini, Bedrock, Cohere, Ollama). */
import type { CanonicalRequest, ContentPart, JsonObject, Message } from '../canonical/types.ts';
import { textOf } from '../canonical/types.ts';
import { type GatewayError, invalidRequest } from '../core/errors.ts';
import { isJsonObject, parseJson } from './json.ts';

/** The text of each non-empty system message, in order. */
export const systemTexts = (messages: readonly Message[]): string[] =>
  messages
    .filter((m) => m.role === 'system')
    .map((m) => textOf(m.content))
    .filter((t) => t !== '');

/** Tool-call id → function name, from the assistant turns of the history. */
export const toolNamesById = (messages: readonly Message[]): Map<string, string> => {
  const names = new Map<string, string>();
  for (const m of messages) if (m.role === 'assistant') for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
  return names;
};

/** The function name a tool result answers: from the history, else the message's own name, else its id. */
export const toolResultName = (m: Extract<Message, { role: 'tool' }>, names: ReadonlyMap<string, string>): string =>
  names.get(m.toolCallId) ?? m.name ?? m.toolCallId;

/** Tool-call arguments (JSON text) as an object; anything else becomes `{}`. */
export const argumentsObject = (args: string): JsonObject => {
  const parsed = parseJson(args);
  return parsed.ok && isJsonObject(parsed.value) ? parsed.value : {};
};

export interface InlineData {
  mediaType: string;
  data: string;
}

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

export const parseDataUrl = (url: string): InlineData | undefined => {
  const m = DATA_URL.exec(url);
  return m ? { mediaType: m[1] ?? '', data: m[2] ?? '' } : undefined;
};

/** For upstreams that only take inline image bytes: a base64 data URL, or a clear 400. */
export const requireDataUrl = (url: string, provider: string): InlineData => {
  const d = parseDataUrl(url);
  if (!d) throw invalidRequest(`Provider '${provider}' only accepts images as base64 data URLs.`, 'messages');
  return d;
};

/** ISO-8601 time → Unix seconds (now when absent or unparseable). */
export const unixSeconds = (iso: string | undefined): number => {
  const t = iso === undefined ? Number.NaN : Date.parse(iso);
  return Math.floor((Number.isNaN(t) ? Date.now() : t) / 1000);
};

export type DocumentPart = Extract<ContentPart, { type: 'document' }>;

/** Why a document URL is refused where the upstream takes only inline bytes. */
export const NO_URL_FETCH = 'the gateway does not fetch URLs for an upstream; send the file as base64 data';

/** A document this upstream cannot take: a 400 naming where the client sent it. */
export const documentRefused = (d: DocumentPart, message: string): GatewayError => invalidRequest(message, d.param);

/** Where an upstream reads only text (tool results, some families): a document is refused, never dropped. */
export const refuseDocuments = (parts: readonly ContentPart[], message: string): void => {
  const d = parts.find((p): p is DocumentPart => p.type === 'document');
  if (d) throw documentRefused(d, message);
};

/**
 * For families with no strict tool mode: a tool with `strict: true` (its arguments guaranteed to
 * match the schema) is refused with a 400 naming its `strict`, never sent without the guarantee.
 * `strict: false` asks for nothing these families do not already do, nor does a request that
 * forbids tool calls (`tool_choice: "none"`).
 */
export const refuseStrictTools = (request: CanonicalRequest, family: string, why: string): void => {
  if (request.toolChoice === 'none') return;
  const tool = (request.tools ?? []).find((t) => t.strict === true);
  if (tool === undefined) return;
  throw invalidRequest(
    `Tool '${tool.name}' asks for strict mode, which the ${family} upstream this model is routed to cannot honour (${why}): its arguments would not be guaranteed to match the schema. Remove 'strict', or route to a model that takes it (OpenAI, Anthropic, Cohere).`,
    tool.param !== undefined ? `${tool.param}.strict` : 'tools',
  );
};
