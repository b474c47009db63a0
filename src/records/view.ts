import { ts } from '../api/kit.ts';
import { formatUsd } from '../core/money.ts';
import type { RequestRecordRow } from '../store/schema/index.ts';

/** A governed MCP call's record (src/mcp/govern.ts): provider `mcp`, the method as its model, the server's tool as its upstream model. */
const isMcpCall = (r: RequestRecordRow): boolean => r.provider === 'mcp';

/**
 * The guardrail decisions the record keeps (contract §17, §15): the guardrails whose `flag` action
 * matched. A block is the record's `errorCode` `guardrail_blocked`; a redaction changes the
 * recorded body.
 */
const guardrailsOf = (r: RequestRecordRow): { name: string; action: 'flag' }[] =>
  r.guardrailFlags ? r.guardrailFlags.split(',').map((name) => ({ name, action: 'flag' as const })) : [];

const CACHE_OUTCOMES = ['hit', 'miss', 'bypass'] as const;
type CacheOutcome = (typeof CACHE_OUTCOMES)[number];
const isCacheOutcome = (v: string | null): v is CacheOutcome => CACHE_OUTCOMES.some((c) => c === v);

/** A request record as SearchRequestRecords returns it (and as a `logs` forwarding config's log record body carries it). */
export const recordView = (r: RequestRecordRow) => ({
  requestId: r.requestId,
  ...(r.clientRequestId ? { clientRequestId: r.clientRequestId } : {}),
  ...(r.correlationId ? { correlationId: r.correlationId } : {}),
  timestamp: ts(r.receivedAt),
  customerId: r.customerId ?? '',
  projectId: r.projectId ?? '',
  apiKeyId: r.apiKeyId ?? '',
  endpoint: r.endpoint,
  model: r.model ?? '',
  provider: r.provider ?? '',
  connection: r.connection ?? '',
  upstreamModel: r.upstreamModel ?? '',
  httpStatus: r.httpStatus,
  latencyMs: r.latencyMs,
  ...(r.ttfbMs !== null ? { ttfbMs: r.ttfbMs } : {}),
  stream: r.stream,
  usage: {
    promptTokens: r.inputTokens,
    completionTokens: r.outputTokens,
    totalTokens: r.totalTokens,
    cachedInputTokens: r.cachedInputTokens,
    cacheWriteTokens: r.cacheWriteTokens,
  },
  cost: formatUsd(r.costNanoUsd),
  attempts: r.attempts,
  ...(r.errorCode ? { errorCode: r.errorCode } : {}),
  requestBody: r.requestBody ?? null,
  responseBody: r.responseBody ?? null,
  ...(r.sanitized ? { sanitized: r.sanitized.split(',') } : {}),
  ...(isCacheOutcome(r.cache) ? { cache: r.cache } : {}),
  ...(r.costSavedNanoUsd !== null && r.costSavedNanoUsd > 0 ? { costSavedUsd: formatUsd(r.costSavedNanoUsd) } : {}),
  guardrails: guardrailsOf(r),
  ...(isMcpCall(r) ? { method: r.model ?? '', ...(r.model === 'tools/call' && r.upstreamModel ? { tool: r.upstreamModel } : {}) } : {}),
});
