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
  /**
   * When the suffix carries a padding member whose value changes with every event (OpenAI's stream
   * `obfuscation`: random characters that normalise payload sizes), the suffix split around that
   * value: `head` + any plain JSON string + `tail`. The value means nothing to the decoding.
   */
  readonly pad?: { readonly head: string; readonly tail: string };
}

/** The padding member of OpenAI stream events (`stream_options.include_obfuscation`, on by default). */
const PAD_LOCATOR = ',"obfuscation":"';

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
  if (choices?.length !== 1) return false;
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
export const learnTemplate = (
  data: string,
  locator: string,
  fits: (probe: UnknownRecord, marker: string) => boolean,
): DeltaTemplate | undefined => {
  const at = data.indexOf(locator);
  if (at === -1) return undefined;
  const start = at + locator.length - 1;
  const end = tokenEnd(data, start);
  if (end === -1) return undefined;
  const prefix = data.slice(0, start);
  const suffix = data.slice(end);
  const probe = parseJson(prefix + MARKER_TOKEN + suffix);
  if (!probe.ok || !isRecord(probe.value) || !fits(probe.value, MARKER)) return undefined;
  const pad = padOf(suffix);
  if (!pad) return { prefix, suffix };
  // The padding slot is adopted only if another value there decodes the same way.
  const padded = parseJson(prefix + MARKER_TOKEN + pad.head + MARKER_TOKEN + pad.tail);
  return padded.ok && isRecord(padded.value) && fits(padded.value, MARKER) ? { prefix, suffix, pad } : { prefix, suffix };
};

/** The suffix split around the padding member's value (a plain string token), if it has one. */
const padOf = (suffix: string): DeltaTemplate['pad'] => {
  const at = suffix.indexOf(PAD_LOCATOR);
  if (at === -1 || suffix.indexOf(PAD_LOCATOR, at + 1) !== -1) return undefined;
  const start = at + PAD_LOCATOR.length - 1;
  const end = tokenEnd(suffix, start);
  return end === -1 ? undefined : { head: suffix.slice(0, start), tail: suffix.slice(end) };
};

/** The end (exclusive) of a plain string token (no escapes, no control characters) at `from`, or -1. */
const plainTokenEnd = (s: string, from: number): number => {
  if (s.charCodeAt(from) !== 34) return -1;
  for (let i = from + 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 34) return i + 1;
    if (c === 92 || c < 32) return -1;
  }
  return -1;
};

/** The text of a JSON string token (`data` from `a` to `b`, quotes included), or undefined when it is not one. */
const tokenText = (data: string, a: number, b: number): string | undefined => {
  if (b - a < 2 || data.charCodeAt(a) !== 34 || data.charCodeAt(b - 1) !== 34) return undefined;
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

/** templateText for a template with a padding slot: the text token's end is found by scanning. */
const paddedText = (t: DeltaTemplate, pad: NonNullable<DeltaTemplate['pad']>, data: string): string | undefined => {
  const a = t.prefix.length;
  if (!data.startsWith(t.prefix)) return undefined;
  const b = tokenEnd(data, a);
  if (b === -1 || !data.startsWith(pad.head, b)) return undefined;
  const padEnd = plainTokenEnd(data, b + pad.head.length);
  if (padEnd === -1 || data.length - padEnd !== pad.tail.length || !data.endsWith(pad.tail)) return undefined;
  return tokenText(data, a, b);
};

/**
 * The Chat Completions template of a chunk (trimmed `data`) whose full decoding gave at most its
 * text, or undefined when the chunk does not have the template's shape.
 */
export const learnDeltaTemplate = (data: string, chunk: UnknownRecord): DeltaTemplate | undefined =>
  onlyContent(chunk, asRecord(asRecord(asArray(chunk['choices'])?.[0])?.['delta'])?.['content'])
    ? learnTemplate(data, LOCATOR, onlyContent)
    : undefined;

/**
 * The text of a chunk (trimmed `data`) that fits the template, or undefined when it does not (the
 * chunk then takes the full path).
 */
export const templateText = (t: DeltaTemplate, data: string): string | undefined => {
  if (t.pad) return paddedText(t, t.pad, data);
  const a = t.prefix.length;
  const b = data.length - t.suffix.length;
  if (b - a < 2 || !data.startsWith(t.prefix) || !data.endsWith(t.suffix)) return undefined;
  return tokenText(data, a, b);
};
