import { isRecord, type UnknownRecord } from '../../core/json.ts';
import { MAX_DECODED, pdfText } from '../../governance/pdf-text.ts';

/**
 * The texts guardrails read in a JSON body (a client's request or an extra endpoint's answer), and
 * the body rebuilt with some of them changed (redaction).
 *
 * Every content string is a text — message text, instructions, system text, prompts, inputs,
 * tool-call arguments (a Messages `tool_use` block's `input`: every string in it, whatever its
 * key), tool results — but not structural fields (STRUCTURAL: `model`, `role`, ids, tool schemas,
 * binary `data`…). Documents are read as the upstream will read them, in all three client formats:
 *
 * - Messages `document` blocks: a `text` source's `data` as it is; a `base64` source of a text type
 *   (`text/plain`, `text/*`, JSON, XML, YAML…) decoded; a `base64` PDF's text (governance/pdf-text.ts);
 *   a `content` source's blocks as content.
 * - Chat `file` parts (`file.file_data`) and Responses `input_file` parts (`file_data`): the data
 *   URL decoded the same way by its media type (bare base64: a PDF when it is one, else UTF-8 text).
 *
 * A decoded text document that is redacted is re-encoded (UTF-8, base64, the same data URL prefix):
 * the upstream gets the same document with the match replaced. A PDF's text and a document that is
 * not valid UTF-8 cannot be rewritten faithfully: they are `readOnly`, and the input guardrail
 * blocks a request whose redaction would fall inside one rather than forward it unredacted.
 *
 * What the gateway cannot read is `opaque` (its description kept): a PDF whose text cannot be
 * extracted, a document of another type (a Word file, an image as a document), a document given by
 * URL or by file id. Guardrails with `documents: "refuse"` refuse a request carrying one.
 */

const STRUCTURAL = new Set([
  'model',
  'role',
  'type',
  'id',
  'name',
  'tool_call_id',
  'call_id',
  'tool_use_id',
  'previous_response_id',
  'voice',
  'response_format',
  'encoding_format',
  'size',
  'quality',
  'style',
  'user',
  'url',
  'image_url',
  'data',
  'media_type',
  'format',
  'service_tier',
  'tool_choice',
  'stop',
  'metadata',
  'signature',
  'stream_options',
  'modalities',
  'reasoning',
  'cache_control',
  'tools',
  'functions',
  'b64_json',
  'object',
  'embedding',
  'finish_reason',
  'stop_reason',
  'status',
  // Gemini, Converse and Cohere bodies (contract §13): media types, file URIs, signatures, image
  // and document bytes, ids and the configuration members (their texts are the contents').
  'mimeType',
  'fileUri',
  'thoughtSignature',
  'bytes',
  'toolUseId',
  'generationConfig',
  'toolConfig',
  'safetySettings',
  'labels',
  'inferenceConfig',
  'additionalModelRequestFields',
  'guardrailConfig',
  'requestMetadata',
  'citation_options',
  'safety_mode',
]);

/** Blocks whose `input` is the model's tool-call arguments: every string of it is content. */
const TOOL_USES = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/** One text of a body: a content string, or what a document decodes to. */
export type Leaf =
  | { kind: 'string'; raw: string }
  /** base64 (after `prefix`, a data URL's head or '') of UTF-8 text. */
  | { kind: 'base64'; raw: string; prefix: string }
  /** base64 of a PDF. */
  | { kind: 'pdf'; raw: string; prefix: string };

export interface Text {
  text: string;
  /** A change to this text cannot be written back (a PDF's text, a document that is not UTF-8). */
  readOnly: boolean;
}

const DATA_URL = /^(data:([^;,]+)(?:;[^,]*)?;base64,)(.*)$/s;
const TEXT_TYPE = /^(?:text\/[\w.+-]+|application\/(?:json|xml|yaml|x-yaml|javascript|x-ndjson|csv|sql|x-sh|[\w.-]+\+(?:json|xml)))$/i;
const PDF_TYPE = /^application\/pdf$/i;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

type Visit = (leaf: Leaf) => string;
type Opaque = (what: string) => void;

const walkValue = (value: unknown, visit: Visit, opaque: Opaque, depth: number, free: boolean): unknown => {
  if (typeof value === 'string') {
    const out = visit({ kind: 'string', raw: value });
    return out === value ? value : out;
  }
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((v, i) => {
      const n = walkValue(v, visit, opaque, depth + 1, free);
      if (n !== v) {
        copy ??= [...value];
        copy[i] = n;
      }
    });
    return copy ?? value;
  }
  const o = value as UnknownRecord;
  if (!free) {
    if (o.type === 'document' && isRecord(o.source))
      return withKey(o, 'source', documentSource(o.source, visit, opaque, depth), visit, opaque, depth);
    if (o.type === 'file' && isRecord(o.file)) return withKey(o, 'file', openaiFile(o.file, visit, opaque, depth), visit, opaque, depth);
    if (o.type === 'input_file') return openaiFile(o, visit, opaque, depth);
    if (typeof o.type === 'string' && TOOL_USES.has(o.type) && isRecord(o.input))
      return withKey(o, 'input', walkValue(o.input, visit, opaque, depth + 1, true), visit, opaque, depth);
  }
  return walkKeys(o, visit, opaque, depth, free, undefined);
};

/** The object's keys walked (all of them when `free`, else all but the structural ones and `skip`). */
const walkKeys = (
  o: UnknownRecord,
  visit: Visit,
  opaque: Opaque,
  depth: number,
  free: boolean,
  skip: string | undefined,
): UnknownRecord => {
  let copy: UnknownRecord | undefined;
  for (const k of Object.keys(o)) {
    if (k === skip || (!free && STRUCTURAL.has(k))) continue;
    const n = walkValue(o[k], visit, opaque, depth + 1, free);
    if (n !== o[k]) {
      copy ??= { ...o };
      copy[k] = n;
    }
  }
  return copy ?? o;
};

/** The object with `key` replaced by `value` (already walked) and its other keys walked. */
const withKey = (o: UnknownRecord, key: string, value: unknown, visit: Visit, opaque: Opaque, depth: number): UnknownRecord => {
  const rest = walkKeys(o, visit, opaque, depth, false, key);
  return value === o[key] ? rest : { ...rest, [key]: value };
};

/** base64 bytes of a media type (after `prefix`) as a leaf, or reported opaque. */
const encoded = (mediaType: string, raw: string, prefix: string, visit: Visit, opaque: Opaque, what: string): string => {
  const type = mediaType.trim();
  if (TEXT_TYPE.test(type)) return visit({ kind: 'base64', raw, prefix }).slice(prefix.length);
  if (PDF_TYPE.test(type)) return visit({ kind: 'pdf', raw, prefix }).slice(prefix.length);
  opaque(`${what} of type ${type.slice(0, 100)}`);
  return raw;
};

/** A Messages document source. */
const documentSource = (src: UnknownRecord, visit: Visit, opaque: Opaque, depth: number): UnknownRecord => {
  const mediaType = typeof src.media_type === 'string' ? src.media_type : '';
  if (src.type === 'text' && typeof src.data === 'string') {
    const data = visit({ kind: 'string', raw: src.data });
    return data === src.data ? src : { ...src, data };
  }
  if (src.type === 'base64' && typeof src.data === 'string') {
    const data = encoded(mediaType, src.data, '', visit, opaque, 'a document');
    return data === src.data ? src : { ...src, data };
  }
  if (src.type === 'url') opaque('a document at a URL');
  else if (src.type === 'file') opaque('a document given by file id');
  else if (src.type !== 'content') opaque('a document of an unknown source type');
  return walkKeys(src, visit, opaque, depth + 1, false, undefined);
};

/** A Chat `file` part's `file`, or a Responses `input_file` part. */
const openaiFile = (f: UnknownRecord, visit: Visit, opaque: Opaque, depth: number): UnknownRecord => {
  if (typeof f.file_id === 'string') opaque('a file given by file id');
  if (typeof f.file_url === 'string') opaque('a file at a URL');
  const rest = walkKeys(f, visit, opaque, depth, false, 'file_data');
  if (typeof f.file_data !== 'string') return rest;
  const raw = f.file_data;
  const m = DATA_URL.exec(raw);
  let data: string;
  if (m) data = (m[1] as string) + encoded(m[2] as string, m[3] as string, m[1] as string, visit, opaque, 'a file');
  else if (raw.startsWith('data:')) data = visit({ kind: 'string', raw });
  else data = encoded(sniff(raw), raw, '', visit, opaque, 'a file');
  return data === raw ? rest : { ...rest, file_data: data };
};

/** The media type of bare base64 file data: a PDF when it is one, else text when it is UTF-8. */
const sniff = (b64: string): string => {
  const head = Buffer.from(b64.slice(0, 16), 'base64').toString('latin1');
  if (head.startsWith('%PDF-')) return 'application/pdf';
  try {
    utf8.decode(Buffer.from(b64, 'base64'));
    return 'text/plain';
  } catch {
    return 'application/octet-stream';
  }
};

/** The PDF stream data one body's documents may decompress to, all together. */
interface Budget {
  left: number;
}

/** The text a leaf reads as. */
const leafText = (leaf: Leaf, budget: Budget): Text & { opaque?: string } => {
  if (leaf.kind === 'string') return { text: leaf.raw, readOnly: false };
  const bytes = Buffer.from(leaf.raw, 'base64');
  if (leaf.kind === 'pdf') {
    const pdf = pdfText(bytes, budget.left);
    budget.left -= pdf.decoded;
    return pdf.unreadable === undefined
      ? { text: pdf.text, readOnly: true }
      : { text: pdf.text, readOnly: true, opaque: `a PDF whose text cannot be read (${pdf.unreadable})` };
  }
  try {
    return { text: utf8.decode(bytes), readOnly: false };
  } catch {
    return { text: bytes.toString('utf8'), readOnly: true };
  }
};

/** The raw form of a changed leaf text (string leaves: the text; base64 ones: re-encoded, prefix kept). */
const encode = (leaf: Leaf, text: string): string =>
  leaf.kind === 'string' ? text : leaf.prefix + Buffer.from(text, 'utf8').toString('base64');

export interface BodyTexts {
  texts: Text[];
  /** What the gateway cannot read, one description each. */
  opaque: string[];
}

/** The texts of a body (see the module comment), in a fixed order. */
export const bodyTexts = (body: unknown): BodyTexts => {
  const texts: Text[] = [];
  const opaque: string[] = [];
  const budget: Budget = { left: MAX_DECODED };
  walkValue(
    body,
    (leaf) => {
      const t = leafText(leaf, budget);
      if (t.opaque) opaque.push(t.opaque);
      texts.push({ text: t.text, readOnly: t.readOnly });
      return leaf.kind === 'string' ? leaf.raw : leaf.prefix + leaf.raw;
    },
    (what) => opaque.push(what),
    0,
    false,
  );
  return { texts, opaque };
};

/** The body with its texts (as `bodyTexts` lists them) replaced by `next`; `prev` are the texts read. */
export const replaceTexts = (body: unknown, prev: readonly Text[], next: readonly string[]): unknown => {
  let i = 0;
  return walkValue(
    body,
    (leaf) => {
      const at = i++;
      const raw = leaf.kind === 'string' ? leaf.raw : leaf.prefix + leaf.raw;
      const t = next[at];
      return t === undefined || t === prev[at]?.text ? raw : encode(leaf, t);
    },
    () => undefined,
    0,
    false,
  );
};
