import type { Span } from '@opentelemetry/api';
import type { Usage } from '../canonical/types.ts';
import type { GatewayError } from '../core/errors.ts';
import type { Breakers } from '../governance/breaker.ts';
import type { KeySnapshot } from '../propagation/snapshot.ts';
import { NO_OBSERVERS, type Observers } from './observe.ts';
import type { Plan } from './plan.ts';

export type { Plan } from './plan.ts';

/** Identity of one request, for headers and records. */
export interface RequestIds {
  requestId: string;
  clientRequestId: string | undefined;
  /**
   * Set by the listener: called once a streamed response has ended, to give the connection its
   * idle time-out back (it is off while the response is produced).
   */
  streamEnded?: () => void;
}

/** One try against one target, for the request record and the observers. */
export interface Attempt {
  connection: string;
  provider: string;
  upstreamModel: string;
  status: number;
  errorCode?: string;
  ms: number;
}

/** A counter reservation taken at admission, corrected to the real amount at settlement. */
export interface Hold {
  key: string;
  reserved: number;
  /** What the counter counts: tokens (tokens per minute) or nano-USD (budgets). */
  measure: 'tokens' | 'cost';
}

/** One request as it goes through the stages; each stage fills in what it learnt. */
export interface RequestContext {
  ids: RequestIds;
  /** Epoch ms at arrival. */
  receivedAt: number;
  /** performance.now() at arrival. */
  t0: number;
  /** The endpoint as records, spans and metrics name it (a path, ids as `{id}`). */
  endpoint: string;
  /** The HTTP method (`POST` for every inference request and MCP call). */
  method: string;
  stream: boolean;
  /** The client's request headers (read by endpoints that forward some, e.g. `anthropic-beta`). */
  headers?: Headers;
  key?: KeySnapshot;
  model?: string;
  plan?: Plan;
  /** The request body as received (kept in the record as is, per the retention setting). */
  bodyText?: string;
  /** The observers this request's stages are reported to (deps.observers; none for a bare context). */
  observers: Observers;
  /** The tracing observer's spans of this request (telemetry/trace-observer.ts); absent while tracing is off. */
  trace?: TraceState;
  /** The data plane's circuit breakers (deps.breakers), consulted by dispatch for each target. */
  breakers?: Breakers;
  /** Headers the current upstream attempt sends besides its own (W3C `traceparent` of its span); set by observers at attempt start. */
  upstreamHeaders?: Record<string, string>;
  /** An MCP call observed like an inference request (src/mcp): the span and metrics follow the MCP conventions. */
  mcp?: McpCall;
  /** An A2A call (src/a2a): the span follows the GenAI agent conventions (`invoke_agent`, `gen_ai.agent.*`). */
  agent?: { id: string; name?: string };
  /** The output the client asked for at most (max_tokens and its kin), when it said. */
  maxOutputTokens?: number;
  /** The request's `temperature`, when it gave a number. */
  temperature?: number;
  /** Reservations of the admission policies (settled once). */
  holds?: Hold[];
  /** Names of `flag` guardrails that matched (kept on the record). */
  flags?: Set<string>;
  /** X-Gateway-Correlation-Id of the request (an A2A call's own; else the header as the client sent it), kept on the record. */
  correlationId?: string;
  /** Decisions of provider guardrails (contract §15), in the order taken: on the record and the span. */
  guardrails?: GuardrailDecision[];
  /** Set once the request was settled and recorded (it happens exactly once). */
  finished?: boolean;
}

/** One provider guardrail's decision on a request (contract §15). */
export interface GuardrailDecision {
  name: string;
  stage: 'input' | 'output';
  /** allow, block, redact or flag; `fail_open` / `fail_closed` when the vendor gave no verdict. */
  action: string;
  /** The guardrail's kind (the vendor). */
  provider: string;
  latencyMs: number;
}

/** The SERVER span of a request and the CLIENT span of its upstream attempt in flight (or of the one that answered, until finish). */
export interface TraceState {
  server: Span;
  attempt: Span | undefined;
}

/** What an observed MCP call is (contract §7/§8): `mcp.method.name`, the tool, the server. */
export interface McpCall {
  method: string;
  /** Tool or prompt name as the client called it (`gen_ai.tool.name` for tools/call). */
  name?: string;
  server: string;
  /** The MCP protocol revision the client speaks (`mcp.protocol.version`). */
  protocolVersion?: string;
  /** The 2025 generation's session id (`mcp.session.id`). */
  sessionId?: string;
  /** The JSON-RPC request id (`jsonrpc.request.id`). */
  rpcId?: string;
}

/** How a request ended, as the settle and record stages see it. */
export interface Outcome {
  status: number;
  usage?: Usage;
  attempts?: readonly Attempt[];
  error?: GatewayError;
  /** The answer's record body as JSON text (already serialised), or a value to serialise. */
  responseText?: string;
  response?: unknown;
  ttfbMs?: number;
  /** The upstream's id of the answer (`gen_ai.response.id`), when known. */
  responseId?: string;
  /** The answer's finish reason (`gen_ai.response.finish_reasons`), when known. */
  finishReason?: string;
  /** The model the upstream says answered (`gen_ai.response.model`), when known. */
  responseModel?: string;
  /**
   * Set for a stream that ended before the upstream finished it (the client went away, the
   * upstream broke, a time-out or guardrail cut it): what had been streamed, so that settlement
   * charges the usage seen so far, never 0 (settle.ts).
   */
  partial?: { outputChars: number };
  /** The response cache's part (contract §11), for projects with the `response-cache` setting: a hit costs 0 and records the cost saved. */
  cache?: 'hit' | 'miss' | 'bypass';
}

export const openContext = (endpoint: string, ids: RequestIds, observers: Observers = NO_OBSERVERS, method = 'POST'): RequestContext => ({
  ids,
  receivedAt: Date.now(),
  t0: performance.now(),
  endpoint,
  method,
  stream: false,
  observers,
});
