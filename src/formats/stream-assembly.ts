import type { ClientFormat, JsonObject, JsonValue } from '../canonical/types.ts';

/**
 * The final answer object of a stream in a client format, built from its events' `data` as the
 * client got them: a Chat Completions stream's `chat.completion` (every choice, content, refusal,
 * reasoning, tool calls, log probabilities, usage), a Messages stream's message with every block as
 * the upstream sent it (thinking with its signature, redacted thinking, tool use with its input,
 * citations) and its final usage, a Responses stream's terminal `response`. Used for a relayed
 * stream's answer kept for the next turn, and when a stored stream is read (records/assemble.ts).
 */
export interface StreamAssembler {
  /** One event's `data` (not `[DONE]`). */
  observe(data: string): void;
  /** The answer so far; undefined when nothing that makes one was seen. */
  final(): JsonObject | undefined;
}

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

const parse = (data: string): JsonObject | undefined => {
  try {
    const v: unknown = JSON.parse(data);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
};

const append = (target: JsonObject, key: string, text: JsonValue | undefined): void => {
  if (typeof text === 'string') target[key] = (typeof target[key] === 'string' ? target[key] : '') + text;
};

interface ChatChoice {
  message: JsonObject;
  calls: JsonObject[];
  finish: JsonValue;
  logprobs: JsonValue[] | undefined;
}

const chatAssembler = (): StreamAssembler => {
  let head: JsonObject | undefined;
  let usage: JsonValue | undefined;
  const choices: ChatChoice[] = [];
  const call = (c: ChatChoice, item: JsonObject, pos: number): void => {
    const slot = typeof item.index === 'number' ? item.index : pos;
    const fn = isObject(item.function) ? item.function : {};
    const open = (c.calls[slot] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
    const f = open.function as JsonObject;
    if (typeof item.id === 'string' && item.id !== '') open.id = item.id;
    if (typeof item.type === 'string') open.type = item.type;
    if (typeof fn.name === 'string' && fn.name !== '') f.name = fn.name;
    append(f, 'arguments', fn.arguments);
  };
  return {
    observe(data) {
      const ev = parse(data);
      if (!ev) return;
      if (!head && typeof ev.id === 'string') {
        const { choices: _c, usage: _u, object: _o, ...rest } = ev;
        head = rest;
      }
      if (isObject(ev.usage)) usage = ev.usage;
      if (!Array.isArray(ev.choices)) return;
      for (const [pos, item] of ev.choices.entries()) {
        if (!isObject(item)) continue;
        const index = typeof item.index === 'number' ? item.index : pos;
        const c = (choices[index] ??= { message: { role: 'assistant', content: null }, calls: [], finish: null, logprobs: undefined });
        const d = isObject(item.delta) ? item.delta : {};
        if (typeof d.role === 'string') c.message.role = d.role;
        append(c.message, 'content', d.content);
        append(c.message, 'refusal', d.refusal);
        append(c.message, 'reasoning_content', d.reasoning_content);
        append(c.message, 'reasoning', d.reasoning);
        if (Array.isArray(d.tool_calls)) for (const [p, t] of d.tool_calls.entries()) if (isObject(t)) call(c, t, p);
        if (typeof item.finish_reason === 'string') c.finish = item.finish_reason;
        const lp = isObject(item.logprobs) ? item.logprobs.content : undefined;
        if (Array.isArray(lp)) c.logprobs = [...(c.logprobs ?? []), ...lp];
      }
    },
    final() {
      if (!head) return undefined;
      const out = choices.flatMap((c, index) => {
        if (!c) return [];
        const calls = c.calls.filter(isObject);
        const message = calls.length > 0 ? { ...c.message, tool_calls: calls } : c.message;
        return [{ index, message, logprobs: c.logprobs ? { content: c.logprobs } : null, finish_reason: c.finish }];
      });
      return { ...head, object: 'chat.completion', choices: out, ...(usage !== undefined ? { usage } : {}) };
    },
  };
};

const TERMINAL = ['"response.completed"', '"response.incomplete"', '"response.failed"'];

const responsesAssembler = (): StreamAssembler => {
  let final: JsonObject | undefined;
  return {
    observe(data) {
      // Cheap test first: a quoted event type only appears as a JSON token (quotes in strings are escaped).
      // The created response stands for a stream that ended before its terminal event.
      if (!TERMINAL.some((t) => data.includes(t)) && (final !== undefined || !data.includes('"response.created"'))) return;
      const ev = parse(data);
      if (ev && isObject(ev.response)) final = ev.response;
    },
    final: () => final,
  };
};

const messagesAssembler = (): StreamAssembler => {
  let message: JsonObject | undefined;
  const blocks: JsonObject[] = [];
  const partialJson = new Map<number, string>();
  return {
    observe(data) {
      const ev = parse(data);
      if (!ev) return;
      const index = typeof ev.index === 'number' ? ev.index : -1;
      switch (ev.type) {
        case 'message_start':
          if (isObject(ev.message)) message = { ...ev.message };
          return;
        case 'content_block_start':
          if (isObject(ev.content_block) && index >= 0) blocks[index] = { ...ev.content_block };
          return;
        case 'content_block_delta': {
          const block = blocks[index];
          const d = ev.delta;
          if (!block || !isObject(d)) return;
          if (d.type === 'text_delta') append(block, 'text', d.text);
          else if (d.type === 'thinking_delta') append(block, 'thinking', d.thinking);
          else if (d.type === 'signature_delta') block.signature = d.signature ?? '';
          else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') partialJson.set(index, (partialJson.get(index) ?? '') + d.partial_json);
          else if (d.type === 'citations_delta' && d.citation !== undefined) block.citations = [...(Array.isArray(block.citations) ? block.citations : []), d.citation];
          return;
        }
        case 'content_block_stop': {
          const block = blocks[index];
          const json = partialJson.get(index);
          if (block && json !== undefined) block.input = parse(json) ?? {};
          return;
        }
        case 'message_delta':
          if (!message) return;
          if (isObject(ev.delta)) Object.assign(message, ev.delta);
          if (isObject(ev.usage)) message.usage = { ...(isObject(message.usage) ? message.usage : {}), ...ev.usage };
          return;
        default:
          return;
      }
    },
    final: () => (message ? { ...message, content: blocks.filter(isObject) } : undefined),
  };
};

export const streamAssembler = (format: ClientFormat): StreamAssembler =>
  format === 'chat' ? chatAssembler() : format === 'responses' ? responsesAssembler() : messagesAssembler();

/** The `data` of each event of an SSE text, `[DONE]` left out (CR, CRLF and LF line ends; multi-line data joined by LF). */
export const sseEventData = (text: string): string[] => {
  const out: string[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  let data: string[] = [];
  const flush = (): void => {
    if (data.length > 0) {
      const d = data.join('\n');
      if (d !== '[DONE]') out.push(d);
    }
    data = [];
  };
  for (const line of lines) {
    if (line === '') flush();
    else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  flush();
  return out;
};

const FORMAT_OF: Readonly<Record<string, ClientFormat>> = { '/v1/chat/completions': 'chat', '/v1/messages': 'messages', '/v1/responses': 'responses' };

/** The client format of an inference endpoint's path, if it is one. */
export const formatOfEndpoint = (endpoint: string): ClientFormat | undefined => FORMAT_OF[endpoint];

/** A whole stream's final answer object in its client format (see StreamAssembler), or undefined. */
export const assembleStream = (format: ClientFormat, sse: string): JsonObject | undefined => {
  const a = streamAssembler(format);
  for (const d of sseEventData(sse)) a.observe(d);
  return a.final();
};
