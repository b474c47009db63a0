/**
 * A stream's per-token event as a template: upstreams send every text delta with the same bytes
 * around the text (Chat Completions: `{"id":…,"model":…,"choices":[{"index":0,"delta":{"content":`
 * … `},"logprobs":null,"finish_reason":null}]…}`; Anthropic: `{"type":"content_block_delta",
 * "index":0,"delta":{"type":"text_delta","text":` … `}}`). Once an event of that shape has been
 * decoded in full, later events with the same prefix and suffix are decoded by reading the one JSON
 * string between them, without `JSON.parse` of the whole event or the generic decoding.
 *
 * Same result as the full path by construction: a template is adopted only when a probe (the
 * learnt prefix and suffix around a marker string) parses as JSON with the marker in the decoded
 * text's place and nothing else that decodes to an event, so any valid JSON string in that slot
 * gives a valid event whose only meaning is that text. A slot that is not exactly one valid JSON
 * string token takes the full path (which fails the stream as before when the event is not JSON).
 */
import { asArray, asRecord, isRecord, parseJson, type UnknownRecord } from './json.ts';

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
 * A template around the JSON string token that follows `locator` (which ends with its opening
 * quote) in `data`, adopted only if the probe (the marker in the token's place) parses and
 * `fits` it: then every valid JSON string in that slot gives the same decoding with that text.
 */
export const learnTemplate = (data: string, locator: string, fits: (probe: UnknownRecord, marker: string) => boolean): DeltaTemplate | undefined => {
  const at = data.indexOf(locator);
  if (at === -1) return undefined;
  const start = at + locator.length - 1;
  const end = tokenEnd(data, start);
  if (end === -1) return undefined;
  const prefix = data.slice(0, start);
  const suffix = data.slice(end);
  const probe = parseJson(prefix + MARKER_TOKEN + suffix);
  return probe.ok && isRecord(probe.value) && fits(probe.value, MARKER) ? { prefix, suffix } : undefined;
};

/**
 * The Chat Completions template of a chunk (trimmed `data`) whose full decoding gave at most its
 * text, or undefined when the chunk does not have the template's shape.
 */
export const learnDeltaTemplate = (data: string, chunk: UnknownRecord): DeltaTemplate | undefined =>
  onlyContent(chunk, asRecord(asRecord(asArray(chunk['choices'])?.[0])?.['delta'])?.['content']) ? learnTemplate(data, LOCATOR, onlyContent) : undefined;

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
