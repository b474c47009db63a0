/**
 * Document inputs of the three client formats (Chat `file` parts, Responses `input_file`, Messages
 * `document` blocks) → canonical parts. PDFs become `document` parts; plain text becomes a text
 * part, which every family reads. What only the client's own API can resolve (an uploaded file id)
 * is left to the decoder's native-only note.
 */
import type { ContentPart } from '../canonical/types.ts';
import { invalidValue } from './validate.ts';

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;
const HTTP_URL = /^https?:\/\//i;

const isPlainText = (mediaType: string): boolean => /^text\/plain$/i.test(mediaType.trim());

/** Base64 bytes of a media type → a document part, or the decoded text for `text/plain`. */
export const inlineDocument = (mediaType: string, data: string, filename: string | undefined, param: string): ContentPart[] => {
  if (isPlainText(mediaType)) {
    const text = Buffer.from(data, 'base64').toString('utf8');
    return text === '' ? [] : [{ type: 'text', text }];
  }
  const source = { kind: 'base64' as const, mediaType: mediaType.trim().toLowerCase(), data };
  return [filename === undefined ? { type: 'document', source, param } : { type: 'document', source, filename, param }];
};

/**
 * OpenAI `file_data`: a `data:<media type>;base64,…` URL (as OpenAI documents it); bare base64 is
 * taken as a PDF, the only type Chat Completions reads.
 */
export const fileDataDocument = (fileData: string, filename: string | undefined, path: string, param: string): ContentPart[] => {
  if (fileData === '') throw invalidValue(path, 'file_data must not be empty.');
  const m = DATA_URL.exec(fileData);
  if (m) return inlineDocument(m[1] ?? '', m[2] ?? '', filename, param);
  if (fileData.startsWith('data:')) throw invalidValue(path, "file_data must be a base64 data URL ('data:application/pdf;base64,…').");
  return inlineDocument('application/pdf', fileData, filename, param);
};

/** A document at an http(s) URL (Messages `source.url`, Responses `file_url`). */
export const urlDocument = (url: string, filename: string | undefined, path: string, param: string): ContentPart[] => {
  if (!HTTP_URL.test(url)) throw invalidValue(path, 'a document URL must be an http(s) URL.');
  const source = { kind: 'url' as const, url };
  return [filename === undefined ? { type: 'document', source, param } : { type: 'document', source, filename, param }];
};
