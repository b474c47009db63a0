/** Gemini `GenerateContentResponse` → CanonicalResponse (plus readers shared with the stream). */
import type { CanonicalResponse, FinishReason, ToolCall, Usage } from '../../canonical/types.ts';
import { asArray, asNumber, asRecord, asString, isRecord, parseJson, type UnknownRecord } from '../json.ts';
import { mapStopReason, stopReasons } from '../stop-reason.ts';
import { badGateway } from '../upstream-error.ts';
import { googleInBodyError } from './errors.ts';
import { THOUGHT_SEPARATOR } from './request.ts';

/**
 * Gemini `finishReason`s. Gemini has no tool-call finish reason: any other (STOP,
 * MALFORMED_FUNCTION_CALL, OTHER, anything new, none) with function calls means `tool_calls`.
 */
const GEMINI_FINISH_REASONS = stopReasons({
  length: ['MAX_TOKENS'],
  content_filter: [
    'SAFETY',
    'RECITATION',
    'BLOCKLIST',
    'PROHIBITED_CONTENT',
    'SPII',
    'IMAGE_SAFETY',
    'LANGUAGE',
    'IMAGE_PROHIBITED_CONTENT',
    'IMAGE_RECITATION',
  ],
});

export const geminiFinishReason = (r: string | undefined, hasToolCalls: boolean): FinishReason =>
  mapStopReason(GEMINI_FINISH_REASONS, r, hasToolCalls ? 'tool_calls' : 'stop');

/**
 * `usageMetadata` → canonical. `promptTokenCount` includes cached tokens; output counts the
 * candidates plus thoughts (thoughts are reasoning); tool-use prompt tokens count as input.
 */
export const parseGeminiUsage = (u: unknown): Usage | undefined => {
  const o = asRecord(u);
  if (!o) return undefined;
  const prompt = asNumber(o['promptTokenCount']);
  const candidates = asNumber(o['candidatesTokenCount']);
  const thoughts = asNumber(o['thoughtsTokenCount']);
  const toolPrompt = asNumber(o['toolUsePromptTokenCount']);
  if (prompt === undefined && candidates === undefined && thoughts === undefined) return undefined;
  const usage: Usage = { inputTokens: (prompt ?? 0) + (toolPrompt ?? 0), outputTokens: (candidates ?? 0) + (thoughts ?? 0) };
  const cached = asNumber(o['cachedContentTokenCount']);
  if (cached !== undefined) usage.cachedInputTokens = cached;
  if (thoughts !== undefined) usage.reasoningTokens = thoughts;
  return usage;
};

/** A `functionCall` part → a canonical call; a thought signature is carried in the id. */
export const toToolCall = (part: UnknownRecord, index: number): ToolCall | undefined => {
  const fc = asRecord(part['functionCall']);
  if (!fc) return undefined;
  const base = asString(fc['id']) ?? `call_${index}`;
  const signature = asString(part['thoughtSignature']);
  return {
    id: signature !== undefined && signature !== '' ? `${base}${THOUGHT_SEPARATOR}${signature}` : base,
    name: asString(fc['name']) ?? '',
    arguments: JSON.stringify(fc['args'] ?? {}),
  };
};

export interface CandidateParts {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
}

/** Reads `candidates[0].content.parts`; tool-call ids continue from `firstToolIndex`. */
export const readParts = (candidate: UnknownRecord | undefined, firstToolIndex = 0): CandidateParts => {
  const out: CandidateParts = { text: '', reasoning: '', toolCalls: [] };
  for (const item of asArray(asRecord(candidate?.['content'])?.['parts']) ?? []) {
    const part = asRecord(item);
    if (!part) continue;
    const call = toToolCall(part, firstToolIndex + out.toolCalls.length);
    if (call) {
      out.toolCalls.push(call);
      continue;
    }
    const text = asString(part['text']);
    if (text === undefined) continue;
    if (part['thought'] === true) out.reasoning += text;
    else out.text += text;
  }
  return out;
};

export const parseGenerateContentResponse = (provider: string, body: string): CanonicalResponse => {
  const parsed = parseJson(body);
  const first = parsed.ok && Array.isArray(parsed.value) ? (parsed.value[0] as unknown) : parsed.ok ? parsed.value : undefined;
  if (!isRecord(first)) throw badGateway(provider, 'returned a response that is not JSON.', body);
  const o = first;
  if (isRecord(o['error'])) throw googleInBodyError(provider, o['error'], body);
  const candidate = asRecord(asArray(o['candidates'])?.[0]);
  const blocked = asString(asRecord(o['promptFeedback'])?.['blockReason']);
  if (!candidate && blocked === undefined) throw badGateway(provider, 'returned a response without candidates.', body);
  const { text, reasoning, toolCalls } = readParts(candidate);
  const finish = asString(candidate?.['finishReason']);
  const response: CanonicalResponse = {
    id: asString(o['responseId']) ?? '',
    model: asString(o['modelVersion']) ?? '',
    created: Math.floor(Date.now() / 1000),
    text,
    toolCalls,
    finishReason: !candidate ? 'content_filter' : geminiFinishReason(finish, toolCalls.length > 0),
    usage: parseGeminiUsage(o['usageMetadata']) ?? { inputTokens: 0, outputTokens: 0 },
  };
  if (reasoning !== '') response.reasoning = reasoning;
  return response;
};
