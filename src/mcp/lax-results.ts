import { isRecord } from '../core/json.ts';

/**
 * Liberal in what an upstream MCP server sends, strict in what the gateway sends. A server that
 * speaks 2026-07-28 MUST put `resultType` in every result; some (the conformance suite's own
 * reference server among them) leave it out of a `tools/call` result, which the v2 SDK client
 * refuses. On a 2026-07-28 exchange (the request's `MCP-Protocol-Version`), a JSON-RPC response
 * whose `result` has no `resultType` is read as a complete result — the spec's absent-means-
 * complete rule of earlier revisions — and passed on with `resultType: "complete"`, so the
 * gateway's client (and through it the gateway's own client) sees a valid result. A JSON body
 * that is not one JSON text but newline-delimited JSON-RPC messages (a notification, then the
 * response) is read as the batch of those messages, each line parsed strictly on its own;
 * anything else is passed on as it came (the SDK refuses it as before). mcp/bounded.ts applies
 * these after its bound, to a JSON body read whole within it and to each SSE event held whole.
 */

/** The revision whose results are completed. */
export const LAX_REVISION = '2026-07-28';

/** What mcp/bounded.ts applies to an upstream's answers on a 2026-07-28 exchange. */
export interface Lax {
  /** An `application/json` body's text, as the SDK client can read it. */
  json(text: string): string;
  /** One whole SSE event (through its blank line), as the SDK client can read it. */
  event(text: string): string;
}

/** `m` with `resultType: "complete"` when it is a JSON-RPC result without one; else `m` itself. */
const complete = (m: unknown): unknown =>
  isRecord(m) && !('method' in m) && 'id' in m && isRecord(m.result) && !('resultType' in m.result)
    ? { ...m, result: { ...m.result, resultType: 'complete' } }
    : m;

/** One message or a batch with its results completed; undefined when none needed it. */
const completeAll = (parsed: unknown): unknown => {
  const list: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  let changed = false;
  const out = list.map((m) => {
    const c = complete(m);
    if (c !== m) changed = true;
    return c;
  });
  if (!changed) return undefined;
  return Array.isArray(parsed) ? out : out[0];
};

/** The messages of a body of two or more lines, each one JSON-RPC message; undefined if any line is not. */
const messageLines = (text: string): unknown[] | undefined => {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length < 2) return undefined;
  const out: unknown[] = [];
  for (const line of lines) {
    let m: unknown;
    try {
      m = JSON.parse(line);
    } catch {
      return undefined;
    }
    if (!isRecord(m) || m.jsonrpc !== '2.0') return undefined;
    out.push(m);
  }
  return out;
};

const json = (text: string, onLax: () => void): string => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const lines = messageLines(text);
    if (!lines) return text;
    onLax();
    return JSON.stringify(completeAll(lines) ?? lines);
  }
  const fixed = completeAll(parsed);
  if (fixed === undefined) return text;
  onLax();
  return JSON.stringify(fixed);
};

/** An SSE line's field and value (`undefined` field for a comment). */
const field = (line: string): [string | undefined, string] => {
  const colon = line.indexOf(':');
  if (colon === 0) return [undefined, ''];
  if (colon < 0) return [line, ''];
  const value = line.slice(colon + 1);
  return [line.slice(0, colon), value.startsWith(' ') ? value.slice(1) : value];
};

const event = (text: string, onLax: () => void): string => {
  const lines = text.split(/\r\n|\r|\n/).filter((l) => l !== '');
  const data: string[] = [];
  let type = '';
  for (const line of lines) {
    const [name, value] = field(line);
    if (name === 'data') data.push(value);
    else if (name === 'event') type = value;
  }
  if (data.length === 0 || (type !== '' && type !== 'message')) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.join('\n'));
  } catch {
    return text;
  }
  const fixed = completeAll(parsed);
  if (fixed === undefined) return text;
  onLax();
  // The other fields (id, event, retry) kept in their order; one data line where the first was.
  const out: string[] = [];
  let placed = false;
  for (const line of lines) {
    if (field(line)[0] !== 'data') out.push(line);
    else if (!placed) {
      out.push(`data: ${JSON.stringify(fixed)}`);
      placed = true;
    }
  }
  return `${out.join('\n')}\n\n`;
};

/** The rewriting for one upstream exchange; `onLax` runs each time an answer was not spec-valid as sent. */
export const laxResults = (onLax: () => void): Lax => ({
  json: (text) => json(text, onLax),
  event: (text) => event(text, onLax),
});
