/** OpenAI Responses request body → canonical request. */
import type {
  CanonicalRequest,
  ContentPart,
  Message,
  Reasoning,
  ResponseFormat,
  ToolChoice,
  ToolDefinition,
} from '../../canonical/types.ts';
import { REASONING_EFFORTS } from '../chat-completions/request.ts';
import { fileDataDocument, urlDocument } from '../documents.ts';
import { openThinking, textParts } from '../shared.ts';
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
  optionalStringMap,
  recordAt,
  requireBody,
  requireString,
  type UnknownRecord,
} from '../validate.ts';

const ROLES = ['user', 'assistant', 'system', 'developer'] as const;
const DETAILS = ['auto', 'low', 'high'] as const;

/**
 * Records what has no canonical form (built-in tools, file inputs, other item types) instead of
 * refusing it: a Responses-native upstream takes the request as sent; a translating one cannot
 * (CanonicalRequest.nativeOnly). The first one found is kept.
 */
type Note = (param: string, message: string) => void;

/**
 * An `input_file`: `file_data` (a base64 data URL) or `file_url` becomes a document; a `file_id`
 * names a file uploaded to OpenAI (native-only), as does a `detail` other than `auto`.
 */
const decodeInputFile = (part: UnknownRecord, partPath: string, note: Note): ContentPart[] => {
  const filename = optionalString(part, 'filename', partPath);
  const detail = optionalEnum(part, 'detail', DETAILS, partPath);
  if (detail !== undefined && detail !== 'auto') {
    note(
      joinPath(partPath, 'detail'),
      `An input_file detail of '${detail}' cannot be translated: other providers have no rendering detail for files.`,
    );
    return [];
  }
  const data = optionalString(part, 'file_data', partPath);
  if (data !== undefined) return fileDataDocument(data, filename, joinPath(partPath, 'file_data'), partPath);
  const url = optionalString(part, 'file_url', partPath);
  if (url !== undefined) return urlDocument(url, filename, joinPath(partPath, 'file_url'), partPath);
  if (optionalString(part, 'file_id', partPath) !== undefined) {
    note(
      joinPath(partPath, 'file_id'),
      'A file_id names a file uploaded to OpenAI, which the gateway cannot read for another provider; send file_data or file_url.',
    );
    return [];
  }
  throw missingParam(joinPath(partPath, 'file_data'));
};

/** Message content: a string or input_text / output_text / input_image / refusal parts (input_file on user turns). */
const decodeContent = (v: unknown, path: string, note: Note, files = false): ContentPart[] => {
  if (typeof v === 'string') return textParts(v);
  if (!Array.isArray(v)) throw invalidType(path, 'a string or an array of content parts', v);
  return v.flatMap((raw, j): ContentPart[] => {
    const partPath = joinPath(path, j);
    const part = recordAt(raw, partPath);
    const type = requireString(part, 'type', partPath);
    switch (type) {
      case 'input_text':
      case 'output_text':
        return [{ type: 'text', text: requireString(part, 'text', partPath) }];
      case 'refusal':
        return [{ type: 'text', text: requireString(part, 'refusal', partPath) }];
      case 'input_image': {
        const url = optionalString(part, 'image_url', partPath);
        if (url === undefined || url === '') {
          note(joinPath(partPath, 'image_url'), 'An input_image without an image URL or data URL (a file_id image) cannot be translated.');
          return [];
        }
        const detail = optionalEnum(part, 'detail', DETAILS, partPath);
        return [detail ? { type: 'image', url, detail } : { type: 'image', url }];
      }
      case 'input_file':
        if (files) return decodeInputFile(part, partPath, note);
        note(joinPath(partPath, 'type'), 'An input_file outside a user message cannot be translated.');
        return [];
      default:
        note(joinPath(partPath, 'type'), `Content part type '${type}' cannot be translated.`);
        return [];
    }
  });
};

const decodeMessageItem = (item: UnknownRecord, path: string, note: Note): Message => {
  const role = optionalEnum(item, 'role', ROLES, path);
  if (role === undefined) throw missingParam(joinPath(path, 'role'));
  if (item.content === undefined || item.content === null) throw missingParam(joinPath(path, 'content'));
  const content = decodeContent(item.content, joinPath(path, 'content'), note, role === 'user');
  return { role: role === 'developer' ? 'system' : role, content };
};

/** function_call_output.output: a string or text parts. */
const decodeOutput = (item: UnknownRecord, path: string, note: Note): ContentPart[] => {
  const v = item.output;
  if (v === undefined || v === null) throw missingParam(joinPath(path, 'output'));
  return decodeContent(v, joinPath(path, 'output'), note);
};

const decodeInput = (input: unknown[], messages: Message[], note: Note): void => {
  /** Signed thinking from a reasoning item (shared.ts sealThinking): it belongs to the assistant turn that follows. */
  let thinking: Reasoning | undefined;
  const withThinking = (m: Message): Message => {
    if (m.role !== 'assistant' || thinking === undefined) return m;
    const out: Message = { ...m, reasoning: thinking };
    thinking = undefined;
    return out;
  };
  input.forEach((raw, i) => {
    const path = `input.${i}`;
    const item = recordAt(raw, path);
    const type = optionalString(item, 'type', path) ?? 'message';
    switch (type) {
      case 'message':
        messages.push(withThinking(decodeMessageItem(item, path, note)));
        return;
      case 'function_call': {
        const call = {
          id: requireString(item, 'call_id', path, { nonEmpty: true }),
          name: requireString(item, 'name', path, { nonEmpty: true }),
          arguments: optionalString(item, 'arguments', path) ?? '',
        };
        // Consecutive calls (and calls right after the assistant's text) form one assistant turn.
        const last = messages[messages.length - 1];
        if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), call];
        else messages.push(withThinking({ role: 'assistant', content: [], toolCalls: [call] }));
        return;
      }
      case 'function_call_output':
        messages.push({
          role: 'tool',
          toolCallId: requireString(item, 'call_id', path, { nonEmpty: true }),
          content: decodeOutput(item, path, note),
        });
        return;
      case 'reasoning': {
        // Opaque reasoning from OpenAI is not translated; signed thinking the gateway sealed is.
        const sealed = optionalString(item, 'encrypted_content', path);
        const opened = sealed === undefined ? undefined : openThinking(sealed);
        if (opened) thinking = opened;
        return;
      }
      default:
        note(joinPath(path, 'type'), `Input item type '${type}' cannot be translated.`);
    }
  });
};

const decodeTools = (body: UnknownRecord, note: Note): ToolDefinition[] | undefined => {
  const raw = optionalArray(body, 'tools');
  if (raw === undefined) return undefined;
  return raw.flatMap((t, i) => {
    const path = `tools.${i}`;
    const tool = recordAt(t, path);
    const type = requireString(tool, 'type', path);
    if (type !== 'function') {
      note(joinPath(path, 'type'), `Built-in tool type '${type}' cannot be translated; only 'function' tools can.`);
      return [];
    }
    return compact({
      name: requireString(tool, 'name', path, { nonEmpty: true }),
      description: optionalString(tool, 'description', path),
      parameters: optionalJsonObject(tool, 'parameters', path) ?? { type: 'object', properties: {} },
      strict: optionalBoolean(tool, 'strict', path),
      param: path,
      schemaParam: joinPath(path, 'parameters'),
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
  return { name: requireString(v, 'name', 'tool_choice', { nonEmpty: true }) };
};

const decodeTextFormat = (body: UnknownRecord): ResponseFormat | undefined => {
  const text = optionalRecord(body, 'text');
  const format = text && optionalRecord(text, 'format', 'text');
  if (format === undefined) return undefined;
  const base = 'text.format';
  const type = optionalEnum(format, 'type', ['text', 'json_object', 'json_schema'] as const, base);
  if (type === undefined) throw missingParam('text.format.type');
  if (type !== 'json_schema') return { type };
  return compact({
    type: 'json_schema' as const,
    name: requireString(format, 'name', base, { nonEmpty: true }),
    schema: optionalJsonObject(format, 'schema', base) ?? {},
    strict: optionalBoolean(format, 'strict', base),
    description: optionalString(format, 'description', base),
    param: `${base}.schema`,
  });
};

/** Log probabilities: only OpenAI's own Responses API returns them (noted: native targets serve them, translated ones are skipped). */
const noteLogprobs = (b: UnknownRecord, note: Note): void => {
  const top = optionalInteger(b, 'top_logprobs', '', { min: 0 });
  if (top !== undefined && top > 0)
    note('top_logprobs', `'top_logprobs' cannot be honoured by a translated upstream (it returns no log probabilities).`);
  const include = optionalArray(b, 'include') ?? [];
  const at = include.indexOf('message.output_text.logprobs');
  if (at !== -1)
    note(`include.${at}`, `'message.output_text.logprobs' cannot be honoured by a translated upstream (it returns no log probabilities).`);
};

export const decodeResponsesRequest = (body: unknown): CanonicalRequest => {
  const b = requireBody(body);
  const model = requireString(b, 'model', '', { nonEmpty: true });
  // The gateway is stateless: silently dropping stored conversation state would change the answer.
  for (const key of ['previous_response_id', 'conversation']) {
    if (b[key] !== undefined && b[key] !== null)
      throw invalidValue(key, 'server-side conversation state is not supported by this gateway; send the full input.');
  }
  const input = b.input;
  if (input === undefined || input === null) throw missingParam('input');
  const messages: Message[] = [];
  let nativeOnly: { param: string; message: string } | undefined;
  const note: Note = (param, message) => {
    nativeOnly ??= { param, message };
  };
  const instructions = optionalString(b, 'instructions');
  if (instructions !== undefined && instructions !== '') messages.push({ role: 'system', content: textParts(instructions) });
  if (typeof input === 'string') messages.push({ role: 'user', content: textParts(input) });
  else if (Array.isArray(input)) decodeInput(input, messages, note);
  else throw invalidType('input', 'a string or an array', input);

  const reasoning = optionalRecord(b, 'reasoning');
  const reasoningEffort = reasoning && optionalEnum(reasoning, 'effort', REASONING_EFFORTS, 'reasoning');
  noteLogprobs(b, note);
  const maxTokens = optionalInteger(b, 'max_output_tokens', '', { min: 1 });
  return compact<CanonicalRequest>({
    model,
    messages,
    stream: optionalBoolean(b, 'stream') ?? false,
    includeUsage: false,
    maxTokens,
    maxTokensParam: maxTokens !== undefined ? 'max_output_tokens' : undefined,
    temperature: optionalNumber(b, 'temperature'),
    topP: optionalNumber(b, 'top_p'),
    user: optionalString(b, 'user') ?? optionalString(b, 'safety_identifier'),
    tools: decodeTools(b, note),
    toolChoice: decodeToolChoice(b, note),
    parallelToolCalls: optionalBoolean(b, 'parallel_tool_calls'),
    responseFormat: decodeTextFormat(b),
    reasoningEffort,
    reasoningParam: reasoningEffort !== undefined ? 'reasoning.effort' : undefined,
    metadata: optionalStringMap(b, 'metadata'),
    ...(nativeOnly ? { nativeOnly } : {}),
  });
};
