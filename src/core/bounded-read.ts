import type { GatewayError } from './errors.ts';

/**
 * Reads a byte stream to text, refusing it past `max` bytes: the stream is cancelled and
 * `tooLarge()` thrown as soon as the count passes the limit, so nothing beyond it is held.
 * One reader for request bodies without Content-Length and for upstream answers.
 */
export const readBounded = async (body: ReadableStream<Uint8Array>, max: number, tooLarge: () => GatewayError): Promise<string> => {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
};
