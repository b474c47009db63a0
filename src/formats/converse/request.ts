/**
 * Bedrock Converse request (`POST /model/{modelId}/converse`, `/converse-stream`) → canonical
 * request. The model and streaming come from the URL (UrlRequest). Image and document bytes are
 * base64 in the JSON (as the AWS SDKs send them). What only Bedrock serves (guardrails, cache
 * points, prompt variables, S3 sources, video, model-specific request fields other than `top_k`
 * and `thinking`) is noted as native-only: a Bedrock upstream takes the body as sent, a
 * translating one refuses with a 400 naming the field.
 */
import type { CanonicalRequest, ContentPart, Message, ToolCall, ToolChoice, ToolDefinition } from '../../canonical/types.ts';
import { invalidRequest } from '../../core/errors.ts';
import { inlineDocument } from '../documents.ts';
import type { UrlRequest } from '../types.ts';
import {
  compact,
  invalidValue,
  joinPath,
  optionalArray,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalRecord,
  optionalString,
  optionalStringList,
  optionalStringMap,
  recordAt,
  requireArray,
  requireRecord,
  requireBody,
  requireString,
  toJsonValue,
  type UnknownRecord,
} from '../validate.ts';

type Note = (param: string, message: string) => void;

const TOP_LEVEL = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
  'serviceTier',
]);
const NATIVE_TOP = ['guardrailConfig', 'additionalModelResponseFieldPaths', 'promptVariables', 'performanceConfig', 'serviceTier'];
const INFERENCE = new Set(['maxTokens', 'temperature', 'topP', 'stopSequences']);
const NATIVE_BLOCKS = ['cachePoint', 'guardContent', 'video', 'citationsContent', 'searchResult', 'audio'];

export const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };
const DOCUMENT_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  txt: 'text/plain',
  csv: 'text/csv',
  md: 'text/markdown',
  html: 'text/html',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** `source.bytes` (base64), or a note for another source (S3). */
const bytesOf = (block: UnknownRecord, path: string, note: Note): string | undefined => {
  const source = requireRecord(block, 'source', path);
  const srcPath = joinPath(path, 'source');
  if (typeof source['bytes'] === 'string') return source['bytes'];
  if (typeof source['text'] === 'string') return Buffer.from(source['text'], 'utf8').toString('base64');
  note(srcPath, 'Only bytes can be translated (not an S3 location or other source).');
  return undefined;
};

const mediaBlock = (b: UnknownRecord, path: string, note: Note): ContentPart[] => {
  if (b['image'] !== undefined) {
    const iPath = joinPath(path, 'image');
    const image = recordAt(b['image'], iPath);
    const format = requireString(image, 'format', iPath);
    const type = IMAGE_TYPES[format];
    if (!type) throw invalidValue(joinPath(iPath, 'format'), "format must be one of 'png', 'jpeg', 'gif', 'webp'.");
    const data = bytesOf(image, iPath, note);
    return data === undefined ? [] : [{ type: 'image', url: `data:${type};base64,${data}` }];
  }
  const dPath = joinPath(path, 'document');
  const doc = recordAt(b['document'], dPath);
  const format = requireString(doc, 'format', dPath);
  const type = DOCUMENT_TYPES[format];
  if (!type) throw invalidValue(joinPath(dPath, 'format'), `document format '${format}' is not one Converse takes.`);
  const data = bytesOf(doc, dPath, note);
  return data === undefined ? [] : inlineDocument(type, data, optionalString(doc, 'name', dPath), dPath);
};

const toolResultParts = (r: UnknownRecord, path: string, note: Note): ContentPart[] =>
  (optionalArray(r, 'content', path) ?? []).flatMap((raw, k): ContentPart[] => {
    const cPath = joinPath(joinPath(path, 'content'), k);
    const c = recordAt(raw, cPath);
    if (typeof c['text'] === 'string') return c['text'] === '' ? [] : [{ type: 'text', text: c['text'] }];
    if (c['json'] !== undefined) return [{ type: 'text', text: JSON.stringify(toJsonValue(c['json']) ?? null) }];
    if (c['image'] !== undefined || c['document'] !== undefined) return mediaBlock(c, cPath, note);
    note(cPath, 'This tool result content cannot be translated.');
    return [];
  });

const decodeMessage = (raw: unknown, path: string, note: Note): Message[] => {
  const m = recordAt(raw, path);
  const role = requireString(m, 'role', path);
  if (role !== 'user' && role !== 'assistant') throw invalidValue(joinPath(path, 'role'), "role must be 'user' or 'assistant'.");
  const blocks = requireArray(m, 'content', path);
  const out: Message[] = [];
  const parts: ContentPart[] = [];
  const calls: ToolCall[] = [];
  let reasoning: { text: string; signature: string } | undefined;
  blocks.forEach((rawBlock, j) => {
    const bPath = joinPath(joinPath(path, 'content'), j);
    const b = recordAt(rawBlock, bPath);
    const native = NATIVE_BLOCKS.find((k) => b[k] !== undefined);
    if (native) {
      note(joinPath(bPath, native), `A '${native}' block is served by Bedrock only.`);
      return;
    }
    if (typeof b['text'] === 'string') {
      if (b['text'] !== '') parts.push({ type: 'text', text: b['text'] });
    } else if (b['image'] !== undefined || b['document'] !== undefined) {
      parts.push(...mediaBlock(b, bPath, note));
    } else if (b['toolUse'] !== undefined) {
      const uPath = joinPath(bPath, 'toolUse');
      if (role !== 'assistant') throw invalidValue(uPath, 'a toolUse block belongs to an assistant message.');
      const use = recordAt(b['toolUse'], uPath);
      const input = use['input'] === undefined ? {} : toJsonValue(use['input']);
      calls.push({
        id: requireString(use, 'toolUseId', uPath, { nonEmpty: true }),
        name: requireString(use, 'name', uPath, { nonEmpty: true }),
        arguments: JSON.stringify(input ?? {}),
      });
    } else if (b['toolResult'] !== undefined) {
      const rPath = joinPath(bPath, 'toolResult');
      if (role !== 'user') throw invalidValue(rPath, 'a toolResult block belongs to a user message.');
      const r = recordAt(b['toolResult'], rPath);
      const status = optionalString(r, 'status', rPath);
      out.push({
        role: 'tool',
        toolCallId: requireString(r, 'toolUseId', rPath, { nonEmpty: true }),
        content: toolResultParts(r, rPath, note),
        ...(status === 'error' ? { isError: true } : {}),
      });
    } else if (b['reasoningContent'] !== undefined) {
      const rPath = joinPath(bPath, 'reasoningContent');
      const rc = recordAt(b['reasoningContent'], rPath);
      const text = optionalRecord(rc, 'reasoningText', rPath);
      if (!text) {
        note(rPath, 'Redacted reasoning is served by Bedrock only.');
        return;
      }
      const tPath = joinPath(rPath, 'reasoningText');
      reasoning = { text: requireString(text, 'text', tPath), signature: optionalString(text, 'signature', tPath) ?? '' };
    } else throw invalidValue(bPath, 'a content block needs one of text, image, document, toolUse, toolResult or reasoningContent.');
  });
  if (role === 'assistant') {
    out.push({ role: 'assistant', content: parts, ...(calls.length > 0 ? { toolCalls: calls } : {}), ...(reasoning ? { reasoning } : {}) });
  } else if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
};

const decodeSystem = (v: unknown[] | undefined, note: Note): Message | undefined => {
  if (!v) return undefined;
  const texts: string[] = [];
  v.forEach((raw, i) => {
    const path = `system.${i}`;
    const b = recordAt(raw, path);
    if (typeof b['text'] === 'string') texts.push(b['text']);
    else note(path, 'Only text system blocks can be translated.');
  });
  const text = texts.join('\n');
  return text === '' ? undefined : { role: 'system', content: [{ type: 'text', text }] };
};

const decodeToolConfig = (c: UnknownRecord | undefined, note: Note): { tools?: ToolDefinition[]; toolChoice?: ToolChoice } => {
  if (!c) return {};
  const tools: ToolDefinition[] = [];
  requireArray(c, 'tools', 'toolConfig').forEach((raw, i) => {
    const path = `toolConfig.tools.${i}`;
    const t = recordAt(raw, path);
    if (t['toolSpec'] === undefined) {
      note(path, 'Only toolSpec tools can be translated.');
      return;
    }
    const sPath = joinPath(path, 'toolSpec');
    const spec = recordAt(t['toolSpec'], sPath);
    const schema = requireRecord(requireRecord(spec, 'inputSchema', sPath), 'json', joinPath(sPath, 'inputSchema'));
    const parameters = toJsonValue(schema);
    const description = optionalString(spec, 'description', sPath);
    const strict = optionalBoolean(spec, 'strict', sPath);
    tools.push({
      name: requireString(spec, 'name', sPath, { nonEmpty: true }),
      ...(description !== undefined ? { description } : {}),
      parameters: parameters !== null && typeof parameters === 'object' && !Array.isArray(parameters) ? parameters : {},
      ...(strict !== undefined ? { strict } : {}),
      param: sPath,
      schemaParam: joinPath(sPath, 'inputSchema.json'),
    });
  });
  const choice = optionalRecord(c, 'toolChoice', 'toolConfig');
  let toolChoice: ToolChoice | undefined;
  if (choice?.['auto'] !== undefined) toolChoice = 'auto';
  else if (choice?.['any'] !== undefined) toolChoice = 'required';
  else if (choice?.['tool'] !== undefined)
    toolChoice = { name: requireString(recordAt(choice['tool'], 'toolConfig.toolChoice.tool'), 'name', 'toolConfig.toolChoice.tool') };
  else if (choice) throw invalidValue('toolConfig.toolChoice', 'toolChoice needs one of auto, any or tool.');
  return { ...(tools.length > 0 ? { tools } : {}), ...(toolChoice ? { toolChoice } : {}) };
};

/** `additionalModelRequestFields`: `top_k` and Anthropic's `thinking` map; anything else is Bedrock's own. */
const decodeAdditional = (a: UnknownRecord | undefined, note: Note): Partial<CanonicalRequest> => {
  if (!a) return {};
  const path = 'additionalModelRequestFields';
  const out: Partial<CanonicalRequest> = {};
  for (const k of Object.keys(a)) {
    if (k === 'top_k') {
      out.topK = optionalInteger(a, 'top_k', path, { min: 1 });
      out.topKParam = `${path}.top_k`;
    } else if (k === 'thinking') {
      const t = recordAt(a[k], `${path}.thinking`);
      if (optionalString(t, 'type', `${path}.thinking`) === 'enabled') {
        out.reasoningBudget = optionalInteger(t, 'budget_tokens', `${path}.thinking`, { min: 1 });
        out.reasoningParam = `${path}.thinking`;
      }
    } else note(joinPath(path, k), `additionalModelRequestFields.${k} is served by Bedrock only.`);
  }
  return compact(out);
};

export const decodeConverseRequest = (raw: unknown, url?: UrlRequest): CanonicalRequest => {
  const body = requireBody(raw);
  if (!url) throw invalidRequest('A Converse request names its model in the URL (/model/{modelId}/converse).', 'modelId');
  for (const k of Object.keys(body)) if (!TOP_LEVEL.has(k)) throw invalidRequest(`Unknown parameter: '${k}'.`, k);
  let nativeOnly: CanonicalRequest['nativeOnly'];
  const note: Note = (param, message) => {
    nativeOnly ??= { param, message };
  };
  for (const k of NATIVE_TOP) if (body[k] !== undefined) note(k, `${k} is served by Bedrock only.`);
  const system = decodeSystem(optionalArray(body, 'system'), note);
  const messages: Message[] = system ? [system] : [];
  requireArray(body, 'messages', '', { nonEmpty: true }).forEach((m, i) => {
    for (const out of decodeMessage(m, `messages.${i}`, note)) messages.push(out);
  });
  const inf = optionalRecord(body, 'inferenceConfig');
  for (const k of Object.keys(inf ?? {}))
    if (!INFERENCE.has(k)) throw invalidRequest(`Unknown parameter: 'inferenceConfig.${k}'.`, `inferenceConfig.${k}`);
  const maxTokens = inf ? optionalInteger(inf, 'maxTokens', 'inferenceConfig', { min: 1 }) : undefined;
  const metadata = optionalStringMap(body, 'requestMetadata');
  const request: CanonicalRequest = {
    model: url.model,
    messages,
    stream: url.stream,
    includeUsage: url.stream,
    ...compact({
      maxTokens,
      maxTokensParam: maxTokens !== undefined ? 'inferenceConfig.maxTokens' : undefined,
      temperature: inf ? optionalNumber(inf, 'temperature', 'inferenceConfig') : undefined,
      topP: inf ? optionalNumber(inf, 'topP', 'inferenceConfig') : undefined,
      stop: inf ? optionalStringList(inf, 'stopSequences', 'inferenceConfig', false) : undefined,
    }),
    ...decodeToolConfig(optionalRecord(body, 'toolConfig'), note),
    ...decodeAdditional(optionalRecord(body, 'additionalModelRequestFields'), note),
    ...(metadata ? { metadata } : {}),
  };
  if (nativeOnly) request.nativeOnly = nativeOnly;
  return request;
};
