import { Type as t } from '@sinclair/typebox';
import { CustomerRef, PageSize, PageToken, ProjectRef, Timestamp, TimestampIn } from '../kit.ts';
import { defineOp } from '../op.ts';

/** Observability: the per-request records of the data planes, and usage summed from them. */

const ADMIN = 'admin.v1.AdminService';
const GROUP = 'Observability';

const Time = (description: string) => t.Optional(TimestampIn(description));

/** GetUsage's groupings. */
export const USAGE_GROUP_BY = ['api_key', 'model', 'provider', 'day'] as const;

const Usage = t.Object({
  promptTokens: t.Number(),
  completionTokens: t.Number(),
  totalTokens: t.Number(),
  cachedInputTokens: t.Number(),
  cacheWriteTokens: t.Number(),
});
export const RecordOut = t.Object(
  {
    requestId: t.String({ description: 'X-Request-ID' }),
    clientRequestId: t.Optional(t.String({ description: 'X-Client-Request-ID, when the client sent one' })),
    correlationId: t.Optional(
      t.String({ description: "X-Gateway-Correlation-Id: an A2A task's, on its record and on the model and MCP calls made with it" }),
    ),
    timestamp: Timestamp(),
    customerId: t.String(),
    projectId: t.String(),
    apiKeyId: t.String(),
    endpoint: t.String(),
    model: t.String(),
    provider: t.String(),
    connection: t.String(),
    upstreamModel: t.String(),
    httpStatus: t.Number(),
    latencyMs: t.Number(),
    ttfbMs: t.Optional(t.Number()),
    stream: t.Boolean(),
    usage: Usage,
    cost: t.String({ description: 'USD, decimal string' }),
    attempts: t.Number(),
    errorCode: t.Optional(t.String()),
    requestBody: t.Unknown(),
    responseBody: t.Unknown(),
    sanitized: t.Optional(
      t.Array(t.String(), {
        description:
          'Present when the record had to be changed to be stored: usage (token counts clamped or rounded), text (ill-formed text or NUL cleaned), numbers, bodies (bodies left out)',
      }),
    ),
    cache: t.Optional(
      t.Union([t.Literal('hit'), t.Literal('miss'), t.Literal('bypass')], {
        description: "The response cache's part, for projects with the `response-cache` setting",
      }),
    ),
    costSavedUsd: t.Optional(
      t.String({ description: 'A cache hit: what the answer would have cost (USD, decimal string); its `cost` is 0' }),
    ),
    guardrails: t.Array(
      t.Object({
        name: t.String(),
        action: t.String({ description: 'allow, block, redact, flag, fail_open or fail_closed' }),
        stage: t.Optional(t.String({ description: 'input or output (provider guardrails)' })),
        provider: t.Optional(t.String({ description: "the provider guardrail's kind" })),
        latencyMs: t.Optional(t.Number({ description: "the provider's answer time" })),
      }),
      {
        description:
          "Guardrail decisions kept on the record (contract §15): each provider guardrail's decision, and the built-in guardrails whose `flag` action matched (name and action). A built-in block is `errorCode` `guardrail_blocked` (its message names the guardrail); a redaction changes the recorded body",
      },
    ),
    method: t.Optional(t.String({ description: 'MCP calls: the JSON-RPC method (`tools/call`, `prompts/get`, `resources/read`)' })),
    tool: t.Optional(t.String({ description: "MCP `tools/call`: the server's tool name (the profile's prefix removed)" })),
  },
  { description: 'Request record' },
);
export const UsageGroup = t.Object({
  key: t.String(),
  requests: t.Number(),
  inputTokens: t.Number(),
  outputTokens: t.Number(),
  cachedInputTokens: t.Number(),
  cacheWriteTokens: t.Number(),
  cost: t.String({ description: 'USD, decimal string' }),
});

export const ObservabilityOps = {
  SearchRequestRecords: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'SearchRequestRecords',
    summary: 'Search per-request records by X-Request-ID, X-Client-Request-ID, tenant, key and time',
    permission: 'project_member',
    input: t.Object(
      {
        requestId: t.Optional(t.String({ maxLength: 64 })),
        clientRequestId: t.Optional(t.String({ maxLength: 256 })),
        correlationId: t.Optional(
          t.String({ maxLength: 128, description: 'the records of one A2A task and the model and MCP calls made with its correlation id' }),
        ),
        customerId: t.Optional(CustomerRef()),
        projectId: t.Optional(ProjectRef()),
        apiKeyId: t.Optional(t.String({ maxLength: 64 })),
        startTime: Time('inclusive'),
        endTime: Time('exclusive'),
        pageSize: PageSize(),
        pageToken: PageToken(),
      },
      { additionalProperties: false },
    ),
    output: t.Object({ records: t.Array(RecordOut), nextPageToken: t.String() }),
  }),
  GetUsage: defineOp({
    service: ADMIN,
    group: GROUP,
    name: 'GetUsage',
    summary: 'Requests, tokens and cost per API key, model, provider or day',
    permission: 'project_member',
    input: t.Object(
      {
        customerId: CustomerRef(),
        projectId: t.Optional(ProjectRef()),
        apiKeyId: t.Optional(t.String({ maxLength: 64 })),
        startTime: Time('inclusive'),
        endTime: Time('exclusive'),
        groupBy: t.Optional(t.Union(USAGE_GROUP_BY.map((g) => t.Literal(g)))),
      },
      { additionalProperties: false },
    ),
    output: t.Object({ groups: t.Array(UsageGroup), total: UsageGroup }),
  }),
};
