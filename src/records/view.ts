import { ts } from '../api/kit.ts';
import { formatUsd } from '../core/money.ts';
import type { RequestRecordRow } from '../store/schema/index.ts';

/** A governed MCP call's record (src/mcp/govern.ts): provider `mcp`, the method as its model, the server's tool as its upstream model. */
const isMcpCall = (r: RequestRecordRow): boolean => r.provider === 'mcp';

/**
 * The guardrail decisions the record keeps (contract §17, §15): each provider guardrail's decision
 * (`guardrails` column), and the built-in guardrails whose `flag` action matched. A built-in block
 * is the record's `errorCode` `guardrail_blocked`; a redaction changes the recorded body.
 */
const guardrailsOf = (r: RequestRecordRow): (Decision | { name: string; action: 'flag' })[] => {
  const decisions = r.guardrails ? decisionsOf(r.guardrails) : [];
  const flags = r.guardrailFlags ? r.guardrailFlags.split(',') : [];
  // A provider guardrail that flagged is in both: its decision says more.
  const fromProviders = new Set(decisions.map((d) => d.name));
  return [...decisions, ...flags.filter((name) => !fromProviders.has(name)).map((name) => ({ name, action: 'flag' as const }))];
};

const CACHE_OUTCOMES = ['hit', 'miss', 'bypass'] as const;
type CacheOutcome = (typeof CACHE_OUTCOMES)[number];
const isCacheOutcome = (v: string | null): v is CacheOutcome => CACHE_OUTCOMES.some((c) => c === v);
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
