/**
 * Canonical request → Bedrock Converse / ConverseStream wire request.
 *
 * Every model, Anthropic ones included, goes through Converse: one request and one stream shape
 * for all families (Anthropic's `invoke` wire is not used). `top_k` is passed in
 * `additionalModelRequestFields` for Anthropic models only (refused for others); JSON mode has no Converse field and is
 * emulated with a forced tool (`JSON_TOOL`), turned back into text by the response and stream
 * mappers.
 */
import { refuseReasoning } from '../reasoning.ts';
import { refuseTopK } from '../top-k.ts';
import type { CanonicalRequest, ContentPart, JsonObject, Message, ToolChoice } from '../../canonical/types.ts';
import { textOf } from '../../canonical/types.ts';
import { compact, optionHeaders, optionString, setHeader, trimTrailingSlash } from '../json.ts';
import {
  argumentsObject,
  type DocumentPart,
  documentRefused,
  NO_URL_FETCH,
  refuseDocuments,
  refuseStrictTools,
  requireDataUrl,
  systemTexts,
} from '../mapping.ts';
import type { UpstreamHttpRequest, UpstreamTarget } from '../types.ts';
import { providerMisconfigured } from '../upstream-error.ts';

/** The forced tool that carries a JSON-mode answer; its input is returned to the client as text. */
export const JSON_TOOL = 'json_response';

type Block = JsonObject;
interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** Converse `document.format` by media type. */
const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'text/html': 'html',
  'text/markdown': 'md',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

/**
 * Converse names a document (alphanumerics, single spaces, hyphens, parentheses, square brackets;
 * unique in the request): the file name without its extension, else `document-<n>`.
 */
const documentName = (filename: string | undefined, n: number): string => {
  const base = (filename ?? '')
    .replace(/\.[A-Za-z0-9]{1,5}$/, '')
    .replace(/[^A-Za-z0-9\-()[\] ]/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
  return base === '' ? `document-${n}` : `${base}-${n}`;
};

/** A document → a Converse `document` block (inline bytes only: Converse reads S3, not URLs). */
const documentBlock = (provider: string, d: DocumentPart, n: number): Block => {
  const { source } = d;
  if (source.kind === 'url') throw documentRefused(d, `Provider '${provider}' (Converse) takes documents only as bytes; ${NO_URL_FETCH}.`);
  const format = DOCUMENT_FORMATS[source.mediaType];
  if (format === undefined) throw documentRefused(d, `Provider '${provider}' (Converse) reads no documents of type '${source.mediaType}'.`);
  return { document: { format, name: documentName(d.filename, n), source: { bytes: source.data } } };
};

const partBlocks = (provider: string, parts: readonly ContentPart[], docs: { n: number }): Block[] => {
  const out: Block[] = [];
  for (const p of parts) {
    if (p.type === 'text') {
      if (p.text !== '') out.push({ text: p.text }); // blank text blocks are rejected upstream
      continue;
    }
    if (p.type === 'document') {
      out.push(documentBlock(provider, p, ++docs.n));
      continue;
    }
    const img = requireDataUrl(p.url, provider);
    out.push({ image: { format: IMAGE_FORMATS[img.mediaType.toLowerCase()] ?? 'png', source: { bytes: img.data } } });
  }
  return out;
};

const toTurn = (provider: string, m: Exclude<Message, { role: 'system' }>, docs: { n: number }): Turn => {
  switch (m.role) {
    case 'user':
      return { role: 'user', content: partBlocks(provider, m.content, docs) };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          ...partBlocks(provider, m.content, docs),
          ...(m.toolCalls ?? []).map((c): Block => ({ toolUse: { toolUseId: c.id, name: c.name, input: argumentsObject(c.arguments) } })),
        ],
      };
    case 'tool': {
      refuseDocuments(m.content, `Provider '${provider}' takes only text in a tool result, not a document.`);
      const text = textOf(m.content);
      const result = compact({
        toolUseId: m.toolCallId,
        content: [{ text: text === '' ? ' ' : text }],
        status: m.isError ? 'error' : undefined,
      });
      return { role: 'user', content: [{ toolResult: result }] };
    }
  }
};

/** Alternating turns, consecutive same-role messages merged, tool results first in their user turn. */
export const toConverseMessages = (provider: string, messages: readonly Message[]): JsonObject[] => {
  const turns: Turn[] = [];
  const docs = { n: 0 };
  for (const m of messages) {
    if (m.role === 'system') continue;
    const turn = toTurn(provider, m, docs);
    if (turn.content.length === 0) continue;
    const last = turns[turns.length - 1];
    if (last && last.role === turn.role) last.content.push(...turn.content);
    else turns.push(turn);
  }
  return turns.map((t) => ({
    role: t.role,
    content: t.role === 'user' ? [...t.content.filter((b) => b['toolResult']), ...t.content.filter((b) => !b['toolResult'])] : t.content,
  }));
};

const isAnthropicModel = (model: string): boolean => /(^|[.:/])anthropic\.|claude/i.test(model);

const toolChoiceOf = (c: ToolChoice | undefined): JsonObject | undefined => {
  if (c === undefined || c === 'auto' || c === 'none') return c === 'auto' ? { auto: {} } : undefined;
  if (c === 'required') return { any: {} };
  return { tool: { name: c.name } };
};

/** Names used by toolUse blocks in the history: Converse wants a toolConfig that declares them. */
const historyToolNames = (messages: readonly Message[]): string[] => {
  const names = new Set<string>();
  for (const m of messages) if (m.role === 'assistant') for (const c of m.toolCalls ?? []) names.add(c.name);
  return [...names];
};

const toolConfig = (request: CanonicalRequest): JsonObject | undefined => {
  const rf = request.responseFormat;
  const declared = request.toolChoice === 'none' ? [] : (request.tools ?? []);
  const specs: JsonObject[] = [];
  const known = new Set<string>();
  const add = (name: string, description: string | undefined, schema: JsonObject): void => {
    known.add(name);
    specs.push({ toolSpec: compact({ name, description, inputSchema: { json: schema } }) });
  };
  for (const t of declared)
    add(t.name, t.description, t.parameters['type'] === undefined ? { type: 'object', ...t.parameters } : t.parameters);
  let choice = declared.length > 0 ? toolChoiceOf(request.toolChoice) : undefined;
  if (rf !== undefined && rf.type !== 'text' && declared.length === 0) {
    add(JSON_TOOL, 'Respond with the answer as this tool input.', rf.type === 'json_schema' ? rf.schema : { type: 'object' });
    choice = { tool: { name: JSON_TOOL } };
  }
  // The history may use tools the request no longer declares (or tool_choice none): declare them anyway.
  for (const name of historyToolNames(request.messages)) if (!known.has(name)) add(name, undefined, { type: 'object' });
  if (specs.length === 0) return undefined;
  return compact({ tools: specs, toolChoice: choice });
};

export const buildConverseBody = (provider: string, request: CanonicalRequest, target: UpstreamTarget): JsonObject => {
  refuseReasoning(request, 'Bedrock');
  if (!isAnthropicModel(target.upstreamModel)) refuseTopK(request, `Bedrock (${target.upstreamModel})`);
  refuseStrictTools(request, 'Bedrock', 'Converse tool specifications have no strict mode');
  const system = systemTexts(request.messages).map((text) => ({ text }));
  const inference = compact({
    maxTokens: request.maxTokens,
    temperature: request.temperature,
    topP: request.topP,
    stopSequences: request.stop && request.stop.length > 0 ? request.stop : undefined,
  });
  const extra = request.topK !== undefined && isAnthropicModel(target.upstreamModel) ? { top_k: request.topK } : undefined;
  return compact({
    messages: toConverseMessages(provider, request.messages),
    system: system.length > 0 ? system : undefined,
    inferenceConfig: Object.keys(inference).length > 0 ? inference : undefined,
    toolConfig: toolConfig(request),
    additionalModelRequestFields: extra,
  });
};

export const bedrockBaseUrl = (provider: string, target: UpstreamTarget): string => {
  const { connection } = target;
  const region = optionString(connection.options, 'region');
  if (region === undefined) throw providerMisconfigured(provider, `connection '${connection.name}' needs options.region.`);
  if (connection.baseUrl !== undefined && connection.baseUrl !== '') return trimTrailingSlash(connection.baseUrl);
  return `https://bedrock-runtime.${encodeURIComponent(region)}.amazonaws.com`;
};

/**
 * Builds the unsigned request. With `options.accessKeyId` the adapter's `authorize` signs it
 * (SigV4); without, the connection key is a Bedrock API key sent as a bearer token.
 */
export const buildConverseRequest = (provider: string, request: CanonicalRequest, target: UpstreamTarget): UpstreamHttpRequest =>
  converseWire(provider, target, request.stream, JSON.stringify(buildConverseBody(provider, request, target)));

/** Pass-through of a Converse client's body: sent as the client wrote it, the model (in the URL) the target's. */
export const buildConversePassThrough = (
  provider: string,
  body: JsonObject,
  target: UpstreamTarget,
  stream: boolean,
): UpstreamHttpRequest => converseWire(provider, target, stream, JSON.stringify(body));

const converseWire = (provider: string, target: UpstreamTarget, stream: boolean, body: string): UpstreamHttpRequest => {
  const { connection } = target;
  const base = bedrockBaseUrl(provider, target);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  headers['accept'] = stream ? 'application/vnd.amazon.eventstream' : 'application/json';
  const key = connection.apiKey;
  if (optionString(connection.options, 'accessKeyId') === undefined && key !== undefined && key !== '') {
    headers['authorization'] = `Bearer ${key}`;
  }
  for (const [k, v] of Object.entries(optionHeaders(connection.options))) setHeader(headers, k, v);
  const op = stream ? 'converse-stream' : 'converse';
  return { url: `${base}/model/${encodeURIComponent(target.upstreamModel)}/${op}`, method: 'POST', headers, body };
};
