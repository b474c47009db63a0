/**
 * Every error a client can get, with what to do about it: the data for docs/reference/errors.md
 * (`bun run docs:reference`). test/docs-references.test.ts fails when a code the source raises is
 * missing here, or when a status here differs from the one the error type gives it.
 */

export interface InferenceErrorDoc {
  /** `error.code` of the OpenAI-format body. */
  code: string;
  /** HTTP status(es) as answered. */
  status: string;
  /** `error.type` of the OpenAI-format body. */
  type: string;
  when: string;
  action: string;
}

export const INFERENCE_ERRORS: readonly InferenceErrorDoc[] = [
  // ---- the request
  {
    code: 'invalid_request',
    status: '400',
    type: 'invalid_request_error',
    when: 'The body breaks a rule of the endpoint (`param` names the field), or an upstream refused it with a 4xx of its own.',
    action: 'Fix the request; `message` says what is wrong. Not retried.',
  },
  {
    code: 'invalid_json',
    status: '400',
    type: 'invalid_request_error',
    when: 'The body is not JSON.',
    action: 'Send a JSON body with `content-type: application/json`.',
  },
  {
    code: 'invalid_body',
    status: '400',
    type: 'invalid_request_error',
    when: 'The body is JSON but not an object of the expected shape.',
    action: 'Send the JSON object the endpoint documents.',
  },
  {
    code: 'nesting_too_deep',
    status: '400',
    type: 'invalid_request_error',
    when: 'The JSON nests deeper than the gateway reads.',
    action: 'Flatten the request.',
  },
  {
    code: 'missing_required_parameter',
    status: '400',
    type: 'invalid_request_error',
    when: 'A required field (named by `param`) is absent.',
    action: 'Add the field.',
  },
  {
    code: 'request_too_large',
    status: '413',
    type: 'invalid_request_error',
    when: 'The body is larger than `GATEWAY_MAX_BODY`, or the upstream answered 413.',
    action: 'Send less (fewer or smaller attachments), or raise `GATEWAY_MAX_BODY`.',
  },
  {
    code: 'request_timeout',
    status: '408',
    type: 'invalid_request_error',
    when: 'The body did not arrive within `GATEWAY_BODY_TIMEOUT` once its headers had.',
    action: 'Check the client’s upload path; raise `GATEWAY_BODY_TIMEOUT` for very slow links.',
  },
  {
    code: 'method_not_allowed',
    status: '405',
    type: 'invalid_request_error',
    when: 'The path exists, the method does not (e.g. `GET /v1/chat/completions`).',
    action: 'Use the documented method.',
  },
  {
    code: 'unknown_endpoint',
    status: '404',
    type: 'not_found_error',
    when: 'No endpoint at that path.',
    action: 'Check the base URL (it ends in `/v1`) and the path.',
  },
  {
    code: 'unsupported_endpoint',
    status: '400',
    type: 'invalid_request_error',
    when: 'None of the providers routed for the model offers this endpoint (e.g. embeddings on a chat-only provider), or the endpoint is not served.',
    action: 'Route the model to a provider that has the endpoint.',
  },
  {
    code: 'client_closed',
    status: '499 (recorded; the client is gone)',
    type: 'invalid_request_error',
    when: 'The client closed the connection before the answer was complete.',
    action: 'Nothing: seen in request records and metrics only.',
  },
  {
    code: 'client_stalled',
    status: '499 (recorded; the stream is ended)',
    type: 'invalid_request_error',
    when: 'A streaming client read nothing for `GATEWAY_STREAM_STALL_TIMEOUT`; the stream was ended and the upstream call cancelled.',
    action: 'Read streams promptly; raise the setting for slow consumers.',
  },
  // ---- credentials and access
  {
    code: 'invalid_api_key',
    status: '401',
    type: 'authentication_error',
    when: 'No key, an unknown, revoked or expired API key, or a user token that is revoked, expired or not valid here.',
    action:
      'Send `Authorization: Bearer <key>` (or `x-api-key`) with a live key. A revocation reaches the data plane within the propagation time.',
  },
  {
    code: 'permission_denied',
    status: '403',
    type: 'permission_error',
    when: 'The credential is valid but may not do this.',
    action: 'Use a key of a project that has access.',
  },
  {
    code: 'model_not_allowed',
    status: '403',
    type: 'permission_error',
    when: 'The key’s project has no access to the model (a model assignment restricts it).',
    action: 'Assign the model to the project, or use a model it has.',
  },
  {
    code: 'project_not_served',
    status: '404',
    type: 'not_found_error',
    when: 'The request came through a project gateway host that does not serve the key’s project.',
    action: 'Use the host of the key’s project gateway, or attach the project to this gateway.',
  },
  // ---- models and routes
  {
    code: 'model_not_found',
    status: '404 (not in the catalog) or 400 (not yet on this data plane)',
    type: 'not_found_error / invalid_request_error',
    when: 'The model is not in the catalog; or it is, but this data plane has not received it yet.',
    action: '404: create the model (`CreateModel`). 400: retry shortly (propagation).',
  },
  {
    code: 'model_not_routed',
    status: '404',
    type: 'not_found_error',
    when: 'The model exists but no route of the key’s project serves it on this data plane.',
    action: 'Create a route (`CreateRoute`) in the project.',
  },
  {
    code: 'model_not_ready',
    status: '503 + `Retry-After: 30`',
    type: 'service_unavailable_error',
    when: 'The route exists but is not active yet.',
    action: 'Retry after the time given.',
  },
  {
    code: 'not_found',
    status: '404',
    type: 'not_found_error',
    when: 'A stored object (a response, its input items, a Messages thread: then `error.details.error_code` is `thread_not_found`) does not exist, expired or is not the caller’s; or the upstream answered 404 without a code of its own.',
    action:
      'Check the id; stored responses and threads expire after `GATEWAY_RESPONSE_RETENTION`. For a thread, replay the conversation with `thread.type: create`.',
  },
  {
    code: 'mutually_exclusive_parameters',
    status: '400',
    type: 'invalid_request_error',
    when: 'A Responses request names both `previous_response_id` and `conversation`.',
    action: 'Send one of them.',
  },
  {
    code: 'file_not_found',
    status: '404',
    type: 'not_found_error',
    when: 'A batch names an input file that does not exist (or is not the project’s).',
    action: 'Upload the file (`POST /v1/files`, purpose `batch`) and use its id.',
  },
  {
    code: 'conflict',
    status: '409',
    type: 'conflict_error',
    when: 'The object is in a state that does not allow the request (e.g. cancelling a batch that already finished).',
    action: 'Read its state first.',
  },
  {
    code: 'thread_already_continued',
    status: '400',
    type: 'invalid_request_error',
    when: 'The message was already continued once.',
    action: 'Continue from the thread’s most recent reply id.',
  },
  {
    code: 'thread_continue_in_flight',
    status: '400',
    type: 'invalid_request_error',
    when: 'Another request is still continuing from the same message.',
    action: 'Wait for it and continue from its reply.',
  },
  // ---- governance
  {
    code: 'rate_limit_exceeded',
    status: '429 + `Retry-After`',
    type: 'rate_limit_error',
    when: 'A rate limit of the project, key or user is reached, or the upstream answered 429 (after every target of the route was tried).',
    action: 'Retry after the time given; raise the limit (`SetProjectSetting`) if it is too low.',
  },
  {
    code: 'budget_exceeded',
    status: '429',
    type: 'rate_limit_error',
    when: 'A budget of the project is spent for its period.',
    action: 'Wait for the next period or raise the budget (`UpdateBudget`).',
  },
  {
    code: 'limits_unavailable',
    status: '503 + `Retry-After: 1`',
    type: 'service_unavailable_error',
    when: 'Redis cannot be reached and the project has rate limits or budgets (`GATEWAY_LIMITS_ON_REDIS_ERROR=closed`).',
    action: 'Operator: restore Redis (the log says `limits unavailable` once per 10 s). Client: retry.',
  },
  {
    code: 'guardrail_blocked',
    status: '400',
    type: 'invalid_request_error',
    when: 'A guardrail of the project blocked the request or the answer.',
    action: 'Change the content; the project’s guardrails say what is blocked.',
  },
  // ---- upstreams
  {
    code: 'service_unavailable',
    status: '503',
    type: 'service_unavailable_error',
    when: '“Could not reach the upstream provider”: every target failed to connect, or the upstream answered 5xx.',
    action: 'Retry later; operator: check the connection’s URL and the provider’s status.',
  },
  {
    code: 'circuit_open',
    status: '503 + `Retry-After`',
    type: 'service_unavailable_error',
    when: 'Every target of the route is paused by its circuit breaker (project setting `circuit-breaker`): each failed repeatedly, was refused its credentials or asked to be left alone (429 with Retry-After). No upstream request was sent.',
    action: 'Retry after the time given; operator: `GetTargetHealth` says which target failed and why (docs/resilience.md).',
  },
  {
    code: 'timeout',
    status: '504',
    type: 'timeout_error',
    when: 'The upstream did not answer in time (or answered 408/504).',
    action: 'Retry; long generations should stream.',
  },
  {
    code: 'upstream_timeout',
    status: '504',
    type: 'timeout_error',
    when: 'An MCP server did not answer in time.',
    action: 'Retry; check the MCP server.',
  },
  {
    code: 'upstream_auth_failed',
    status: '502',
    type: 'api_error',
    when: 'The provider rejected the gateway’s credentials for the connection (HTTP 401/403/407, or a token exchange failed).',
    action: 'Operator: fix the connection’s key (`UpdateProviderConnection`) or BYOK secret.',
  },
  {
    code: 'upstream_payment_required',
    status: '502',
    type: 'api_error',
    when: 'The provider refused for billing reasons (HTTP 402).',
    action: 'Operator: check the provider account.',
  },
  {
    code: 'upstream_credential_unsendable',
    status: '502',
    type: 'api_error',
    when: 'A credential stored on the connection (its apiKey, a header of options.headers) cannot be sent as an HTTP header value: a control or non-ASCII character, saved before such values were refused.',
    action: 'Admin: save the connection’s apiKey (or header) again as plain ASCII; the log line names the connection and the header.',
  },
  {
    code: 'upstream_address_forbidden',
    status: '502',
    type: 'api_error',
    when: 'The connection’s URL resolves to a loopback, private, link-local or metadata address.',
    action: 'Operator: use a public address, or set `GATEWAY_UPSTREAM_ALLOW_PRIVATE=1` for a trusted private upstream.',
  },
  {
    code: 'upstream_error',
    status: '502',
    type: 'api_error',
    when: 'The upstream failed in a way that has no more specific code.',
    action: 'Retry; the request record holds a redacted excerpt of the upstream answer.',
  },
  {
    code: 'provider_misconfigured',
    status: '502',
    type: 'api_error',
    when: 'The connection lacks a setting its provider needs (e.g. a region, project id or deployment).',
    action: 'Operator: complete the connection’s options; `message` names the option.',
  },
  {
    code: 'bad_gateway',
    status: '502',
    type: 'api_error',
    when: 'The upstream’s answer could not be read (not the documented format).',
    action: 'Retry; operator: check the connection points at the right kind of provider.',
  },
  {
    code: 'upstream_response_too_large',
    status: '502 (mid-stream: the format’s error event; MCP: a JSON-RPC error with `data.code`)',
    type: 'api_error',
    when: 'What the upstream sent passed a bound and its read was cancelled: an answer or error body over `GATEWAY_MAX_UPSTREAM_RESPONSE`, one stream event over `GATEWAY_MAX_STREAM_EVENT`, or an MCP server message over `GATEWAY_MCP_MAX_MESSAGE_BYTES`; the message names the bound. The next target of the route is tried first.',
    action:
      'Ask for less (fewer images, a smaller `max_tokens`, a paginated tool); operator: raise the setting if such answers are expected.',
  },
  {
    code: 'a2a_agent_not_found',
    status: '404',
    type: 'not_found_error',
    when: "No A2A agent of that id is assigned to the caller's project (answered as a JSON-RPC error object).",
    action: 'Check the agent id in the `/a2a/:agentId` URL, or assign the agent (AddProjectA2aAgent).',
  },
  {
    code: 'a2a_agent_drifted',
    status: '503',
    type: 'service_unavailable_error',
    when: "The A2A agent's card no longer hashes to the pinned `cardSha256`: the agent is not served.",
    action: 'Check the changed card; RefreshA2aAgent pins it again.',
  },
  { code: 'a2a_upstream_error', status: '502', type: 'api_error', when: 'An A2A agent failed a call.', action: 'Check the agent.' },
  { code: 'mcp_upstream_error', status: '502', type: 'api_error', when: 'An MCP server failed a call.', action: 'Check the MCP server.' },
  {
    code: 'mcp_profile_not_found',
    status: '404',
    type: 'not_found_error',
    when: 'No MCP profile of that id for the caller.',
    action: 'Check the profile id in the `/mcp/:profileId` URL.',
  },
  {
    code: 'conversation_store_unavailable',
    status: '503',
    type: 'service_unavailable_error',
    when: 'A separate data plane cannot reach its management plane for stored Responses or threads.',
    action: 'Retry; operator: check the data plane’s link to the management API.',
  },
  // ---- the gateway
  {
    code: 'gateway_shutdown',
    status: '503 (an `error` event ends the stream)',
    type: 'service_unavailable_error',
    when: 'The gateway was stopping and the stream outlived `GATEWAY_SHUTDOWN_GRACE`.',
    action: 'Retry against another replica.',
  },
  {
    code: 'internal_error',
    status: '500',
    type: 'api_error',
    when: 'A bug or an unexpected failure.',
    action: 'Retry; report it with the `x-request-id` header of the answer.',
  },
];

/** Codes an upstream may pass through on a 4xx (its own `error.code`), beside those above. */
export const PASSED_THROUGH = 'An upstream 4xx keeps its own `error.code` (e.g. `context_length_exceeded`) and `param` when it has them.';

export { MANAGEMENT_ERRORS, type ManagementErrorDoc } from './management-error-catalog.ts';
