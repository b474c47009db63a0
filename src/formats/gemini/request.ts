/**
 * Gemini `GenerateContentRequest` (`POST /v1beta/models/{model}:generateContent`) → canonical
 * request. The model and streaming come from the URL (UrlRequest), never from the body.
 *
 * Function calls carry no id in Gemini's own answers: a call without one gets `call_<n>` in the
 * order of the conversation, and a `functionResponse` without one answers the earliest open call
 * of its name. A call's `thoughtSignature` rides in the canonical id after `__thought__`, as the
 * Gemini upstream adapter expects, so that it is sent back. The model's own thought summaries
 * (`thought: true` parts of `model` turns) are not sent back to any upstream (Gemini ignores them
 * too). What only Gemini itself serves (built-in tools, safety settings, cached content, audio and
 * video parts…) is noted as native-only: a Gemini upstream takes the body as sent, a translating
 * one refuses with a 400 naming the field.
 */
import type { CanonicalRequest, ContentPart, Message, ToolCall, ToolChoice, ToolDefinition } from '../../canonical/types.ts';
import { invalidRequest } from '../../core/errors.ts';
import { inlineDocument, urlDocument } from '../documents.ts';
import type { UrlRequest } from '../types.ts';
import {
  compact,
  invalidType,
  invalidValue,
  joinPath,
  optionalArray,
  optionalInteger,
  optionalNumber,
  optionalRecord,
  optionalString,
  optionalStringList,
  optionalStringMap,
  recordAt,
  requireArray,
  requireBody,
  requireString,
  toJsonValue,
  type UnknownRecord,
} from '../validate.ts';
import { jsonSchemaOf } from './schema.ts';

export const THOUGHT_SEPARATOR = '__thought__';

type Note = (param: string, message: string) => void;

const TOP_LEVEL = new Set([
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'generationConfig',
  'safetySettings',
  'cachedContent',
  'labels',
]);

/** Members of `generationConfig` with no canonical form: native-only. */
const NATIVE_GENERATION = new Set([
  'responseLogprobs',
  'logprobs',
  'speechConfig',
  'mediaResolution',
  'enableEnhancedCivicAnswers',
  'routingConfig',
  'modelSelectionConfig',
  'audioTimestamp',
  'imageConfig',
]);

/** Members of `generationConfig` the decoder maps. */
const MAPPED_GENERATION = new Set([
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'stopSequences',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'candidateCount',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  '_responseJsonSchema',
  'thinkingConfig',
  'responseModalities',
]);

const HTTP_URL = /^https?:\/\//i;

interface Calls {
  /** Open calls by function name, oldest first (their canonical ids). */
  open: Map<string, string[]>;
  count: number;
}

const takeOpen = (calls: Calls, name: string, id: string | undefined): string => {
  const queue = calls.open.get(name) ?? [];
  const at = id === undefined ? 0 : queue.findIndex((q) => q === id || q.startsWith(`${id}${THOUGHT_SEPARATOR}`));
  if (at >= 0 && queue[at] !== undefined) return queue.splice(at, 1)[0] as string;
  return id ?? `call_${calls.count++}`;
};

const dataPart = (mimeType: string, data: string, path: string, note: Note): ContentPart[] => {
  const type = mimeType.trim().toLowerCase();
  if (type.startsWith('image/')) return [{ type: 'image', url: `data:${type};base64,${data}` }];
  if (type === 'application/pdf' || type === 'text/plain') return inlineDocument(type, data, undefined, path);
  note(joinPath(path, 'inlineData'), `Inline data of type '${mimeType}' cannot be translated.`);
  return [];
};

const filePart = (file: UnknownRecord, path: string, note: Note): ContentPart[] => {
  const uri = requireString(file, 'fileUri', path, { nonEmpty: true });
  const type = (optionalString(file, 'mimeType', path) ?? '').toLowerCase();
  if (HTTP_URL.test(uri) && (type === '' || type.startsWith('image/'))) return [{ type: 'image', url: uri }];
  if (HTTP_URL.test(uri) && type === 'application/pdf') return urlDocument(uri, undefined, path, path);
  note(joinPath(path, 'fileUri'), 'A file that is not an http(s) image or PDF (an uploaded file, gs://) cannot be translated.');
  return [];
};

const NATIVE_PARTS = ['executableCode', 'codeExecutionResult', 'videoMetadata'] as const;

const callOf = (part: UnknownRecord, path: string, calls: Calls): ToolCall => {
  const fc = recordAt(part['functionCall'], joinPath(path, 'functionCall'));
  const fcPath = joinPath(path, 'functionCall');
  const name = requireString(fc, 'name', fcPath, { nonEmpty: true });
  const args = fc['args'] === undefined ? {} : recordAt(fc['args'], joinPath(fcPath, 'args'));
  const base = optionalString(fc, 'id', fcPath) ?? `call_${calls.count++}`;
  const signature = optionalString(part, 'thoughtSignature', path);
  const id = signature ? `${base}${THOUGHT_SEPARATOR}${signature}` : base;
  calls.open.set(name, [...(calls.open.get(name) ?? []), id]);
  return { id, name, arguments: JSON.stringify(toJsonValue(args) ?? {}) };
};

const resultOf = (part: UnknownRecord, path: string, calls: Calls): Message => {
  const frPath = joinPath(path, 'functionResponse');
  const fr = recordAt(part['functionResponse'], frPath);
  const name = requireString(fr, 'name', frPath, { nonEmpty: true });
  const response = fr['response'] === undefined ? {} : recordAt(fr['response'], joinPath(frPath, 'response'));
  const id = takeOpen(calls, name, optionalString(fr, 'id', frPath));
  const error = typeof response['error'] === 'string' && Object.keys(response).length === 1;
  const text = error ? (response['error'] as string) : JSON.stringify(toJsonValue(response) ?? {});
  return { role: 'tool', toolCallId: id, name, content: [{ type: 'text', text }], ...(error ? { isError: true } : {}) };
};

/** One `contents[i]` → canonical messages (a user turn with function responses gives one tool message each). */
const decodeContent = (raw: unknown, path: string, calls: Calls, note: Note): Message[] => {
  const content = recordAt(raw, path);
  const role = optionalString(content, 'role', path) ?? 'user';
  if (role !== 'user' && role !== 'model' && role !== 'function')
    throw invalidValue(joinPath(path, 'role'), "role must be 'user' or 'model'.");
  const parts = requireArray(content, 'parts', path);
  const out: Message[] = [];
  const body: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  parts.forEach((rawPart, j) => {
    const pPath = joinPath(joinPath(path, 'parts'), j);
    const part = recordAt(rawPart, pPath);
    for (const k of NATIVE_PARTS) if (part[k] !== undefined) note(joinPath(pPath, k), `A '${k}' part cannot be translated.`);
    if (part['functionCall'] !== undefined) {
      if (role !== 'model') throw invalidValue(pPath, 'a functionCall part belongs to a model turn.');
      toolCalls.push(callOf(part, pPath, calls));
    } else if (part['functionResponse'] !== undefined) {
      if (role === 'model') throw invalidValue(pPath, 'a functionResponse part belongs to a user turn.');
      out.push(resultOf(part, pPath, calls));
    } else if (typeof part['text'] === 'string') {
      if (part['thought'] === true && role === 'model') return;
      if (part['text'] !== '') body.push({ type: 'text', text: part['text'] });
    } else if (part['inlineData'] !== undefined) {
      const d = recordAt(part['inlineData'], joinPath(pPath, 'inlineData'));
      const dPath = joinPath(pPath, 'inlineData');
      body.push(...dataPart(requireString(d, 'mimeType', dPath), requireString(d, 'data', dPath), pPath, note));
    } else if (part['fileData'] !== undefined) {
      body.push(...filePart(recordAt(part['fileData'], joinPath(pPath, 'fileData')), joinPath(pPath, 'fileData'), note));
    } else if (!NATIVE_PARTS.some((k) => part[k] !== undefined) && part['thoughtSignature'] === undefined) {
      throw invalidValue(pPath, 'a part needs one of text, inlineData, fileData, functionCall or functionResponse.');
    }
  });
  if (role === 'model') {
    if (body.length > 0 || toolCalls.length > 0)
      out.push({ role: 'assistant', content: body, ...(toolCalls.length > 0 ? { toolCalls } : {}) });
  } else if (body.length > 0) out.push({ role: 'user', content: body });
  return out;
};

const decodeSystem = (v: unknown): Message | undefined => {
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v === '' ? undefined : { role: 'system', content: [{ type: 'text', text: v }] };
  const sys = recordAt(v, 'systemInstruction');
  const texts = requireArray(sys, 'parts', 'systemInstruction').map((p, j) => {
    const path = `systemInstruction.parts.${j}`;
    return requireString(recordAt(p, path), 'text', path);
  });
  const text = texts.join('\n');
  return text === '' ? undefined : { role: 'system', content: [{ type: 'text', text }] };
};

const decodeTools = (v: unknown[] | undefined, note: Note): ToolDefinition[] | undefined => {
  if (v === undefined) return undefined;
  const out: ToolDefinition[] = [];
  v.forEach((raw, i) => {
    const path = `tools.${i}`;
    const tool = recordAt(raw, path);
    for (const k of Object.keys(tool))
      if (k !== 'functionDeclarations') note(joinPath(path, k), `The built-in tool '${k}' is served by Gemini only.`);
    optionalArray(tool, 'functionDeclarations', path)?.forEach((d, j) => {
      const dPath = joinPath(joinPath(path, 'functionDeclarations'), j);
      const decl = recordAt(d, dPath);
      if (decl['response'] !== undefined || decl['responseJsonSchema'] !== undefined)
        note(joinPath(dPath, 'response'), 'A function response schema is served by Gemini only.');
      if (decl['behavior'] !== undefined) note(joinPath(dPath, 'behavior'), 'Function behavior is served by Gemini only.');
      const json = optionalRecord(decl, 'parametersJsonSchema', dPath);
      const openApi = optionalRecord(decl, 'parameters', dPath);
      const schemaParam = joinPath(dPath, json ? 'parametersJsonSchema' : 'parameters');
      const description = optionalString(decl, 'description', dPath);
      out.push({
        name: requireString(decl, 'name', dPath, { nonEmpty: true }),
        ...(description !== undefined ? { description } : {}),
        parameters: json ? jsonSchemaOf(json, false) : openApi ? jsonSchemaOf(openApi, true) : { type: 'object', properties: {} },
        param: dPath,
        schemaParam,
      });
    });
  });
  return out.length > 0 ? out : undefined;
};

const decodeToolChoice = (v: UnknownRecord | undefined, note: Note): ToolChoice | undefined => {
  const fc = v ? optionalRecord(v, 'functionCallingConfig', 'toolConfig') : undefined;
  if (v)
    for (const k of Object.keys(v)) if (k !== 'functionCallingConfig') note(`toolConfig.${k}`, `toolConfig.${k} is served by Gemini only.`);
  if (!fc) return undefined;
  const path = 'toolConfig.functionCallingConfig';
  const mode = optionalString(fc, 'mode', path) ?? 'AUTO';
  const names = optionalStringList(fc, 'allowedFunctionNames', path, false) ?? [];
  if (mode === 'NONE') return 'none';
  if (mode === 'AUTO' || mode === 'MODE_UNSPECIFIED') return 'auto';
  if (mode === 'ANY') {
    if (names.length === 1) return { name: names[0] as string };
    if (names.length > 1) note(joinPath(path, 'allowedFunctionNames'), 'More than one allowed function name is served by Gemini only.');
    return 'required';
  }
  if (mode === 'VALIDATED') {
    note(joinPath(path, 'mode'), "Mode 'VALIDATED' is served by Gemini only.");
    return 'auto';
  }
  throw invalidValue(joinPath(path, 'mode'), "mode must be one of 'AUTO', 'ANY', 'NONE', 'VALIDATED'.");
};

const EFFORT_LEVELS: Record<string, 'minimal' | 'low' | 'medium' | 'high'> = {
  MINIMAL: 'minimal',
  LOW: 'low',
  MEDIUM: 'medium',
  HIGH: 'high',
};

/** `generationConfig` → the canonical sampling, output and reasoning fields. */
const decodeGeneration = (g: UnknownRecord | undefined, note: Note): Partial<CanonicalRequest> => {
  if (!g) return {};
  const path = 'generationConfig';
  for (const k of Object.keys(g)) {
    if (NATIVE_GENERATION.has(k)) note(joinPath(path, k), `${path}.${k} is served by Gemini only.`);
    else if (!MAPPED_GENERATION.has(k)) throw invalidRequest(`Unknown parameter: '${path}.${k}'.`, joinPath(path, k));
  }
  const modalities = optionalStringList(g, 'responseModalities', path, false);
  if (modalities?.some((m) => m.toUpperCase() !== 'TEXT'))
    note(joinPath(path, 'responseModalities'), 'Output other than text is served by Gemini only.');
  const out: Partial<CanonicalRequest> = compact({
    maxTokens: optionalInteger(g, 'maxOutputTokens', path, { min: 1 }),
    temperature: optionalNumber(g, 'temperature', path),
    topP: optionalNumber(g, 'topP', path),
    topK: optionalInteger(g, 'topK', path, { min: 1 }),
    topKParam: g['topK'] !== undefined && g['topK'] !== null ? joinPath(path, 'topK') : undefined,
    stop: optionalStringList(g, 'stopSequences', path, false),
    seed: optionalInteger(g, 'seed', path),
    presencePenalty: optionalNumber(g, 'presencePenalty', path),
    frequencyPenalty: optionalNumber(g, 'frequencyPenalty', path),
    n: optionalInteger(g, 'candidateCount', path, { min: 1 }),
  });
  if (out.maxTokens !== undefined) out.maxTokensParam = 'generationConfig.maxOutputTokens';
  const mime = optionalString(g, 'responseMimeType', path);
  const schemaJson = optionalRecord(g, 'responseJsonSchema', path) ?? optionalRecord(g, '_responseJsonSchema', path);
  const schemaApi = optionalRecord(g, 'responseSchema', path);
  if (mime !== undefined && mime !== 'text/plain' && mime !== 'application/json')
    note(joinPath(path, 'responseMimeType'), `responseMimeType '${mime}' is served by Gemini only.`);
  if (schemaJson || schemaApi) {
    if (mime !== 'application/json')
      throw invalidValue(joinPath(path, 'responseMimeType'), "a response schema needs responseMimeType 'application/json'.");
    const param = joinPath(path, schemaJson ? 'responseJsonSchema' : 'responseSchema');
    out.responseFormat = {
      type: 'json_schema',
      name: 'response',
      schema: jsonSchemaOf((schemaJson ?? schemaApi) as UnknownRecord, !schemaJson),
      param,
    };
  } else if (mime === 'application/json') out.responseFormat = { type: 'json_object' };
  const thinking = optionalRecord(g, 'thinkingConfig', path);
  if (thinking) {
    const tPath = joinPath(path, 'thinkingConfig');
    const budget = optionalInteger(thinking, 'thinkingBudget', tPath, { min: -1 });
    const level = optionalString(thinking, 'thinkingLevel', tPath);
    if (level !== undefined) {
      const effort = EFFORT_LEVELS[level.toUpperCase()];
      if (!effort) throw invalidValue(joinPath(tPath, 'thinkingLevel'), "thinkingLevel must be one of 'MINIMAL', 'LOW', 'MEDIUM', 'HIGH'.");
      out.reasoningEffort = effort;
      out.reasoningParam = joinPath(tPath, 'thinkingLevel');
    } else if (budget !== undefined && budget > 0) {
      out.reasoningBudget = budget;
      out.reasoningParam = joinPath(tPath, 'thinkingBudget');
    } else if (budget === -1) {
      out.reasoningEffort = 'medium';
      out.reasoningParam = joinPath(tPath, 'thinkingBudget');
    }
  }
  return out;
};

export const decodeGeminiRequest = (raw: unknown, url?: UrlRequest): CanonicalRequest => {
  const body = requireBody(raw);
  if (!url) throw invalidRequest('A Gemini request names its model in the URL (models/{model}:generateContent).', 'model');
  for (const k of Object.keys(body)) if (!TOP_LEVEL.has(k)) throw invalidRequest(`Unknown parameter: '${k}'.`, k);
  let nativeOnly: CanonicalRequest['nativeOnly'];
  const note: Note = (param, message) => {
    nativeOnly ??= { param, message };
  };
  if (body['safetySettings'] !== undefined) note('safetySettings', 'Safety settings are served by Gemini only.');
  if (body['cachedContent'] !== undefined) note('cachedContent', 'Cached content is served by Gemini only.');
  const calls: Calls = { open: new Map(), count: 0 };
  const contents = requireArray(body, 'contents', '', { nonEmpty: true });
  const system = decodeSystem(body['systemInstruction']);
  const messages: Message[] = system ? [system] : [];
  contents.forEach((c, i) => {
    for (const m of decodeContent(c, `contents.${i}`, calls, note)) messages.push(m);
  });
  if (body['tools'] !== undefined && !Array.isArray(body['tools'])) throw invalidType('tools', 'an array', body['tools']);
  const tools = decodeTools(optionalArray(body, 'tools'), note);
  const toolChoice = decodeToolChoice(optionalRecord(body, 'toolConfig'), note);
  const metadata = optionalStringMap(body, 'labels');
  const request: CanonicalRequest = {
    model: url.model,
    messages,
    stream: url.stream,
    includeUsage: url.stream,
    ...decodeGeneration(optionalRecord(body, 'generationConfig'), note),
    ...(tools ? { tools } : {}),
    ...(toolChoice !== undefined ? { toolChoice } : {}),
    ...(metadata ? { metadata } : {}),
  };
  if (nativeOnly) request.nativeOnly = nativeOnly;
  return request;
};
