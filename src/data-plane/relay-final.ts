import type { ClientFormat, JsonObject, JsonValue } from '../canonical/types.ts';

/**
 * The final answer object of a relayed (same-format) stream, for the conversation keeper: a
 * Responses stream's terminal `response`, or a Messages stream's message rebuilt from its events
 * with every block as the upstream sent it (thinking blocks with their signatures, redacted
 * thinking, tool use with its input), which a thread `continue` must send back to Anthropic.
 * Only built when an answer is kept.
 */
export interface FinalCollector {
  /** One event's `data` as relayed to the client. */
  observe(data: string): void;
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

const TERMINAL = ['"response.completed"', '"response.incomplete"'];

const responsesCollector = (): FinalCollector => {
  let final: JsonObject | undefined;
  return {
    observe(data) {
      // Cheap test first: a quoted event type only appears as a JSON token (quotes in strings are escaped).
      if (!TERMINAL.some((t) => data.includes(t))) return;
      const ev = parse(data);
      if (ev && isObject(ev.response)) final = ev.response;
    },
    final: () => final,
  };
};

const messagesCollector = (): FinalCollector => {
  let message: JsonObject | undefined;
  const blocks: JsonObject[] = [];
  const partialJson = new Map<number, string>();
  const append = (block: JsonObject, key: string, text: JsonValue | undefined): void => {
    if (typeof text === 'string') block[key] = (typeof block[key] === 'string' ? block[key] : '') + text;
  };
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
          else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string')
            partialJson.set(index, (partialJson.get(index) ?? '') + d.partial_json);
          else if (d.type === 'citations_delta' && d.citation !== undefined)
            block.citations = [...(Array.isArray(block.citations) ? block.citations : []), d.citation];
          return;
        }
        case 'content_block_stop': {
          const block = blocks[index];
          const json = partialJson.get(index);
          if (block && json !== undefined) {
            const input = parse(json);
            block.input = input ?? {};
          }
          return;
        }
        case 'message_delta':
          if (message && isObject(ev.delta)) Object.assign(message, ev.delta);
          return;
        default:
          return;
      }
    },
    final: () => (message ? { ...message, content: blocks.filter(isObject) } : undefined),
  };
};

export const finalCollector = (format: ClientFormat): FinalCollector | undefined =>
  format === 'responses' ? responsesCollector() : format === 'messages' ? messagesCollector() : undefined;
