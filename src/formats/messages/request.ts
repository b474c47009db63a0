/** Anthropic Messages request body → canonical request. */
import type {
  CanonicalRequest,
  ContentPart,
  Message,
  ResponseFormat,
  ToolCall,
  ToolChoice,
  ToolDefinition,
} from '../../canonical/types.ts';
import { inlineDocument, urlDocument } from '../documents.ts';
import { textParts } from '../shared.ts';
import {
  compact,
  invalidType,
  invalidValue,
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
  recordAt,
  requireArray,
  requireBody,
  requireInteger,
  requireRecord,
  requireString,
  type UnknownRecord,
} from '../validate.ts';

type Block = { block: UnknownRecord; type: string; path: string };

/**
 * Records what has no canonical form (documents, server tools and their blocks, file sources)
 * instead of refusing it: an Anthropic upstream takes the request as sent (pass-through); a
 * translating one cannot (CanonicalRequest.nativeOnly). The first one found is kept.
 */
type Note = (param: string, message: string) => void;

/** `content` as a string or an array of typed blocks. */
const blocksOf = (v: unknown, path: string): Block[] | string => {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) throw invalidType(path, 'a string or an array of content blocks', v);
  return v.map((raw, j) => {
    const blockPath = joinPath(path, j);
    const block = recordAt(raw, blockPath);
    return { block, type: requireString(block, 'type', blockPath), path: blockPath };
  });
};

const decodeImage = ({ block, path }: Block, note: Note): ContentPart[] => {
  const source = requireRecord(block, 'source', path);
  const srcPath = joinPath(path, 'source');
  const type = requireString(source, 'type', srcPath);
  if (type === 'base64') {
    const mediaType = requireString(source, 'media_type', srcPath, { nonEmpty: true });
    return [{ type: 'image', url: `data:${mediaType};base64,${requireString(source, 'data', srcPath)}` }];
  }
  if (type === 'url') return [{ type: 'image', url: requireString(source, 'url', srcPath, { nonEmpty: true }) }];
  note(joinPath(srcPath, 'type'), `Image source type '${type}' cannot be translated.`);
  return [];
};

/**
 * A `document` block: a base64 PDF or a URL becomes a document part (its `title` the file name),
 * plain text a text part. File-id and content sources, `context` and enabled citations have no
 * canonical form (native-only).
 */
const decodeDocument = ({ block, path }: Block, note: Note): ContentPart[] => {
  const source = requireRecord(block, 'source', path);
  const srcPath = joinPath(path, 'source');
  const type = requireString(source, 'type', srcPath);
  const title = optionalString(block, 'title', path);
  const citations = optionalRecord(block, 'citations', path);
  if (citations && optionalBoolean(citations, 'enabled', joinPath(path, 'citations')) === true) {
    note(joinPath(path, 'citations'), 'Document citations cannot be translated: other providers return no citations.');
    return [];
  }
  if (optionalString(block, 'context', path)) {
    note(joinPath(path, 'context'), 'Document context cannot be translated.');
    return [];
  }
  if (type === 'base64') {
    const mediaType = requireString(source, 'media_type', srcPath, { nonEmpty: true });
    return inlineDocument(mediaType, requireString(source, 'data', srcPath, { nonEmpty: true }), title, path);
  }
  if (type === 'url') return urlDocument(requireString(source, 'url', srcPath, { nonEmpty: true }), title, joinPath(srcPath, 'url'), path);
  if (type === 'text') return textParts(requireString(source, 'data', srcPath));
  note(joinPath(srcPath, 'type'), `Document source type '${type}' cannot be translated.`);
  return [];
};

/** Text, image and document blocks (user turns, tool results). */
const decodePart = (b: Block, note: Note): ContentPart[] => {
  if (b.type === 'text') return [{ type: 'text', text: requireString(b.block, 'text', b.path) }];
  if (b.type === 'image') return decodeImage(b, note);
  if (b.type === 'document') return decodeDocument(b, note);
  note(joinPath(b.path, 'type'), `Content block type '${b.type}' cannot be translated.`);
  return [];
};

const decodeToolResult = (b: Block, names: Map<string, string>, note: Note): Message => {
  const toolCallId = requireString(b.block, 'tool_use_id', b.path, { nonEmpty: true });
  const raw = b.block.content;
  const blocks = raw === undefined || raw === null ? '' : blocksOf(raw, joinPath(b.path, 'content'));
  const content = typeof blocks === 'string' ? textParts(blocks) : blocks.flatMap((x) => decodePart(x, note));
  const isError = optionalBoolean(b.block, 'is_error', b.path);
  return compact({ role: 'tool' as const, toolCallId, name: names.get(toolCallId), content, isError });
};

/** One Messages turn → one or more canonical messages (tool_result blocks become tool messages). */
const decodeTurn = (raw: unknown, i: number, names: Map<string, string>, out: Message[], note: Note): void => {
  const base = `messages.${i}`;
  const msg = recordAt(raw, base);
  const role = optionalEnum(msg, 'role', ['user', 'assistant'] as const, base);
  if (role === undefined) throw missingParam(joinPath(base, 'role'));
  if (msg.content === undefined || msg.content === null) throw missingParam(joinPath(base, 'content'));
  const blocks = blocksOf(msg.content, joinPath(base, 'content'));
  if (typeof blocks === 'string') {
    out.push({ role, content: textParts(blocks) });
    return;
  }
  if (role === 'assistant') {
    const content: ContentPart[] = [];
    const toolCalls: ToolCall[] = [];
    for (const b of blocks) {
      if (b.type === 'text') content.push({ type: 'text', text: requireString(b.block, 'text', b.path) });
      else if (b.type === 'tool_use') {
        const id = requireString(b.block, 'id', b.path, { nonEmpty: true });
        const name = requireString(b.block, 'name', b.path, { nonEmpty: true });
        const input = optionalJsonObject(b.block, 'input', b.path) ?? {};
        names.set(id, name);
        toolCalls.push({ id, name, arguments: JSON.stringify(input) });
      } else if (b.type === 'thinking' || b.type === 'redacted_thinking') continue;
      else note(joinPath(b.path, 'type'), `Content block type '${b.type}' cannot be translated.`);
    }
    out.push(toolCalls.length > 0 ? { role: 'assistant', content, toolCalls } : { role: 'assistant', content });
    return;
  }
  // User turn: keep block order; tool results split the turn into tool messages.
  let pending: ContentPart[] = [];
  const flush = (): void => {
    if (pending.length > 0) out.push({ role: 'user', content: pending });
    pending = [];
  };
  for (const b of blocks) {
    if (b.type === 'tool_result') {
      flush();
      out.push(decodeToolResult(b, names, note));
    } else pending.push(...decodePart(b, note));
  }
  flush();
  if (blocks.length === 0) out.push({ role: 'user', content: [] });
};

const decodeSystem = (body: UnknownRecord): Message | undefined => {
  const v = body.system;
  if (v === undefined || v === null) return undefined;
  const blocks = blocksOf(v, 'system');
  const content =
    typeof blocks === 'string'
      ? textParts(blocks)
      : blocks.map((b): ContentPart => {
          if (b.type !== 'text') throw invalidValue(joinPath(b.path, 'type'), `system blocks must be of type 'text', got '${b.type}'.`);
          return { type: 'text', text: requireString(b.block, 'text', b.path) };
        });
  return content.length > 0 ? { role: 'system', content } : undefined;
};

const decodeTools = (body: UnknownRecord, note: Note): ToolDefinition[] | undefined => {
  const raw = optionalArray(body, 'tools');
  if (raw === undefined) return undefined;
  return raw.flatMap((t, i) => {
    const path = `tools.${i}`;
    const tool = recordAt(t, path);
    const type = optionalString(tool, 'type', path);
    if (type !== undefined && type !== 'custom') {
      note(joinPath(path, 'type'), `Server tool type '${type}' cannot be translated; only custom tools can.`);
      return [];
    }
    const schema = optionalJsonObject(tool, 'input_schema', path);
    if (schema === undefined) throw missingParam(joinPath(path, 'input_schema'));
    return compact({
      name: requireString(tool, 'name', path, { nonEmpty: true }),
      description: optionalString(tool, 'description', path),
      parameters: schema,
      strict: optionalBoolean(tool, 'strict', path),
      param: path,
      schemaParam: joinPath(path, 'input_schema'),
    });
  });
};

const decodeToolChoice = (body: UnknownRecord): { choice?: ToolChoice; parallel?: boolean } => {
  const tc = optionalRecord(body, 'tool_choice');
  if (tc === undefined) return {};
  const type = optionalEnum(tc, 'type', ['auto', 'any', 'none', 'tool'] as const, 'tool_choice');
  if (type === undefined) throw missingParam('tool_choice.type');
  const disable = optionalBoolean(tc, 'disable_parallel_tool_use', 'tool_choice');
  const parallel = disable === undefined ? undefined : !disable;
  if (type === 'tool') return { choice: { name: requireString(tc, 'name', 'tool_choice', { nonEmpty: true }) }, parallel };
  return { choice: type === 'any' ? 'required' : type, parallel };
};

/** `output_config.format` (structured outputs) → a JSON-schema response format. */
const decodeOutputFormat = (body: UnknownRecord): ResponseFormat | undefined => {
  const oc = optionalRecord(body, 'output_config');
  const format = oc && optionalRecord(oc, 'format', 'output_config');
  if (format === undefined) return undefined;
  const type = requireString(format, 'type', 'output_config.format');
  if (type !== 'json_schema') throw invalidValue('output_config.format.type', `unsupported format type '${type}'.`);
  // Anthropic's structured output always follows the schema: strict wherever the family has the choice.
  const schema = optionalJsonObject(format, 'schema', 'output_config.format') ?? {};
  return { type: 'json_schema', name: 'response', schema, strict: true, param: 'output_config.format.schema' };
};

const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

/**
 * `thinking` and `output_config.effort` → canonical reasoning: an enabled budget is kept exactly
 * (families that take an effort get it through src/providers/reasoning.ts), `output_config.effort`
 * is the effort (`xhigh` and `max` as `high`, the highest other families have); `disabled` and
 * `adaptive` without an effort ask for nothing beyond the model's default. Other thinking types
 * only Anthropic knows are noted (served natively, refused when translated).
 */
const decodeReasoning = (
  body: UnknownRecord,
  maxTokens: number,
  note: Note,
): Pick<CanonicalRequest, 'reasoningEffort' | 'reasoningBudget' | 'reasoningParam'> => {
  const oc = optionalRecord(body, 'output_config');
  const effort = oc && optionalEnum(oc, 'effort', EFFORTS, 'output_config');
  const thinking = optionalRecord(body, 'thinking');
  const type = thinking && requireString(thinking, 'type', 'thinking');
  let budget: number | undefined;
  if (thinking && type === 'enabled') {
    budget = requireInteger(thinking, 'budget_tokens', 'thinking', { min: 1024 });
    if (budget >= maxTokens) throw invalidValue('thinking.budget_tokens', `must be less than max_tokens (${maxTokens}).`);
  } else if (type !== undefined && type !== 'disabled' && type !== 'adaptive')
    note('thinking.type', `Thinking type '${type}' cannot be translated.`);
  return compact({
    reasoningEffort: effort === undefined ? undefined : effort === 'xhigh' || effort === 'max' ? 'high' : effort,
    reasoningBudget: budget,
    reasoningParam: budget !== undefined ? 'thinking.budget_tokens' : effort !== undefined ? 'output_config.effort' : undefined,
  });
};

export const decodeMessagesRequest = (body: unknown): CanonicalRequest => {
  const b = requireBody(body);
  const model = requireString(b, 'model', '', { nonEmpty: true });
  const maxTokens = requireInteger(b, 'max_tokens', '', { min: 1 });
  const turns = requireArray(b, 'messages');
  const messages: Message[] = [];
  const system = decodeSystem(b);
  if (system) messages.push(system);
  const names = new Map<string, string>();
  let nativeOnly: { param: string; message: string } | undefined;
  const note: Note = (param, message) => {
    nativeOnly ??= { param, message };
  };
  turns.forEach((t, i) => {
    decodeTurn(t, i, names, messages, note);
  });
  const { choice, parallel } = decodeToolChoice(b);
  const metadata = optionalRecord(b, 'metadata');
  return compact<CanonicalRequest>({
    model,
    messages,
    stream: optionalBoolean(b, 'stream') ?? false,
    includeUsage: false,
    maxTokens,
    maxTokensParam: 'max_tokens',
    temperature: optionalNumber(b, 'temperature'),
    topP: optionalNumber(b, 'top_p'),
    topK: optionalInteger(b, 'top_k', '', { min: 0 }),
    topKParam: b['top_k'] !== undefined && b['top_k'] !== null ? 'top_k' : undefined,
    stop: optionalStringList(b, 'stop_sequences', '', false),
    user: metadata && optionalString(metadata, 'user_id', 'metadata'),
    tools: decodeTools(b, note),
    toolChoice: choice,
    parallelToolCalls: parallel,
    responseFormat: decodeOutputFormat(b),
    ...decodeReasoning(b, maxTokens, note),
    ...(nativeOnly ? { nativeOnly } : {}),
  });
};
