/**
 * Content-part checks of the mock upstreams, as the real APIs make them: which part and block
 * types each wire takes, and how files and documents must look (OpenAI Chat `file` parts: PDF
 * `file_data` data URLs or a `file_id`, no URL; Responses `input_file`: `file_data`, `file_url` or
 * `file_id`; Anthropic `document` blocks: base64 PDF, plain text, URL, content or file sources).
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const PDF_DATA_URL = /^data:application\/pdf;base64,[A-Za-z0-9+/]+=*$/;
const ANTHROPIC_BLOCKS = [
  'text',
  'image',
  'document',
  'search_result',
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'web_search_tool_result',
  'container_upload',
];
const CHAT_PARTS = ['text', 'image_url', 'input_audio', 'file', 'refusal'];

/** OpenAI Chat Completions: the first content part the real API refuses, as [message, param], or undefined. */
export const chatContentRefusal = (messages: readonly unknown[]): [string, string] | undefined => {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObj(m) || !Array.isArray(m.content)) continue;
    for (let j = 0; j < m.content.length; j++) {
      const part: unknown = m.content[j];
      const at = `messages[${i}].content[${j}]`;
      if (!isObj(part)) return [`Invalid type for '${at}'.`, at];
      const type = String(part.type);
      if (!CHAT_PARTS.includes(type))
        return [`Invalid value: '${type}'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', and 'file'.`, `${at}.type`];
      if (m.role === 'tool' && type !== 'text') return [`Invalid value: '${type}'. Supported values are: 'text'.`, `${at}.type`];
      if (type !== 'file') continue;
      const file = part.file;
      if (!isObj(file)) return [`Missing required parameter: '${at}.file'.`, `${at}.file`];
      for (const k of Object.keys(file))
        if (!['file_data', 'file_id', 'filename'].includes(k)) return [`Unknown parameter: '${at}.file.${k}'.`, `${at}.file.${k}`];
      if (file.file_data === undefined && file.file_id === undefined)
        return [`Missing required parameter: '${at}.file.file_data'.`, `${at}.file`];
      if (file.file_data !== undefined && !PDF_DATA_URL.test(String(file.file_data))) {
        return [
          `Invalid file data: '${at}.file.file_data'. Expected a base64-encoded data URL with an application/pdf MIME type (e.g. 'data:application/pdf;base64,SGVsbG8sIHdvcmxkIQ==').`,
          `${at}.file.file_data`,
        ];
      }
    }
  }
  return undefined;
};

/** OpenAI Responses: the first `input_file` the real API refuses, as [message, param], or undefined. */
export const responsesFileRefusal = (input: unknown): [string, string] | undefined => {
  for (const [i, item] of (Array.isArray(input) ? input : []).entries()) {
    if (!isObj(item) || !Array.isArray(item.content)) continue;
    for (const [j, part] of item.content.entries()) {
      if (!isObj(part) || part.type !== 'input_file') continue;
      const at = `input[${i}].content[${j}]`;
      if (part.file_data === undefined && part.file_id === undefined && part.file_url === undefined)
        return [`Missing required parameter: one of '${at}.file_data', 'file_id' or 'file_url'.`, at];
      if (part.file_data !== undefined && !/^data:[\w.+-]+\/[\w.+-]+;base64,/.test(String(part.file_data)))
        return [`Invalid file data: '${at}.file_data'. Expected a base64-encoded data URL.`, `${at}.file_data`];
      if (part.file_url !== undefined && !/^https?:\/\//.test(String(part.file_url)))
        return [`Invalid URL: '${at}.file_url'.`, `${at}.file_url`];
    }
  }
  return undefined;
};

const anthropicBlockRefusal = (b: unknown, at: string): string | undefined => {
  if (!isObj(b)) return `${at}: Input should be a valid dictionary`;
  const type = String(b.type);
  if (!ANTHROPIC_BLOCKS.includes(type))
    return `${at}: Input tag '${type}' found using 'type' does not match any of the expected tags: ${ANTHROPIC_BLOCKS.map((t) => `'${t}'`).join(', ')}`;
  if (type === 'tool_result' && Array.isArray(b.content)) {
    for (const [k, inner] of b.content.entries()) {
      const r = anthropicBlockRefusal(inner, `${at}.content.${k}`);
      if (r) return r;
    }
  }
  if (type !== 'document') return undefined;
  const src = b.source;
  if (!isObj(src)) return `${at}.document.source: Field required`;
  switch (src.type) {
    case 'base64':
      if (src.media_type !== 'application/pdf') return `${at}.document.source.base64.media_type: Input should be 'application/pdf'`;
      return typeof src.data === 'string' && src.data !== '' ? undefined : `${at}.document.source.base64.data: Field required`;
    case 'text':
      return src.media_type === 'text/plain' && typeof src.data === 'string'
        ? undefined
        : `${at}.document.source.text.media_type: Input should be 'text/plain'`;
    case 'url':
      return typeof src.url === 'string' && /^https?:\/\//.test(src.url) ? undefined : `${at}.document.source.url.url: Field required`;
    case 'content':
    case 'file':
      return undefined;
    default:
      return `${at}.document.source: Input tag '${String(src.type)}' found using 'type' does not match any of the expected tags: 'base64', 'content', 'text', 'url', 'file'`;
  }
};

/** Anthropic Messages: the first content block the real API refuses (its message), or undefined. */
export const anthropicContentRefusal = (messages: readonly unknown[]): string | undefined => {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObj(m) || !Array.isArray(m.content)) continue;
    for (let j = 0; j < m.content.length; j++) {
      const r = anthropicBlockRefusal(m.content[j], `messages.${i}.content.${j}`);
      if (r) return r;
    }
  }
  return undefined;
};
