/** OpenAI Chat Completions request body → canonical request. */
import type {
  CanonicalRequest,
  ContentPart,
  Message,
  ResponseFormat,
  ToolCall,
  ToolChoice,
  ToolDefinition,
} from '../../canonical/types.ts';
import { fileDataDocument } from '../documents.ts';
import { textParts } from '../shared.ts';
import {
  compact,
  invalidType,
  invalidValue,
  isRecord,
  joinPath,
  missingParam,
  optionalArray,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalJsonObject,
  optionalNumber,
  optionalRecord,
  optionalString,
  optionalStringList,
  optionalStringMap,
  recordAt,
  requireArray,
  requireBody,
  requireRecord,
  requireString,
  type UnknownRecord,
} from '../validate.ts';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;
const DETAILS = ['auto', 'low', 'high'] as const;
export const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
const EMPTY_SCHEMA = { type: 'object', properties: {} };

/**
 * Records what has no canonical form (audio and file parts, custom tools) instead of refusing it:
 * OpenAI takes the request as sent (pass-through); a translating target cannot
 * (CanonicalRequest.nativeOnly). The first one found is kept.
 */
type Note = (param: string, message: string) => void;

/**
 * A `file` part: `file_data` (a base64 data URL) becomes a document; a `file_id` names a file
 * uploaded to OpenAI, which only OpenAI can read (native-only).
 */
const decodeFile = (part: UnknownRecord, partPath: string, note: Note): ContentPart[] => {
  const filePath = joinPath(partPath, 'file');
  const file = requireRecord(part, 'file', partPath);
  const filename = optionalString(file, 'filename', filePath);
  const data = optionalString(file, 'file_data', filePath);
  if (data !== undefined) return fileDataDocument(data, filename, joinPath(filePath, 'file_data'), partPath);
  if (optionalString(file, 'file_id', filePath) !== undefined) {
    note(
      joinPath(filePath, 'file_id'),
      'A file_id names a file uploaded to OpenAI, which the gateway cannot read for another provider; send the file as file_data.',
    );
    return [];
  }
  throw missingParam(joinPath(filePath, 'file_data'));
};

/** `content` as a string or an array of parts (text, image_url, file on user turns; refusal on assistant turns). */
const decodeContent = (msg: UnknownRecord, base: string, required: boolean, note: Note, files = false): ContentPart[] => {
  const path = joinPath(base, 'content');
  const v = msg.content;
  if (v === undefined || v === null) {
    if (required) throw invalidValue(path, 'content is required for this role.');
    return [];
  }
  if (typeof v === 'string') return textParts(v);
  if (!Array.isArray(v)) throw invalidType(path, 'a string or an array of content parts', v);
  return v.flatMap((raw, j): ContentPart[] => {
    const partPath = joinPath(path, j);
    const part = recordAt(raw, partPath);
    const type = requireString(part, 'type', partPath);
    if (type === 'text') return [{ type: 'text', text: requireString(part, 'text', partPath) }];
    if (type === 'refusal') return [{ type: 'text', text: requireString(part, 'refusal', partPath) }];
    if (type === 'image_url') {
      const imgPath = joinPath(partPath, 'image_url');
      if (typeof part.image_url === 'string') return [{ type: 'image', url: part.image_url }];
      const img = requireRecord(part, 'image_url', partPath);
      const url = requireString(img, 'url', imgPath, { nonEmpty: true });
      const detail = optionalEnum(img, 'detail', DETAILS, imgPath);
      return [detail ? { type: 'image', url, detail } : { type: 'image', url }];
    }
    if (type === 'file' && files) return decodeFile(part, partPath, note);
    note(joinPath(partPath, 'type'), `Content part type '${type}' cannot be translated.`);
    return [];
  });
};

const decodeToolCalls = (msg: UnknownRecord, base: string): ToolCall[] | undefined => {
  const raw = optionalArray(msg, 'tool_calls', base);
  if (raw === undefined || raw.length === 0) return undefined;
  return raw.map((item, j) => {
    const path = joinPath(joinPath(base, 'tool_calls'), j);
    const call = recordAt(item, path);
    const type = optionalString(call, 'type', path);
    if (type !== undefined && type !== 'function') throw invalidValue(joinPath(path, 'type'), `expected 'function', but got '${type}'.`);
    const fn = requireRecord(call, 'function', path);
    const fnPath = joinPath(path, 'function');
    const args = fn.arguments;
    const argumentsText =
      args === undefined || args === null ? '' : isRecord(args) ? JSON.stringify(args) : requireString(fn, 'arguments', fnPath);
    return { id: requireString(call, 'id', path), name: requireString(fn, 'name', fnPath), arguments: argumentsText };
  });
};

const decodeMessage = (raw: unknown, i: number, note: Note): Message => {
  const base = `messages.${i}`;
  const msg = recordAt(raw, base);
  const role = optionalEnum(msg, 'role', ROLES, base);
  if (role === undefined) throw missingParam(joinPath(base, 'role'));
  switch (role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: decodeContent(msg, base, true, note) };
    case 'user':
      return { role: 'user', content: decodeContent(msg, base, true, note, true) };
    case 'assistant': {
      const toolCalls = decodeToolCalls(msg, base);
      const content = decodeContent(msg, base, false, note);
      return toolCalls ? { role: 'assistant', content, toolCalls } : { role: 'assistant', content };
    }
    case 'tool': {
      const toolCallId = requireString(msg, 'tool_call_id', base);
      const name = optionalString(msg, 'name', base);
      return compact({ role: 'tool' as const, toolCallId, name, content: decodeContent(msg, base, true, note) });
    }
  }
};

const decodeTools = (body: UnknownRecord, note: Note): ToolDefinition[] | undefined => {
  const raw = optionalArray(body, 'tools');
  if (raw === undefined) return undefined;
  return raw.flatMap((item, i) => {
    const path = `tools.${i}`;
    const tool = recordAt(item, path);
    const type = requireString(tool, 'type', path);
    if (type !== 'function') {
      note(joinPath(path, 'type'), `Tool type '${type}' cannot be translated; only 'function' tools can.`);
      return [];
    }
    const fnPath = joinPath(path, 'function');
    const fn = requireRecord(tool, 'function', path);
    return compact({
      name: requireString(fn, 'name', fnPath, { nonEmpty: true }),
      description: optionalString(fn, 'description', fnPath),
      parameters: optionalJsonObject(fn, 'parameters', fnPath) ?? { ...EMPTY_SCHEMA },
      strict: optionalBoolean(fn, 'strict', fnPath),
      param: fnPath,
      schemaParam: joinPath(fnPath, 'parameters'),
    });
  });
};

const decodeToolChoice = (body: UnknownRecord, note: Note): ToolChoice | undefined => {
  const v = body.tool_choice;
  if (v === undefined || v === null) return undefined;
  if (v === 'auto' || v === 'none' || v === 'required') return v;
  if (typeof v === 'string') throw invalidValue('tool_choice', `expected 'auto', 'none', 'required' or a function choice, but got '${v}'.`);
  if (!isRecord(v)) throw invalidType('tool_choice', 'a string or an object', v);
  const type = requireString(v, 'type', 'tool_choice');
  if (type !== 'function') {
    note('tool_choice.type', `tool_choice type '${type}' cannot be translated.`);
    return undefined;
  }
  const fn = requireRecord(v, 'function', 'tool_choice');
  return { name: requireString(fn, 'name', 'tool_choice.function', { nonEmpty: true }) };
};

/**
 * Fields only a Chat Completions upstream honours (the canonical answer carries one choice and no
 * log probabilities): noted, so OpenAI-compatible pass-through serves them and translating targets
 * (Anthropic, Gemini, …) are skipped, with a 400 naming the field when none is left.
 */
const noteChatOnly = (b: UnknownRecord, note: Note): void => {
  const n = optionalInteger(b, 'n', '', { min: 1 });
  if (n !== undefined && n > 1) note('n', `'n' > 1 (several choices) cannot be honoured by a translated upstream.`);
  if (optionalBoolean(b, 'logprobs') === true)
    note('logprobs', `'logprobs' cannot be honoured by a translated upstream (it returns no log probabilities).`);
  const top = optionalInteger(b, 'top_logprobs', '', { min: 0 });
  if (top !== undefined && top > 0)
    note('top_logprobs', `'top_logprobs' cannot be honoured by a translated upstream (it returns no log probabilities).`);
};

const decodeResponseFormat = (body: UnknownRecord): ResponseFormat | undefined => {
  const rf = optionalRecord(body, 'response_format');
  if (rf === undefined) return undefined;
  const type = optionalEnum(rf, 'type', ['text', 'json_object', 'json_schema'] as const, 'response_format');
  if (type === undefined) throw missingParam('response_format.type');
  if (type !== 'json_schema') return { type };
  const js = requireRecord(rf, 'json_schema', 'response_format');
  const base = 'response_format.json_schema';
  return compact({
    type: 'json_schema' as const,
    name: requireString(js, 'name', base, { nonEmpty: true }),
    schema: optionalJsonObject(js, 'schema', base) ?? {},
    strict: optionalBoolean(js, 'strict', base),
    description: optionalString(js, 'description', base),
    param: `${base}.schema`,
  });
};

export const decodeChatRequest = (body: unknown): CanonicalRequest => {
  const b = requireBody(body);
  const model = requireString(b, 'model', '', { nonEmpty: true });
  let nativeOnly: { param: string; message: string } | undefined;
  const note: Note = (param, message) => {
    nativeOnly ??= { param, message };
  };
  const messages = requireArray(b, 'messages', '', { nonEmpty: true }).map((m, i) => decodeMessage(m, i, note));
  const streamOptions = optionalRecord(b, 'stream_options');
  const maxCompletion = optionalInteger(b, 'max_completion_tokens', '', { min: 1 });
  const maxTokens = optionalInteger(b, 'max_tokens', '', { min: 1 });
  noteChatOnly(b, note);
  const reasoningEffort = optionalEnum(b, 'reasoning_effort', REASONING_EFFORTS);
  return compact<CanonicalRequest>({
    model,
    messages,
    stream: optionalBoolean(b, 'stream') ?? false,
    includeUsage: (streamOptions && optionalBoolean(streamOptions, 'include_usage', 'stream_options')) ?? false,
    maxTokens: maxCompletion ?? maxTokens,
    maxTokensParam: maxCompletion !== undefined ? 'max_completion_tokens' : maxTokens !== undefined ? 'max_tokens' : undefined,
    temperature: optionalNumber(b, 'temperature'),
    topP: optionalNumber(b, 'top_p'),
    stop: optionalStringList(b, 'stop'),
    seed: optionalInteger(b, 'seed'),
    presencePenalty: optionalNumber(b, 'presence_penalty'),
    frequencyPenalty: optionalNumber(b, 'frequency_penalty'),
    n: optionalInteger(b, 'n', '', { min: 1 }),
    user: optionalString(b, 'user'),
    tools: decodeTools(b, note),
    toolChoice: decodeToolChoice(b, note),
    parallelToolCalls: optionalBoolean(b, 'parallel_tool_calls'),
    responseFormat: decodeResponseFormat(b),
    reasoningEffort,
    reasoningParam: reasoningEffort !== undefined ? 'reasoning_effort' : undefined,
    metadata: optionalStringMap(b, 'metadata'),
    ...(nativeOnly ? { nativeOnly } : {}),
  });
};
