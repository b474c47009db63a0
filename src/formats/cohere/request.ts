/**
 * Cohere v2 `POST /v2/chat` body → canonical request. Messages are OpenAI-like (system, user,
 * assistant with `tool_calls`, tool with `tool_call_id`); sampling is `p`/`k`; `tool_choice` is
 * `REQUIRED`/`NONE`; `response_format` is `json_object` with an optional `json_schema`. A tool
 * result's documents are read as their text (a string, or an object's JSON). The model's own
 * `tool_plan` and `thinking` blocks of past assistant turns are not sent back to any upstream
 * (Cohere does not need them either). Grounding documents, citation options, safety modes,
 * logprobs and priority are Cohere's own: noted as native-only (a Cohere upstream takes the body
 * as sent, a translating one refuses with a 400 naming the field).
 */
import type { CanonicalRequest, ContentPart, Message, ResponseFormat, ToolCall, ToolDefinition } from '../../canonical/types.ts';
import { invalidRequest } from '../../core/errors.ts';
import {
  compact,
  invalidType,
  invalidValue,
  joinPath,
  optionalArray,
  optionalBoolean,
  optionalInteger,
  optionalJsonObject,
  optionalNumber,
  optionalRecord,
  optionalString,
  optionalStringList,
  recordAt,
  requireArray,
  requireBody,
  requireRecord,
  requireString,
  type UnknownRecord,
} from '../validate.ts';

type Note = (param: string, message: string) => void;

const TOP_LEVEL = new Set([
  'model',
  'messages',
  'tools',
  'strict_tools',
  'documents',
  'citation_options',
  'response_format',
  'safety_mode',
  'max_tokens',
  'stop_sequences',
  'temperature',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'k',
  'p',
  'logprobs',
  'tool_choice',
  'thinking',
  'stream',
  'priority',
]);
const NATIVE_TOP = ['documents', 'citation_options', 'safety_mode', 'logprobs', 'priority'];

const documentText = (doc: UnknownRecord, path: string): string => {
  const data = doc['data'];
  if (typeof data === 'string') return data;
  if (data !== null && typeof data === 'object') return JSON.stringify(data);
  throw invalidType(joinPath(path, 'data'), 'a string or an object', data);
};

/** `content` as a string or typed parts; `kind` says which part types the role takes. */
const partsOf = (m: UnknownRecord, path: string, role: string, note: Note): ContentPart[] => {
  const v = m['content'];
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return v === '' ? [] : [{ type: 'text', text: v }];
  if (!Array.isArray(v)) throw invalidType(joinPath(path, 'content'), 'a string or an array of content parts', v);
  const out: ContentPart[] = [];
  v.forEach((raw, j) => {
    const pPath = joinPath(joinPath(path, 'content'), j);
    const p = recordAt(raw, pPath);
    const type = requireString(p, 'type', pPath);
    if (type === 'text') {
      const text = requireString(p, 'text', pPath);
      if (text !== '') out.push({ type: 'text', text });
    } else if (type === 'image_url' && role === 'user') {
      const img = p['image_url'];
      const url = typeof img === 'string' ? img : requireString(requireRecord(p, 'image_url', pPath), 'url', joinPath(pPath, 'image_url'));
      const detail =
        typeof img === 'object' && img !== null ? optionalString(img as UnknownRecord, 'detail', joinPath(pPath, 'image_url')) : undefined;
      out.push(detail === 'low' || detail === 'high' || detail === 'auto' ? { type: 'image', url, detail } : { type: 'image', url });
    } else if (type === 'document' && role === 'tool') {
      const text = documentText(requireRecord(p, 'document', pPath), joinPath(pPath, 'document'));
      if (text !== '') out.push({ type: 'text', text });
    } else if (type === 'document') {
      note(pPath, 'A document in a user turn is served by Cohere only.');
    } else if (type === 'thinking' && role === 'assistant') {
      // The model's own thinking of a past turn: not sent back (see the module comment).
    } else throw invalidValue(joinPath(pPath, 'type'), `content part type '${type}' is not valid in a ${role} message.`);
  });
  return out;
};

const callsOf = (m: UnknownRecord, path: string): ToolCall[] =>
  (optionalArray(m, 'tool_calls', path) ?? []).map((raw, k) => {
    const cPath = joinPath(joinPath(path, 'tool_calls'), k);
    const c = recordAt(raw, cPath);
    const fPath = joinPath(cPath, 'function');
    const fn = requireRecord(c, 'function', cPath);
    return {
      id: requireString(c, 'id', cPath, { nonEmpty: true }),
      name: requireString(fn, 'name', fPath, { nonEmpty: true }),
      arguments: optionalString(fn, 'arguments', fPath) ?? '{}',
    };
  });

const decodeMessage = (raw: unknown, path: string, note: Note): Message => {
  const m = recordAt(raw, path);
  const role = requireString(m, 'role', path);
  switch (role) {
    case 'system':
      return { role: 'system', content: partsOf(m, path, role, note) };
    case 'user':
      return { role: 'user', content: partsOf(m, path, role, note) };
    case 'assistant': {
      const calls = callsOf(m, path);
      return { role: 'assistant', content: partsOf(m, path, role, note), ...(calls.length > 0 ? { toolCalls: calls } : {}) };
    }
    case 'tool':
      return {
        role: 'tool',
        toolCallId: requireString(m, 'tool_call_id', path, { nonEmpty: true }),
        content: partsOf(m, path, role, note),
      };
    default:
      throw invalidValue(joinPath(path, 'role'), "role must be one of 'system', 'user', 'assistant', 'tool'.");
  }
};

const decodeTools = (body: UnknownRecord): ToolDefinition[] | undefined => {
  const raw = optionalArray(body, 'tools');
  if (!raw || raw.length === 0) return undefined;
  const strict = optionalBoolean(body, 'strict_tools');
  return raw.map((t, i) => {
    const path = `tools.${i}`;
    const tool = recordAt(t, path);
    const type = optionalString(tool, 'type', path) ?? 'function';
    if (type !== 'function') throw invalidValue(joinPath(path, 'type'), "tool type must be 'function'.");
    const fPath = joinPath(path, 'function');
    const fn = requireRecord(tool, 'function', path);
    const description = optionalString(fn, 'description', fPath);
    return {
      name: requireString(fn, 'name', fPath, { nonEmpty: true }),
      ...(description !== undefined ? { description } : {}),
      parameters: optionalJsonObject(fn, 'parameters', fPath) ?? { type: 'object', properties: {} },
      ...(strict ? { strict: true } : {}),
      param: fPath,
      schemaParam: joinPath(fPath, 'parameters'),
    };
  });
};

const decodeFormat = (body: UnknownRecord): ResponseFormat | undefined => {
  const rf = optionalRecord(body, 'response_format');
  if (!rf) return undefined;
  const type = requireString(rf, 'type', 'response_format');
  if (type === 'text') return { type: 'text' };
  if (type !== 'json_object') throw invalidValue('response_format.type', "type must be 'text' or 'json_object'.");
  const schema = optionalJsonObject(rf, 'json_schema', 'response_format');
  return schema ? { type: 'json_schema', name: 'response', schema, param: 'response_format.json_schema' } : { type: 'json_object' };
};

const decodeThinking = (body: UnknownRecord): Partial<CanonicalRequest> => {
  const t = optionalRecord(body, 'thinking');
  if (!t || requireString(t, 'type', 'thinking') !== 'enabled') return {};
  const budget = optionalInteger(t, 'token_budget', 'thinking', { min: 1 });
  return budget !== undefined
    ? { reasoningBudget: budget, reasoningParam: 'thinking' }
    : { reasoningEffort: 'medium', reasoningParam: 'thinking' };
};

export const decodeCohereRequest = (raw: unknown): CanonicalRequest => {
  const body = requireBody(raw);
  for (const k of Object.keys(body)) if (!TOP_LEVEL.has(k)) throw invalidRequest(`Unknown parameter: '${k}'.`, k);
  let nativeOnly: CanonicalRequest['nativeOnly'];
  const note: Note = (param, message) => {
    nativeOnly ??= { param, message };
  };
  for (const k of NATIVE_TOP) if (body[k] !== undefined && body[k] !== null) note(k, `${k} is served by Cohere only.`);
  const messages = requireArray(body, 'messages', '', { nonEmpty: true }).map((m, i) => decodeMessage(m, `messages.${i}`, note));
  const stream = optionalBoolean(body, 'stream') ?? false;
  const choice = optionalString(body, 'tool_choice');
  if (choice !== undefined && choice !== 'REQUIRED' && choice !== 'NONE')
    throw invalidValue('tool_choice', "tool_choice must be 'REQUIRED' or 'NONE'.");
  const tools = decodeTools(body);
  const maxTokens = optionalInteger(body, 'max_tokens', '', { min: 1 });
  const request: CanonicalRequest = {
    model: requireString(body, 'model', '', { nonEmpty: true }),
    messages,
    stream,
    includeUsage: stream,
    ...compact({
      maxTokens,
      maxTokensParam: maxTokens !== undefined ? 'max_tokens' : undefined,
      temperature: optionalNumber(body, 'temperature'),
      topP: optionalNumber(body, 'p'),
      topK: optionalInteger(body, 'k', '', { min: 0 }),
      topKParam: body['k'] !== undefined && body['k'] !== null ? 'k' : undefined,
      stop: optionalStringList(body, 'stop_sequences', '', false),
      seed: optionalInteger(body, 'seed'),
      presencePenalty: optionalNumber(body, 'presence_penalty'),
      frequencyPenalty: optionalNumber(body, 'frequency_penalty'),
      responseFormat: decodeFormat(body),
    }),
    ...(tools ? { tools } : {}),
    ...(choice === 'REQUIRED' ? { toolChoice: 'required' as const } : choice === 'NONE' ? { toolChoice: 'none' as const } : {}),
    ...decodeThinking(body),
  };
  if (nativeOnly) request.nativeOnly = nativeOnly;
  return request;
};
