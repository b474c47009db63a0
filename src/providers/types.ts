import type { CanonicalRequest, CanonicalResponse, ClientFormat, JsonObject, StreamEvent } from '../canonical/types.ts';
import type { GatewayError } from '../core/errors.ts';

/** A provider connection as the data plane sees it (from the snapshot; apiKey already unwrapped). */
export interface ConnectionConfig {
  id: string;
  name: string;
  /** Adapter id: openai, anthropic, groq, echo, … */
  provider: string;
  /** Overrides the provider's public default base URL. */
  baseUrl?: string;
  apiKey?: string;
  options: JsonObject;
  /**
   * The data plane may connect to loopback/private/link-local/metadata addresses for this
   * connection: saved so by the platform admin, or allowed by the operator (contract §3.1).
   */
  allowPrivate?: boolean;
}

export interface UpstreamTarget {
  connection: ConnectionConfig;
  /** The model id sent upstream. */
  upstreamModel: string;
}

export interface UpstreamHttpRequest {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

/** One unit of an upstream stream, already framed by the shared parser. */
export interface UpstreamFrame {
  /** SSE `event:` name; for AWS event-stream frames the `:event-type` (or `:exception-type`). */
  event?: string;
  /** SSE `data:` payload, one NDJSON line, or an event-stream frame's payload as UTF-8 text. */
  data: string;
  /** AWS event-stream frames only: all string headers (`:message-type`, `:event-type`, …). */
  headers?: Record<string, string>;
}

export type Framing = 'sse' | 'ndjson' | 'aws-eventstream';

/** Minimal HTTP for adapters that must fetch a token (Vertex, watsonx): performed by the data plane. */
export type TokenHttp = (req: UpstreamHttpRequest & { method: 'POST' }) => Promise<{ status: number; body: string }>;

export interface StreamDecoder {
  /** One frame → canonical events. Throws GatewayError for an in-stream upstream error. */
  push(frame: UpstreamFrame): StreamEvent[];
  /** The upstream body ended. Returns closing events; throws GatewayError if it ended early. */
  end(): StreamEvent[];
}

/**
 * Endpoints beyond the three chat formats. They keep the OpenAI wire end to end: the body is
 * forwarded with `model` set to the upstream model, and the answer is returned as the upstream gave it.
 */
export type ExtraEndpoint = 'completions' | 'embeddings' | 'images' | 'speech' | 'rerank';

/** The OpenAI-style path of each extra endpoint, relative to a `…/v1` base URL. */
export const EXTRA_ENDPOINT_PATHS: Readonly<Record<ExtraEndpoint, string>> = {
  completions: '/completions',
  embeddings: '/embeddings',
  images: '/images/generations',
  speech: '/audio/speech',
  rerank: '/rerank',
};

/**
 * Same format in, same format out: an upstream that speaks one client format natively takes the
 * client's own JSON with only the model (and what the gateway needs, e.g. usage in streams)
 * changed, and its answer is relayed with only the model changed (architecture.md, "Canonical in
 * the middle, bytes when nothing changes").
 */
export interface PassThrough {
  /**
   * The upstream request for a client body of this format (already validated by its codec), or
   * undefined when this target must get a translated request (a connection option changes the body).
   * `request` is the same request decoded, for what travels beside the body (e.g. `anthropicBeta`).
   */
  build(body: JsonObject, target: UpstreamTarget, stream: boolean, request?: CanonicalRequest): UpstreamHttpRequest | undefined;
  /** Parses a 2xx answer of this format for the record; default: the adapter's parseResponse. */
  parseResponse?(body: string): CanonicalResponse;
  /** Decodes a stream of this format for the record; default: the adapter's decoder. */
  createStreamDecoder?(): StreamDecoder;
}

/** The client formats an upstream speaks natively, each with its pass-through. */
export type PassThroughs = Readonly<Partial<Record<ClientFormat, PassThrough>>>;

/** An adapter for an HTTP upstream. Pure: it builds requests and parses responses, never fetches. */
export interface HttpProviderAdapter {
  readonly kind: 'http';
  readonly id: string;
  readonly framing: Framing;
  buildRequest(request: CanonicalRequest, target: UpstreamTarget): UpstreamHttpRequest;
  /**
   * Optional last step before sending: adds credentials that need a computation or a token
   * exchange (SigV4 signing, OAuth tokens). Adapters cache tokens themselves, keyed by connection.
   */
  authorize?(request: UpstreamHttpRequest, target: UpstreamTarget, http: TokenHttp): Promise<UpstreamHttpRequest>;
  /** Parses a 2xx body; throws GatewayError (bad_gateway) when it is not what the upstream promises. */
  parseResponse(body: string): CanonicalResponse;
  /** Normalises a non-2xx answer. Keeps a redacted excerpt of the body, never a secret. */
  parseError(status: number, body: string, headers: Headers): GatewayError;
  createStreamDecoder(): StreamDecoder;
  /** Builds an extra-endpoint request, or returns undefined when this upstream has no such endpoint. */
  buildExtraRequest?(endpoint: ExtraEndpoint, body: JsonObject, target: UpstreamTarget): UpstreamHttpRequest | undefined;
  /** Present when the upstream speaks one or more client formats natively (OpenAI: chat and responses). */
  readonly passThrough?: PassThroughs;
}

/** A provider that answers in-process (the built-in `echo`). */
export interface LocalProviderAdapter {
  readonly kind: 'local';
  readonly id: string;
  complete(request: CanonicalRequest, target: UpstreamTarget): CanonicalResponse;
  stream(request: CanonicalRequest, target: UpstreamTarget): StreamEvent[];
  /** Answers an extra endpoint in-process (JSON), or undefined when unsupported. */
  extra?(endpoint: ExtraEndpoint, body: JsonObject, target: UpstreamTarget): JsonObject | undefined;
}

export type ProviderAdapter = HttpProviderAdapter | LocalProviderAdapter;

export type ProviderOptions = JsonObject;
