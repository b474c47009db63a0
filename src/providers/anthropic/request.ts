/** Canonical request → Anthropic Messages wire request. */
import type { CanonicalRequest, ContentPart, JsonObject, JsonValue, Message, ToolChoice } from '../../canonical/types.ts';
import { invalidRequest } from '../../core/errors.ts';
import { type DocumentPart, documentRefused } from '../mapping.ts';
import {
  compact,
  isJsonObject,
  optionHeaders,
  optionNumber,
  optionString,
  optionStringList,
  parseJson,
  setHeader,
  trimTrailingSlash,
} from '../json.ts';
import { assertModelReasons, MIN_THINKING_BUDGET, thinkingBudgetOf, thinkingBudgetWithin, wantsReasoning } from '../reasoning.ts';
import type { UpstreamHttpRequest, UpstreamTarget } from '../types.ts';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_DEFAULT_VERSION = '2023-06-01';
/** `max_tokens` is required upstream; used when neither the client nor `options.defaultMaxTokens` set it. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

type Block = JsonObject;
interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

const imageBlock = (url: string): Block => {
  const m = DATA_URL.exec(url);
  if (m) return { type: 'image', source: { type: 'base64', media_type: m[1] ?? '', data: m[2] ?? '' } };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw invalidRequest('Image URLs must be http(s) URLs or base64 data URLs.', 'messages');
};

/** A PDF → a `document` block (base64 or URL source); the file name becomes its `title`. */
const documentBlock = (d: DocumentPart): Block => {
  const { source } = d;
  if (source.kind === 'url') return compact({ type: 'document', source: { type: 'url', url: source.url }, title: d.filename });
  if (source.mediaType !== 'application/pdf') {
    throw documentRefused(d, `Anthropic reads documents as PDF (application/pdf) or plain text, not '${source.mediaType}'.`);
  }
  return compact({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: source.data }, title: d.filename });
};

const partBlocks = (parts: readonly ContentPart[]): Block[] => {
  const out: Block[] = [];
  for (const p of parts) {
    if (p.type === 'image') out.push(imageBlock(p.url));
    else if (p.type === 'document') out.push(documentBlock(p));
    else if (p.text !== '') out.push({ type: 'text', text: p.text }); // empty text blocks are rejected upstream
  }
  return out;
};

const toolInput = (args: string): JsonObject => {
  const parsed = parseJson(args);
  return parsed.ok && isJsonObject(parsed.value) ? parsed.value : {};
};

const toTurn = (m: Exclude<Message, { role: 'system' }>): Turn => {
  switch (m.role) {
    case 'user':
      return { role: 'user', content: partBlocks(m.content) };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          // Signed thinking the client sent back (Responses reasoning items): first, as Anthropic requires.
          ...(m.reasoning ? [{ type: 'thinking', thinking: m.reasoning.text, signature: m.reasoning.signature }] : []),
          ...partBlocks(m.content),
          ...(m.toolCalls ?? []).map((c): Block => ({ type: 'tool_use', id: c.id, name: c.name, input: toolInput(c.arguments) })),
        ],
      };
    case 'tool': {
      const blocks = partBlocks(m.content);
      const onlyText = blocks.every((b) => b.type === 'text');
      const content: JsonValue = onlyText ? blocks.map((b) => (typeof b['text'] === 'string' ? b['text'] : '')).join('') : blocks;
      return {
        role: 'user',
        content: [compact({ type: 'tool_result', tool_use_id: m.toolCallId, content, is_error: m.isError ? true : undefined })],
      };
    }
  }
};

/** Non-system messages as alternating turns; tool results lead their user turn. */
export const toAnthropicMessages = (messages: readonly Message[]): JsonObject[] => {
  const turns: Turn[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const turn = toTurn(m);
    if (turn.content.length === 0) continue;
    const last = turns[turns.length - 1];
    if (last && last.role === turn.role) last.content.push(...turn.content);
    else turns.push(turn);
  }
  return turns.map((t) => {
    const content =
      t.role === 'user'
        ? [...t.content.filter((b) => b.type === 'tool_result'), ...t.content.filter((b) => b.type !== 'tool_result')]
        : t.content;
    return { role: t.role, content };
  });
};

const toolChoice = (choice: ToolChoice | undefined, parallel: boolean | undefined): JsonObject | undefined => {
  const base: JsonObject | undefined =
    choice === undefined
      ? undefined
      : choice === 'auto'
        ? { type: 'auto' }
        : choice === 'required'
          ? { type: 'any' }
          : choice === 'none'
            ? { type: 'none' }
            : { type: 'tool', name: choice.name };
  if (parallel !== false || base?.type === 'none') return base;
  return { ...(base ?? { type: 'auto' }), disable_parallel_tool_use: true };
};

const clamp01 = (t: number): number => Math.min(1, Math.max(0, t));

/** What `response_format: {type: "json_object"}` becomes toward Anthropic (documented in docs/client-compatibility.md). */
export const JSON_OBJECT_INSTRUCTION = 'Respond with a single valid JSON object and nothing else: no prose, no code fences.';

/**
 * `thinking` for a request asking for reasoning (src/providers/reasoning.ts). Anthropic requires
 * max_tokens > budget_tokens and counts the thinking inside max_tokens. A client that set a limit
 * gets it as `max_tokens`, the budget fitted below it (the limit bounds the total, as on OpenAI);
 * without one, the default `max_tokens` is raised to fit the budget, within the model's output limit.
 */
const thinkingOf = (request: CanonicalRequest, maxTokens: number): { thinking?: JsonObject; maxTokens: number } => {
  assertModelReasons(request);
  if (!wantsReasoning(request)) return { maxTokens };
  const param = request.reasoningParam ?? 'reasoning_effort';
  // With thinking on, Anthropic refuses a tool-use turn whose signed thinking is not sent back.
  const lastTurn = [...request.messages].reverse().find((m) => m.role === 'assistant');
  if (lastTurn?.role === 'assistant' && (lastTurn.toolCalls?.length ?? 0) > 0 && lastTurn.reasoning === undefined) {
    throw invalidRequest(
      `'${param}' cannot be honoured on this turn: with thinking on, Anthropic requires the signed thinking of the tool-use turn back with its tool results, and this request does not carry it (Chat Completions cannot; a Responses reasoning item from the gateway carries it in encrypted_content). Send the turn without '${param}', or use the Responses or Messages API.`,
      param,
    );
  }
  if (request.maxTokens !== undefined) {
    const budget = thinkingBudgetWithin(request, request.maxTokens, 'Anthropic', MIN_THINKING_BUDGET) ?? MIN_THINKING_BUDGET;
    return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens: request.maxTokens };
  }
  let budget = thinkingBudgetOf(request) ?? MIN_THINKING_BUDGET;
  let max = maxTokens;
  if (max <= budget) max = Math.min(budget + max, request.outputLimit ?? Number.MAX_SAFE_INTEGER);
  if (max <= budget) budget = max - 1;
  if (budget < MIN_THINKING_BUDGET) {
    throw invalidRequest(
      `'${param}' needs a thinking budget of at least ${MIN_THINKING_BUDGET} tokens below the output limit (${max}).`,
      param,
    );
  }
  return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens: max };
};

export const buildMessagesBody = (request: CanonicalRequest, target: UpstreamTarget): JsonObject => {
  const system = request.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''))
    .filter((s) => s !== '')
    .join('\n\n');
  const tools = request.tools ?? [];
  const rf = request.responseFormat;
  // json_object has no Anthropic field: it becomes an instruction (json_schema maps to output_config).
  const instructed =
    rf?.type === 'json_object' ? (system === '' ? JSON_OBJECT_INSTRUCTION : `${system}\n\n${JSON_OBJECT_INSTRUCTION}`) : system;
  const { thinking, maxTokens } = thinkingOf(
    request,
    request.maxTokens ?? optionNumber(target.connection.options, 'defaultMaxTokens') ?? request.outputLimit ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
  );
  return compact({
    model: target.upstreamModel,
    system: instructed === '' ? undefined : instructed,
    messages: toAnthropicMessages(request.messages),
    max_tokens: maxTokens,
    thinking,
    temperature: request.temperature === undefined ? undefined : clamp01(request.temperature),
    top_p: request.topP,
    top_k: request.topK,
    stop_sequences: request.stop && request.stop.length > 0 ? request.stop : undefined,
    tools:
      tools.length > 0
        ? tools.map((t) =>
            compact({
              name: t.name,
              description: t.description,
              // Anthropic requires `type: "object"`; OpenAI tolerates `{}` for a tool without parameters.
              input_schema: t.parameters['type'] === undefined ? { type: 'object', ...t.parameters } : t.parameters,
              // Anthropic's strict tool use (arguments always valid against the schema): as the client asked.
              strict: t.strict,
            }),
          )
        : undefined,
    tool_choice: tools.length > 0 ? toolChoice(request.toolChoice, request.parallelToolCalls) : undefined,
    output_config: rf?.type === 'json_schema' ? { format: { type: 'json_schema', schema: rf.schema } } : undefined,
    metadata: request.user !== undefined ? { user_id: request.user } : undefined,
    stream: request.stream ? true : undefined,
  });
};

const messagesHeaders = (target: UpstreamTarget, stream: boolean): Record<string, string> => {
  const { connection } = target;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': optionString(connection.options, 'anthropicVersion') ?? ANTHROPIC_DEFAULT_VERSION,
  };
  if (stream) headers['accept'] = 'text/event-stream';
  if (connection.apiKey !== undefined && connection.apiKey !== '') headers['x-api-key'] = connection.apiKey;
  const beta = optionStringList(connection.options, 'beta');
  if (beta.length > 0) headers['anthropic-beta'] = beta.join(',');
  for (const [k, v] of Object.entries(optionHeaders(connection.options))) setHeader(headers, k, v);
  return headers;
};

const messagesUrl = (target: UpstreamTarget): string => {
  const { connection } = target;
  const base = connection.baseUrl !== undefined && connection.baseUrl !== '' ? connection.baseUrl : ANTHROPIC_DEFAULT_BASE_URL;
  return `${trimTrailingSlash(base)}/v1/messages`;
};

export const buildMessagesRequest = (request: CanonicalRequest, target: UpstreamTarget): UpstreamHttpRequest => ({
  url: messagesUrl(target),
  method: 'POST',
  headers: withClientBetas(messagesHeaders(target, request.stream), request.anthropicBeta),
  body: JSON.stringify(buildMessagesBody(request, target)),
});

/** The connection's `beta` option merged with the client's `anthropic-beta` values (deduplicated, in order). */
const withClientBetas = (headers: Record<string, string>, client: readonly string[] | undefined): Record<string, string> => {
  if (client === undefined || client.length === 0) return headers;
  const have = (headers['anthropic-beta'] ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  return { ...headers, 'anthropic-beta': [...new Set([...have, ...client])].join(',') };
};

/** URL and headers per connection object of a snapshot (immutable), computed once. */
const wireCache = new WeakMap<object, { url: string; json: Record<string, string>; sse: Record<string, string> }>();

/**
 * Pass-through of a Messages body to Anthropic: the client's JSON with the upstream model (and
 * the connection's default `max_tokens` when the client sent none).
 */
export const buildMessagesPassThrough = (
  body: JsonObject,
  target: UpstreamTarget,
  stream: boolean,
  request?: CanonicalRequest,
): UpstreamHttpRequest => {
  let w = wireCache.get(target.connection);
  if (!w) {
    w = { url: messagesUrl(target), json: messagesHeaders(target, false), sse: messagesHeaders(target, true) };
    wireCache.set(target.connection, w);
  }
  const out: JsonObject = { ...body, model: target.upstreamModel };
  if (out.max_tokens === undefined)
    out.max_tokens = optionNumber(target.connection.options, 'defaultMaxTokens') ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  return {
    url: w.url,
    method: 'POST',
    headers: withClientBetas(stream ? w.sse : w.json, request?.anthropicBeta),
    body: JSON.stringify(out),
  };
};
