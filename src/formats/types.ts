import type { CanonicalRequest, CanonicalResponse, ClientFormat, JsonObject, StreamEvent } from '../canonical/types.ts';
import type { GatewayError } from '../core/errors.ts';

/** What a client-format encoder needs to know beyond the canonical data. */
export interface EncodeContext {
  /** The model id the client asked for (echoed back, not the upstream's id). */
  model: string;
  /** The gateway's X-Request-ID, used to derive response ids when the upstream gave none. */
  requestId: string;
  /** Chat only: the client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Unix seconds stamped on stream chunks (`created`/`created_at`); defaults to now. Tests pin it. */
  created?: number;
  /** Epoch ms the gateway received the request: Converse's `metrics.latencyMs` counts from it (default: when encoding began). */
  receivedAt?: number;
  /** Responses only: members set on the response object as given (`store`, `previous_response_id`). */
  responseFields?: JsonObject;
}

/**
 * Turns canonical stream events into the client's SSE text. Stateful, one per response.
 * Every method returns complete SSE frames (possibly '' when nothing is due yet).
 */
export interface StreamEncoder {
  push(event: StreamEvent): string;
  /** The upstream finished normally: close open blocks, emit the terminal events. */
  end(): string;
  /** The stream failed after it opened: emit the format's error event (where it has one). */
  error(error: GatewayError): string;
  /** Responses: the final response object, once `end()` produced it. */
  final?(): JsonObject | undefined;
}

/** What the URL of a request says (Gemini, Converse: the model and streaming are in the path, not the body). */
export interface UrlRequest {
  model: string;
  stream: boolean;
}

/** One client format (Chat Completions, Responses, Messages, Gemini, Converse, Cohere) ↔ canonical. Pure. */
export interface ClientFormatCodec {
  readonly id: ClientFormat;
  /** Validates and converts a client body; throws GatewayError (invalid_request, param = field). `url`: the model and streaming from the path. */
  decodeRequest(body: unknown, url?: UrlRequest): CanonicalRequest;
  encodeResponse(response: CanonicalResponse, ctx: EncodeContext): JsonObject;
  createStreamEncoder(ctx: EncodeContext): StreamEncoder;
  /** The error body for this format (Messages: `{type:'error', error:{…}}`; others the seed's). */
  encodeError(error: GatewayError): JsonObject;
}
