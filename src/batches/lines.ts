import type { BatchEndpoint } from '../core/batches.ts';
import { isRecord } from '../core/json.ts';
import { newId } from './service.ts';

/**
 * The lines of a batch's input file and of its output and error files, in OpenAI's line format:
 * in `{"custom_id", "method": "POST", "url", "body"}`; out `{"id", "custom_id", "response":
 * {"status_code", "request_id", "body"}, "error"}` (a line that could not be sent: `response`
 * null and `error` {code, message}).
 */

export interface BatchLine {
  customId: string;
  body: unknown;
  /** Why the line is not sent (it becomes an error line). */
  refusal?: string;
}

export interface InputError {
  code: string;
  message: string;
  line: number | null;
}

/** Errors reported for a malformed file, at most. */
const MAX_ERRORS = 10;

/** What one input file may hold: GATEWAY_BATCH_MAX_LINES requests, each line at most GATEWAY_MAX_BODY bytes. */
export interface InputBounds {
  maxLines: number;
  maxLineBytes: number;
}

export const DEFAULT_INPUT_BOUNDS: InputBounds = { maxLines: 50_000, maxLineBytes: 32 * 1024 * 1024 };

/**
 * The lines of an input file, or why the file is refused as a whole (OpenAI fails such a batch
 * while validating). Lines are cut one at a time: a file with more than `maxLines` requests is
 * refused when the next one shows, before the rest is read; a line longer than `maxLineBytes`
 * (characters, never more than its bytes) is refused without being parsed.
 */
export const parseInput = (
  content: string,
  endpoint: BatchEndpoint,
  bounds: InputBounds = DEFAULT_INPUT_BOUNDS,
): { lines: BatchLine[]; errors: InputError[] } => {
  const lines: BatchLine[] = [];
  const errors: InputError[] = [];
  const seen = new Set<string>();
  let requests = 0;
  for (let start = 0, i = 0; start < content.length && errors.length < MAX_ERRORS; i++) {
    const nl = content.indexOf('\n', start);
    const end = nl === -1 ? content.length : nl;
    const at = i + 1;
    const length = end - start;
    const from = start;
    start = end + 1;
    if (length > bounds.maxLineBytes) {
      errors.push({
        code: 'line_too_large',
        message: `This line is longer than the limit of ${bounds.maxLineBytes} bytes (GATEWAY_MAX_BODY).`,
        line: at,
      });
      continue;
    }
    const t = content.slice(from, end).trim();
    if (t === '') continue;
    if (++requests > bounds.maxLines) {
      errors.push({
        code: 'too_many_lines',
        message: `The input file has more than ${bounds.maxLines} requests (GATEWAY_BATCH_MAX_LINES).`,
        line: at,
      });
      break;
    }
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch {
      errors.push({ code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.', line: at });
      continue;
    }
    if (!isRecord(v) || typeof v.custom_id !== 'string' || v.custom_id === '') {
      errors.push({ code: 'missing_required_parameter', message: "Each line needs a 'custom_id' string.", line: at });
      continue;
    }
    if (seen.has(v.custom_id)) {
      errors.push({
        code: 'duplicate_custom_id',
        message: `The custom_id '${v.custom_id.slice(0, 64)}' appears more than once.`,
        line: at,
      });
      continue;
    }
    seen.add(v.custom_id);
    if (v.method !== 'POST') errors.push({ code: 'invalid_method', message: "'method' must be 'POST'.", line: at });
    else if (v.url !== endpoint)
      errors.push({ code: 'invalid_url', message: `'url' must be the batch's endpoint '${endpoint}'.`, line: at });
    else if (!isRecord(v.body)) errors.push({ code: 'invalid_body', message: "'body' must be a JSON object.", line: at });
    else if (v.body.stream === true) lines.push({ customId: v.custom_id, body: v.body, refusal: 'Streaming is not supported in a batch.' });
    else lines.push({ customId: v.custom_id, body: v.body });
  }
  if (errors.length === 0 && lines.length === 0) errors.push({ code: 'empty_file', message: 'The input file has no lines.', line: null });
  return { lines, errors };
};

const parsedBody = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

export const outputLine = (customId: string, status: number, requestId: string, body: string): string =>
  JSON.stringify({
    id: newId('batch_req_'),
    custom_id: customId,
    response: { status_code: status, request_id: requestId, body: parsedBody(body) },
    error: null,
  });

export const lineError = (customId: string, code: string, message: string): string =>
  JSON.stringify({ id: newId('batch_req_'), custom_id: customId, response: null, error: { code, message } });
