/**
 * Canonical request → Gemini `generateContent` body (AI Studio and Vertex share it) and the AI
 * Studio wire request.
 *
 * Schemas go as full JSON Schema (`parametersJsonSchema`, `responseJsonSchema`) rather than the
 * OpenAPI subset of `parameters`/`responseSchema`, so client schemas need no lossy rewriting.
 * Tool results are keyed by function name (resolved from the history). A function call's
 * `thoughtSignature` travels inside the canonical tool-call id (see `THOUGHT_SEPARATOR`) and is
 * echoed back, as Gemini 3 requires.
 */
import type { CanonicalRequest, ContentPart, JsonObject, JsonValue, Message, ToolChoice } from '../../canonical/types.ts';
import { textOf } from '../../canonical/types.ts';
import { compact, isJsonObject, optionHeaders, parseJson, setHeader, trimTrailingSlash } from '../json.ts';
import {
  argumentsObject,
  type DocumentPart,
  parseDataUrl,
  refuseDocuments,
  refuseStrictTools,
  systemTexts,
  toolNamesById,
  toolResultName,
} from '../mapping.ts';
import { assertModelReasons, thinkingBudgetOf, thinkingBudgetWithin } from '../reasoning.ts';
import type { UpstreamHttpRequest, UpstreamTarget } from '../types.ts';

/** Gemini's smallest thinking budget above 0 (0 turns thinking off): 1 on 2.5 Flash; models with a larger one (128 on 2.5 Pro) refuse less themselves. */
export const GEMINI_MIN_THINKING_BUDGET = 1;

export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/** `<id>__thought__<signature>`: how a Gemini thought signature rides along in a tool-call id. */
export const THOUGHT_SEPARATOR = '__thought__';

export const splitToolCallId = (id: string): { id: string; signature?: string } => {
  const at = id.indexOf(THOUGHT_SEPARATOR);
  return at === -1 ? { id } : { id: id.slice(0, at), signature: id.slice(at + THOUGHT_SEPARATOR.length) };
};

const EXT_MIME: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
};

const imagePart = (url: string): JsonObject => {
  const inline = parseDataUrl(url);
  if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
  const ext = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase() ?? '';
  return { fileData: { mimeType: EXT_MIME[ext] ?? 'image/jpeg', fileUri: url } };
};

/** A PDF: inline bytes, or a URL as `fileData` (Gemini fetches it, as for image URLs). */
const documentPart = ({ source }: DocumentPart): JsonObject =>
  source.kind === 'base64'
    ? { inlineData: { mimeType: source.mediaType, data: source.data } }
    : { fileData: { mimeType: 'application/pdf', fileUri: source.url } };

const parts = (content: readonly ContentPart[]): JsonObject[] => {
  const out: JsonObject[] = [];
  for (const p of content) {
    if (p.type === 'image') out.push(imagePart(p.url));
    else if (p.type === 'document') out.push(documentPart(p));
    else if (p.text !== '') out.push({ text: p.text });
  }
  return out;
};

const functionResponse = (m: Extract<Message, { role: 'tool' }>, names: ReadonlyMap<string, string>): JsonObject => {
  refuseDocuments(m.content, 'Gemini takes only text in a function response, not a document.');
  const text = textOf(m.content);
  const parsed = parseJson(text);
  const response: JsonObject = m.isError ? { error: text } : parsed.ok && isJsonObject(parsed.value) ? parsed.value : { content: text };
  return { functionResponse: { name: toolResultName(m, names), response } };
};

interface Content {
  role: 'user' | 'model';
  parts: JsonObject[];
}

export const toGeminiContents = (messages: readonly Message[]): JsonObject[] => {
  const names = toolNamesById(messages);
  const contents: Content[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    let c: Content;
    if (m.role === 'tool') c = { role: 'user', parts: [functionResponse(m, names)] };
    else if (m.role === 'user') c = { role: 'user', parts: parts(m.content) };
    else {
      const calls = (m.toolCalls ?? []).map((call): JsonObject => {
        const { signature } = splitToolCallId(call.id);
        return compact({ functionCall: { name: call.name, args: argumentsObject(call.arguments) }, thoughtSignature: signature });
      });
      c = { role: 'model', parts: [...parts(m.content), ...calls] };
    }
    if (c.parts.length === 0) continue;
    const last = contents[contents.length - 1];
    if (last && last.role === c.role) last.parts.push(...c.parts);
    else contents.push(c);
  }
  return contents.map((c) => ({ role: c.role, parts: c.parts }));
};

const toolConfig = (choice: ToolChoice | undefined): JsonObject | undefined => {
  if (choice === undefined) return undefined;
  if (typeof choice === 'object') return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
  return { functionCallingConfig: { mode: choice === 'required' ? 'ANY' : choice === 'none' ? 'NONE' : 'AUTO' } };
};

/** A JSON Schema as Gemini takes it: without the `$schema` keyword, and `type: object` for a bare `{}`. */
export const geminiSchema = (schema: JsonObject): JsonObject => {
  const rest: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) if (k !== '$schema') rest[k] = v;
  return rest['type'] === undefined && Object.keys(rest).length === 0 ? { type: 'object' } : rest;
};

const responseFields = (request: CanonicalRequest): Record<string, JsonValue | undefined> => {
  const rf = request.responseFormat;
  if (rf === undefined || rf.type === 'text') return {};
  return { responseMimeType: 'application/json', responseJsonSchema: rf.type === 'json_schema' ? geminiSchema(rf.schema) : undefined };
};

export const buildGenerateContentBody = (request: CanonicalRequest): JsonObject => {
  assertModelReasons(request);
  refuseStrictTools(request, 'Gemini', 'Gemini function declarations have no strict mode');
  // Gemini counts thinking inside maxOutputTokens: a client's limit bounds both (reasoning.ts).
  const budget =
    request.maxTokens !== undefined
      ? thinkingBudgetWithin(request, request.maxTokens, 'Gemini', GEMINI_MIN_THINKING_BUDGET)
      : thinkingBudgetOf(request);
  const system = systemTexts(request.messages);
  const tools = request.tools ?? [];
  const generationConfig = compact({
    maxOutputTokens: request.maxTokens,
    temperature: request.temperature,
    topP: request.topP,
    topK: request.topK,
    stopSequences: request.stop && request.stop.length > 0 ? request.stop : undefined,
    candidateCount: request.n,
    seed: request.seed,
    presencePenalty: request.presencePenalty,
    frequencyPenalty: request.frequencyPenalty,
    ...responseFields(request),
    // Effort → budget by the shared table (Google's own OpenAI-compatibility mapping); a Messages budget as given.
    thinkingConfig: budget !== undefined ? { thinkingBudget: budget, includeThoughts: true } : undefined,
  });
  return compact({
    contents: toGeminiContents(request.messages),
    systemInstruction: system.length > 0 ? { parts: system.map((text) => ({ text })) } : undefined,
    tools:
      tools.length > 0
        ? [
            {
              functionDeclarations: tools.map((t) =>
                compact({ name: t.name, description: t.description, parametersJsonSchema: geminiSchema(t.parameters) }),
              ),
            },
          ]
        : undefined,
    toolConfig: tools.length > 0 ? toolConfig(request.toolChoice) : undefined,
    generationConfig: Object.keys(generationConfig).length > 0 ? generationConfig : undefined,
  });
};

/** `gemini-2.5-flash` → `models/gemini-2.5-flash`; `models/…` and `tunedModels/…` are kept. */
export const geminiModelPath = (model: string): string => (/^(models|tunedModels)\//.test(model) ? model : `models/${model}`);

export const generateContentMethod = (stream: boolean): string => (stream ? 'streamGenerateContent?alt=sse' : 'generateContent');

const geminiWire = (target: UpstreamTarget, stream: boolean, method?: string): { url: string; headers: Record<string, string> } => {
  const { connection } = target;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (stream) headers['accept'] = 'text/event-stream';
  if (connection.apiKey !== undefined && connection.apiKey !== '') headers['x-goog-api-key'] = connection.apiKey;
  for (const [k, v] of Object.entries(optionHeaders(connection.options))) setHeader(headers, k, v);
  const base = connection.baseUrl !== undefined && connection.baseUrl !== '' ? connection.baseUrl : GEMINI_DEFAULT_BASE_URL;
  return { url: `${trimTrailingSlash(base)}/${geminiModelPath(target.upstreamModel)}:${method ?? generateContentMethod(stream)}`, headers };
};

/**
 * Pass-through of a Gemini client's `generateContent` body: sent as the client wrote it, the
 * model (in the URL) the target's. `countTokens` (method) takes its body the same way.
 */
export const buildGeminiPassThrough = (body: JsonObject, target: UpstreamTarget, stream: boolean, method?: string): UpstreamHttpRequest => {
  const wire = geminiWire(target, stream, method);
  return { url: wire.url, method: 'POST', headers: wire.headers, body: JSON.stringify(body) };
};

export const buildGeminiRequest = (request: CanonicalRequest, target: UpstreamTarget): UpstreamHttpRequest => {
  const { connection } = target;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (request.stream) headers['accept'] = 'text/event-stream';
  if (connection.apiKey !== undefined && connection.apiKey !== '') headers['x-goog-api-key'] = connection.apiKey;
  for (const [k, v] of Object.entries(optionHeaders(connection.options))) setHeader(headers, k, v);
  const base = connection.baseUrl !== undefined && connection.baseUrl !== '' ? connection.baseUrl : GEMINI_DEFAULT_BASE_URL;
  return {
    url: `${trimTrailingSlash(base)}/${geminiModelPath(target.upstreamModel)}:${generateContentMethod(request.stream)}`,
    method: 'POST',
    headers,
    body: JSON.stringify(buildGenerateContentBody(request)),
  };
};
