import type { NewRequestRecord } from '../../src/store/schema/index.ts';

/** A request record row like a small chat request's (bench scripts of the record path); `over` replaces fields. */
export const sampleRecordRow = (over: Partial<NewRequestRecord> = {}): NewRequestRecord => ({
  requestId: Bun.randomUUIDv7(),
  clientRequestId: null,
  receivedAt: new Date(),
  customerId: 'acme',
  projectId: 'default',
  apiKeyId: 'k1',
  endpoint: '/v1/chat/completions',
  model: 'gpt',
  provider: 'openai',
  connection: 'c',
  upstreamModel: 'gpt-4o-mini',
  httpStatus: 200,
  latencyMs: 12,
  ttfbMs: 10,
  inputTokens: 10,
  outputTokens: 20,
  totalTokens: 30,
  costNanoUsd: 12345,
  attempts: 1,
  ...over,
});
