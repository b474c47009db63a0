import type { JsonObject } from '../canonical/types.ts';
import { assembleStream, formatOfEndpoint } from '../formats/stream-assembly.ts';

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface ResponseView {
  responseBody: unknown;
  /** A relayed stream's events as the client got them. */
  responseStream?: string;
  /** Only the stream's beginning was kept (the record's bound). */
  responseStreamCut?: true;
}

/**
 * A record's response body as SearchRequestRecords returns it. A relayed stream, stored as the
 * client got it (`{"sse": …}`, data-plane/pipeline/record.ts), is returned assembled: the final
 * answer object in the client's format (formats/stream-assembly.ts) — beside the error as
 * `partial` when the stream ended with one — and the stream itself as `responseStream`.
 */
export const responseView = (endpoint: string, stream: boolean, body: unknown): ResponseView => {
  if (!stream || !isObject(body) || typeof body.sse !== 'string') return { responseBody: body ?? null };
  const { sse, cut, ...rest } = body;
  const format = formatOfEndpoint(endpoint);
  const answer = format ? assembleStream(format, sse) : undefined;
  const responseBody = rest.error !== undefined ? { ...rest, ...(answer ? { partial: answer } : {}) } : (answer ?? null);
  return { responseBody, responseStream: sse, ...(cut === true ? { responseStreamCut: true as const } : {}) };
};
