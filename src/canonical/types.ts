/**
 * The gateway's canonical request, response and stream-event shapes. Client formats
 * (src/formats) convert to and from these; providers (src/providers) convert these to and from
 * their upstream wire. Nothing here knows about HTTP, Elysia or any vendor.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type ClientFormat = 'chat' | 'responses' | 'messages' | 'gemini' | 'converse' | 'cohere';

/** Where a document's bytes are: inline (base64 with its media type) or at an http(s) URL. */
export type DocumentSource = { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string };

export type ContentPart =
  | { type: 'text'; text: string }
  /** `url` is an http(s) URL or a `data:<mediaType>;base64,<data>` URL. */
  | { type: 'image'; url: string; detail?: 'auto' | 'low' | 'high' }
  /**
   * A file the model reads (a PDF; plain text arrives as a text part). Only user turns and tool
   * results carry one. `param` is where the client sent it (`messages.0.content.1`), for refusals.
   */
  | { type: 'document'; source: DocumentSource; filename?: string; param: string };

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments, exactly as the model produced it. */
  arguments: string;
}

export type Message =
  | { role: 'system'; content: ContentPart[] }
  | { role: 'user'; content: ContentPart[] }
  /** `reasoning`: the model's signed thinking of that turn, when the client sent it back (Anthropic requires it on tool-use turns). */
  | { role: 'assistant'; content: ContentPart[]; toolCalls?: ToolCall[]; reasoning?: Reasoning }
  | { role: 'tool'; toolCallId: string; name?: string; content: ContentPart[]; isError?: boolean };

/** Reasoning text with the upstream's signature (Anthropic thinking blocks must be sent back signed). */
export interface Reasoning {
  text: string;
  signature: string;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the parameters. */
  parameters: JsonObject;
  strict?: boolean;
  /**
   * Where the client defined the tool (`tools.0.function` in Chat, `tools.0` in Responses and
   * Messages) and its schema (`….parameters`, `tools.0.input_schema`), for refusals naming
   * `strict` or a schema keyword.
   */
  param?: string;
  schemaParam?: string;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      schema: JsonObject;
      strict?: boolean;
      description?: string;
      /** Where the client put the schema (`output_config.format.schema`, …), for refusals naming a keyword in it. */
      param?: string;
    };

export interface CanonicalRequest {
  /** The public model id the client sent (route key). Providers use `target.upstreamModel`. */
  model: string;
  messages: Message[];
  stream: boolean;
  /** Client asked for usage in the stream (Chat `stream_options.include_usage`). */
  includeUsage: boolean;
  /** The client's output cap (thinking included where the model reasons); see src/providers/reasoning.ts. */
  maxTokens?: number;
  /** The client's member that set `maxTokens` (`max_completion_tokens`, `max_tokens`, `max_output_tokens`), for refusals. */
  maxTokensParam?: string;
  temperature?: number;
  topP?: number;
  topK?: number;
  /** The client's member that set `topK` (`top_k`, `generationConfig.topK`, `k`, …), for refusals. */
  topKParam?: string;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  n?: number;
  user?: string;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high';
  /** An exact thinking budget in tokens (Messages `thinking.budget_tokens`); see src/providers/reasoning.ts. */
  reasoningBudget?: number;
  /** The client's member that asked for reasoning (`reasoning_effort`, `reasoning.effort`, `thinking`…), for refusals. */
  reasoningParam?: string;
  /**
   * Whether the model's catalog entry has the `reasoning` capability (set by the gateway, never by a
   * client): a translated request asking for reasoning of a model without it is refused.
   */
  modelReasons?: boolean;
  metadata?: Record<string, string>;
  /**
   * The catalog's `maxOutputTokens` for the model (set by the gateway, never by a client): an
   * upstream that requires a max_tokens gets it when neither the client nor the connection set one.
   */
  outputLimit?: number;
  /** The client's `anthropic-beta` header values (set by the gateway): Anthropic upstreams get them merged with the connection's. */
  anthropicBeta?: string[];
  /**
   * The first part of the request that only the client's own API can carry (a Responses built-in
   * tool, an item or content type with no canonical form): set by the decoder instead of refusing,
   * so that an upstream speaking that API natively still serves the request; targets that would
   * translate are skipped, and with none left the request is refused with this (a 400).
   */
  nativeOnly?: { param: string; message: string };
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface Usage {
  /** Total prompt tokens, cached ones included (OpenAI `prompt_tokens`). */
  inputTokens: number;
  outputTokens: number;
  /** Cache reads (part of inputTokens). */
  cachedInputTokens?: number;
  /** Cache writes (part of inputTokens). */
  cacheWriteTokens?: number;
  /** Reasoning tokens (part of outputTokens). */
  reasoningTokens?: number;
}

export interface CanonicalResponse {
  id: string;
  /** Model id as reported by the upstream. */
  model: string;
  created: number;
  text: string;
  toolCalls: ToolCall[];
  reasoning?: string;
  /** The signature of the reasoning (Anthropic thinking blocks), when the upstream gave one. */
  reasoningSignature?: string;
  finishReason: FinishReason;
  usage: Usage;
}

/**
 * Stream events, in order: one `start`; then any number of `text`/`reasoning`/`tool_call_*`;
 * then one `finish`; `usage` may arrive anywhere (the last one wins, values are cumulative);
 * `error` ends the stream abnormally.
 */
export type StreamEvent =
  | { type: 'start'; id: string; model: string; usage?: Usage }
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  /** The signature of the reasoning streamed so far (Anthropic `signature_delta`). */
  | { type: 'reasoning_signature'; signature: string }
  /** `index` counts tool calls only (0, 1, 2…), across the whole response. */
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; arguments: string }
  | { type: 'finish'; reason: FinishReason }
  | { type: 'usage'; usage: Usage };

export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0 });

export const textOf = (parts: readonly ContentPart[]): string => parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
