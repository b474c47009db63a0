import { ts } from '../api/kit.ts';
import { formatUsd } from '../core/money.ts';
import type { RequestRecordRow } from '../store/schema/index.ts';

interface Decision {
  name: string;
  stage: string;
  action: string;
  provider?: string;
  latencyMs: number;
}

const isDecision = (v: unknown): v is Decision =>
  typeof v === 'object' &&
  v !== null &&
  typeof Reflect.get(v, 'name') === 'string' &&
  typeof Reflect.get(v, 'stage') === 'string' &&
  typeof Reflect.get(v, 'action') === 'string' &&
  typeof Reflect.get(v, 'latencyMs') === 'number';

/** The provider guardrails' decisions of a record (JSON text as stored; what does not parse is left out). */
const decisionsOf = (text: string): Decision[] => {
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.filter(isDecision) : [];
  } catch {
    return [];
  }
};

/** A request record as SearchRequestRecords returns it (and as a `logs` forwarding config's log record body carries it). */
export const recordView = (r: RequestRecordRow) => ({
  requestId: r.requestId,
  ...(r.clientRequestId ? { clientRequestId: r.clientRequestId } : {}),
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
  ...(r.guardrails ? { guardrails: decisionsOf(r.guardrails) } : {}),
  requestBody: r.requestBody ?? null,
  responseBody: r.responseBody ?? null,
  ...(r.sanitized ? { sanitized: r.sanitized.split(',') } : {}),
});
