/**
 * The per-token chunk of a Chat Completions stream as a template: upstreams send every content
 * delta with the same bytes around the text (`{"id":…,"model":…,"choices":[{"index":0,"delta":
 * {"content":` … `},"logprobs":null,"finish_reason":null}]…}`). Once a chunk of that shape has been
 * decoded in full, later chunks with the same prefix and suffix are decoded by reading the one JSON
 * string between them, without `JSON.parse` of the whole chunk or the generic decoding.
 *
 * Same result as the full path by construction: the template is adopted only when a probe (the
 * learnt prefix and suffix around a marker string) parses as JSON with the marker as the only
 * member of the first and only choice's delta and nothing else that decodes to an event, so any
 * valid JSON string in that slot gives a valid chunk whose only event is that text. A slot that is
 * not exactly one valid JSON string token takes the full path (which fails the stream as before
 * when the chunk is not JSON).
 */
import { asArray, asRecord, isRecord, parseJson, type UnknownRecord } from '../json.ts';

export interface DeltaTemplate {
  readonly prefix: string;
  readonly suffix: string;
}

const LOCATOR = '"delta":{"content":"';
const MARKER = '\u0007gateway-probe';
const MARKER_TOKEN = JSON.stringify(MARKER);

const empty = (v: unknown): boolean => v === undefined || v === null;

/** The end (exclusive) of the JSON string token that starts at `from` (a quote), or -1. */
const tokenEnd = (s: string, from: number): number => {
  for (let i = from + 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 92) i++;
    else if (c === 34) return i + 1;
  }
  return -1;
};

/** Whether a parsed chunk decodes to nothing but its first choice's `delta.content` (once started). */
const onlyContent = (chunk: UnknownRecord, content: unknown): boolean => {
  if (!empty(chunk['error']) || !empty(chunk['usage']) || chunk['x_groq'] !== undefined) return false;
  const choices = asArray(chunk['choices']);
  if (!choices || choices.length !== 1) return false;
  const choice = asRecord(choices[0]);
  if (!choice || !(choice['index'] === 0 || choice['index'] === undefined) || !empty(choice['finish_reason'])) return false;
  const delta = asRecord(choice['delta']);
  if (!delta) return false;
  let keys = 0;
  for (const k in delta) if (Object.hasOwn(delta, k)) keys++;
  return keys === 1 && delta['content'] === content;
};

/**
 * The template of a chunk (trimmed `data`) whose full decoding gave exactly one text event, or
 * undefined when the chunk does not have the template's shape.
 */
export const learnDeltaTemplate = (data: string, chunk: UnknownRecord): DeltaTemplate | undefined => {
  const at = data.indexOf(LOCATOR);
  if (at === -1 || data.indexOf(LOCATOR, at + 1) !== -1 || !onlyContent(chunk, asRecord(asRecord(asArray(chunk['choices'])?.[0])?.['delta'])?.['content'])) return undefined;
  const start = at + LOCATOR.length - 1;
  const end = tokenEnd(data, start);
  if (end === -1 || data.charCodeAt(end) !== 125 /* } */) return undefined;
  const prefix = data.slice(0, start);
  const suffix = data.slice(end);
  const probe = parseJson(prefix + MARKER_TOKEN + suffix);
  if (!probe.ok || !isRecord(probe.value) || !onlyContent(probe.value, MARKER)) return undefined;
  return { prefix, suffix };
};

/**
 * The text of a chunk (trimmed `data`) that fits the template, or undefined when it does not (the
 * chunk then takes the full path).
 */
export const templateText = (t: DeltaTemplate, data: string): string | undefined => {
  const a = t.prefix.length;
  const b = data.length - t.suffix.length;
  if (b - a < 2 || !data.startsWith(t.prefix) || !data.endsWith(t.suffix) || data.charCodeAt(a) !== 34 || data.charCodeAt(b - 1) !== 34) return undefined;
  for (let i = a + 1; i < b - 1; i++) {
    const c = data.charCodeAt(i);
    if (c === 34 || c === 92 || c < 32) {
      // Escapes (or a stray quote or control character): the token is checked by the JSON parser.
      const v = parseJson(data.slice(a, b));
      return v.ok && typeof v.value === 'string' ? v.value : undefined;
    }
  }
  return data.slice(a + 1, b - 1);
};
