/** Server-sent-event framing for the client formats. Every helper returns one complete frame. */
import type { JsonValue } from '../canonical/types.ts';

/** A data-only frame (Chat Completions): `data: {json}\n\n`. */
export const sseData = (data: JsonValue): string => `data: ${JSON.stringify(data)}\n\n`;

/** A named frame (Responses, Messages): `event: name\ndata: {json}\n\n`. */
export const sseEvent = (event: string, data: JsonValue): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** The Chat Completions terminator. */
export const SSE_DONE = 'data: [DONE]\n\n';
