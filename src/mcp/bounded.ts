import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../core/errors.ts';
import { isRecord } from '../core/json.ts';
import { readBounded } from '../core/bounded-read.ts';
import type { Lax } from './lax-results.ts';

/**
 * GATEWAY_MCP_MAX_MESSAGE_BYTES on what an upstream MCP server sends, applied to its HTTP answers before
 * the SDK client reads them: a JSON answer (or an error body) is read counted and refused past the
 * bound; an SSE answer or stream is passed on event by event, each event held until its blank line
 * and refused once it holds more than the bound. Past the bound the upstream body is cancelled
 * (not read to its end) and, for a `POST` that carried requests, each request is answered with a
 * JSON-RPC error naming the bound (`data.code: upstream_response_too_large`), so the call fails at
 * once instead of waiting for its time-out; a standing `GET` stream is ended with an error. Within
 * the bound, a 2026-07-28 exchange's answers are then made readable (mcp/lax-results.ts): the JSON
 * body once read, each SSE event once whole.
 */

export const TOO_LARGE_CODE = 'upstream_response_too_large';

const tooLargeMessage = (max: number): string =>
  `The MCP server's message is larger than the limit of ${max} bytes (GATEWAY_MCP_MAX_MESSAGE_BYTES).`;

/** The ids of the JSON-RPC requests a `POST` body carried (none for notifications and answers). */
const requestIds = (body: unknown): (string | number)[] => {
  if (typeof body !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const ids: (string | number)[] = [];
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    if (isRecord(m) && typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number')) ids.push(m.id);
  }
  return ids;
};

const errorFor = (id: string | number, max: number) => ({
  jsonrpc: '2.0',
  id,
  error: { code: ErrorCode.InternalError, message: tooLargeMessage(max), data: { code: TOO_LARGE_CODE, limit: max } },
});

/** Whether an upstream failure is this bound's refusal (for the record's error code). */
export const isTooLarge = (e: unknown): boolean => e instanceof McpError && isRecord(e.data) && e.data.code === TOO_LARGE_CODE;

const mediaType = (res: Response): string => (res.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

const headersOf = (res: Response, type?: string): Headers => {
  const h = new Headers(res.headers);
  h.delete('content-length');
  h.delete('content-encoding');
  if (type) h.set('content-type', type);
  return h;
};

const tooLarge = (max: number): GatewayError =>
  new GatewayError({ kind: 'bad_gateway', errorCode: TOO_LARGE_CODE, message: tooLargeMessage(max) });

/** A JSON answer (or an error body) read within the bound; past it, the JSON-RPC errors of the requests. */
const boundedJson = async (res: Response, max: number, ids: (string | number)[], lax: Lax | undefined): Promise<Response> => {
  const refused = (): Response => {
    if (!res.ok || ids.length === 0)
      return new Response(tooLargeMessage(max), { status: res.ok ? 502 : res.status, headers: headersOf(res, 'text/plain') });
    const errors = ids.map((id) => errorFor(id, max));
    return new Response(JSON.stringify(errors.length === 1 ? errors[0] : errors), {
      status: 200,
      headers: headersOf(res, 'application/json'),
    });
  };
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > max && !res.headers.has('content-encoding')) {
    res.body?.cancel().catch(() => undefined);
    return refused();
  }
  if (!res.body) return res;
  try {
    const read = await readBounded(res.body, max, () => tooLarge(max));
    const text = lax && res.ok ? lax.json(read) : read;
    return new Response(text, { status: res.status, statusText: res.statusText, headers: headersOf(res) });
  } catch (e) {
    if (e instanceof GatewayError && e.errorCode === TOO_LARGE_CODE) return refused();
    throw e;
  }
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const joined = (parts: Uint8Array[]): Uint8Array => {
  if (parts.length === 1 && parts[0]) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** An SSE body passed on whole events at a time, none held beyond `max` bytes. */
const boundedSse = (
  res: Response,
  source: ReadableStream<Uint8Array>,
  max: number,
  ids: (string | number)[],
  lax: Lax | undefined,
): Response => {
  const reader = source.getReader();
  /** One whole event passed on (rewritten by `lax` when it needs to be). */
  const pass = (c: ReadableStreamDefaultController<Uint8Array>, parts: Uint8Array[]): void => {
    if (!lax) {
      for (const p of parts) c.enqueue(p);
      return;
    }
    const bytes = joined(parts);
    const text = decoder.decode(bytes);
    const fixed = lax.event(text);
    c.enqueue(fixed === text ? bytes : encoder.encode(fixed));
  };
  /** The open event's bytes, and the scanner's place in its current line. */
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  let lineLength = 0;
  let afterCr = false;
  /** Past the bound: the upstream body cancelled, the open event dropped. */
  const refuse = (c: ReadableStreamDefaultController<Uint8Array>): void => {
    held = [];
    reader.cancel().catch(() => undefined);
    if (ids.length === 0) {
      c.error(new McpError(ErrorCode.InternalError, tooLargeMessage(max), { code: TOO_LARGE_CODE, limit: max }));
      return;
    }
    // The cut event was never passed on (only whole events are): each request gets its error as an event of its own.
    c.enqueue(encoder.encode(ids.map((id) => `event: message\ndata: ${JSON.stringify(errorFor(id, max))}\n\n`).join('')));
    c.close();
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      for (;;) {
        const r = await reader.read();
        if (r.done) {
          for (const h of held) c.enqueue(h);
          held = [];
          c.close();
          return;
        }
        const chunk = r.value;
        let from = 0;
        let sent = false;
        for (let i = 0; i < chunk.length; i++) {
          const b = chunk[i];
          if (b === 10 && afterCr) {
            afterCr = false;
            continue;
          }
          afterCr = b === 13;
          if (b !== 10 && b !== 13) {
            lineLength++;
            continue;
          }
          // A line end on an empty line: the event is complete through here (and refused whole past the bound).
          if (lineLength === 0) {
            if (heldBytes + i + 1 - from > max) return refuse(c);
            pass(c, [...held, chunk.subarray(from, i + 1)]);
            held = [];
            heldBytes = 0;
            from = i + 1;
            sent = true;
          }
          lineLength = 0;
        }
        if (from < chunk.length) {
          held.push(chunk.subarray(from));
          heldBytes += chunk.length - from;
        }
        if (heldBytes > max) return refuse(c);
        if (sent) return;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: headersOf(res) });
};

/**
 * The upstream answer with GATEWAY_MCP_MAX_MESSAGE_BYTES applied; `requestBody` is the `POST` body it
 * answers (for the request ids); `lax` is given for a 2026-07-28 exchange.
 */
export const boundedAnswer = (res: Response, max: number, requestBody: unknown, lax?: Lax): Response | Promise<Response> => {
  if (!res.body || res.status === 202 || res.status === 204) return res;
  const type = mediaType(res);
  if (res.ok && type === 'text/event-stream') return boundedSse(res, res.body, max, requestIds(requestBody), lax);
  if (!res.ok || type === 'application/json') return boundedJson(res, max, requestIds(requestBody), lax);
  return res;
};
