/** Canonical response → Gemini `GenerateContentResponse`, and Google's error body. */
import type { CanonicalResponse, FinishReason, JsonObject, ToolCall, Usage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import { argumentsObject, prefixedId, reasoningTokens } from '../shared.ts';
import type { EncodeContext } from '../types.ts';
import { THOUGHT_SEPARATOR } from './request.ts';

/** Gemini has no tool-call finish reason: a turn that calls functions ends with STOP. */
const FINISH_REASONS: Record<FinishReason, string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  tool_calls: 'STOP',
  content_filter: 'SAFETY',
};

export const geminiFinishReason = (reason: FinishReason): string => FINISH_REASONS[reason];

/**
 * `usageMetadata`: `promptTokenCount` counts cached tokens too (`cachedContentTokenCount` says how
 * many), `candidatesTokenCount` excludes thinking (`thoughtsTokenCount`).
 */
export const geminiUsage = (u: Usage): JsonObject => {
  const thoughts = reasoningTokens(u);
  const out: JsonObject = {
    promptTokenCount: u.inputTokens,
    candidatesTokenCount: Math.max(0, u.outputTokens - thoughts),
    totalTokenCount: u.inputTokens + u.outputTokens,
  };
  if (thoughts > 0) out['thoughtsTokenCount'] = thoughts;
  if (u.cachedInputTokens) out['cachedContentTokenCount'] = u.cachedInputTokens;
  return out;
};

/** A canonical call → a `functionCall` part (its thought signature, if any, beside it). */
export const functionCallPart = (call: ToolCall): JsonObject => {
  const at = call.id.indexOf(THOUGHT_SEPARATOR);
  const id = at === -1 ? call.id : call.id.slice(0, at);
  const part: JsonObject = { functionCall: { ...(id !== '' ? { id } : {}), name: call.name, args: argumentsObject(call.arguments) } };
  if (at !== -1) part['thoughtSignature'] = call.id.slice(at + THOUGHT_SEPARATOR.length);
  return part;
};

export const responseIdOf = (id: string, ctx: EncodeContext): string => (id !== '' ? id : prefixedId('', 'gw', ctx));

export const encodeGeminiResponse = (res: CanonicalResponse, ctx: EncodeContext): JsonObject => {
  const parts: JsonObject[] = [];
  if (res.reasoning !== undefined && res.reasoning !== '') parts.push({ text: res.reasoning, thought: true });
  if (res.text !== '') parts.push({ text: res.text });
  for (const call of res.toolCalls) parts.push(functionCallPart(call));
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: geminiFinishReason(res.finishReason), index: 0 }],
    usageMetadata: geminiUsage(res.usage),
    modelVersion: ctx.model,
    responseId: responseIdOf(res.id, ctx),
  };
};

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's error body `{error: {code, message, status}}`; `code` is the HTTP status sent (499 is sent as 400). */
export const encodeGeminiError = (error: GatewayError): JsonObject => {
  const code = error.status === 499 ? 400 : error.status;
  // Google's body has no member for the field: it is named in the message, as Google does.
  const message = error.param && !error.message.includes(error.param) ? `${error.message} (field: ${error.param})` : error.message;
  return { error: { code, message, status: STATUS[code] ?? (code >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION') } };
};
