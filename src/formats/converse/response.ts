/** Canonical response → Bedrock `ConverseResponse`, and Bedrock's error body. */
import type { CanonicalResponse, FinishReason, JsonObject, Usage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import { argumentsObject, uncachedInputTokens } from '../shared.ts';
import type { EncodeContext } from '../types.ts';

const STOP_REASONS: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'content_filtered',
};

export const converseStopReason = (reason: FinishReason): string => STOP_REASONS[reason];

/** Converse `TokenUsage`: `inputTokens` excludes cache reads and writes, `totalTokens` counts everything. */
export const converseUsage = (u: Usage): JsonObject => {
  const out: JsonObject = {
    inputTokens: uncachedInputTokens(u),
    outputTokens: u.outputTokens,
    totalTokens: u.inputTokens + u.outputTokens,
  };
  if (u.cachedInputTokens) out['cacheReadInputTokens'] = u.cachedInputTokens;
  if (u.cacheWriteTokens) out['cacheWriteInputTokens'] = u.cacheWriteTokens;
  return out;
};

export const encodeConverseResponse = (res: CanonicalResponse, ctx: EncodeContext): JsonObject => {
  const content: JsonObject[] = [];
  if (res.reasoning !== undefined && res.reasoning !== '')
    content.push({
      reasoningContent: {
        reasoningText: { text: res.reasoning, ...(res.reasoningSignature ? { signature: res.reasoningSignature } : {}) },
      },
    });
  if (res.text !== '') content.push({ text: res.text });
  for (const call of res.toolCalls)
    content.push({ toolUse: { toolUseId: call.id, name: call.name, input: argumentsObject(call.arguments) } });
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: converseStopReason(res.finishReason),
    usage: converseUsage(res.usage),
    // Milliseconds from the request's arrival to this answer (0 when the caller gave no arrival time).
    metrics: { latencyMs: ctx.receivedAt === undefined ? 0 : Math.max(0, Date.now() - ctx.receivedAt) },
  };
};

/** The Bedrock error type of an HTTP status (sent as `__type`, which the AWS SDKs read as the error's name). */
const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException',
  401: 'AccessDeniedException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  409: 'ConflictException',
  413: 'ValidationException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  502: 'ModelErrorException',
  503: 'ServiceUnavailableException',
  504: 'ModelTimeoutException',
};

export const converseErrorType = (status: number): string =>
  ERROR_TYPES[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');

/** `{__type, message}`: the AWS SDKs name the error after `__type` and read `message`. */
export const encodeConverseError = (error: GatewayError): JsonObject => {
  const status = error.status === 499 ? 400 : error.status;
  const message = error.param && !error.message.includes(error.param) ? `${error.message} (field: ${error.param})` : error.message;
  return { __type: converseErrorType(status), message };
};
