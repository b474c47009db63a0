import { ts } from '../api/kit.ts';
import { formatUsd } from '../core/money.ts';
import type { RequestRecordRow } from '../store/schema/index.ts';

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
});
