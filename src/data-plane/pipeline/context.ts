import type { Span } from '@opentelemetry/api';
import type { Usage } from '../../canonical/types.ts';
import type { GatewayError } from '../../core/errors.ts';
import type { SnapshotHolder } from '../../propagation/holder.ts';
import type { KeySnapshot } from '../../propagation/snapshot.ts';
import type { Telemetry } from '../../telemetry/tracing.ts';
import type { McpToolHost } from '../../mcp/in-process.ts';
import type { Conversations } from '../conversations.ts';
import type { Attempt } from '../dispatch.ts';
import type { RecordSink } from '../../core/records.ts';
import type { Plan } from '../resolve.ts';
import type { RequestIds } from '../respond.ts';
import type { AdmissionPolicy } from './admit.ts';
import type { BodyLimits } from './body.ts';
import type { InputGuardrail, OutputGuardrail } from './guardrails.ts';
import type { SettlementPolicy } from './settle.ts';

/**
 * The policies of the request path, run in this order for every inference endpoint (chat,
 * responses, messages, the extra endpoints, streams alike). All lists are empty today; governance
 * (rate limits, budgets, guardrails) plugs in here.
 */
export interface Policies {
  /** Input guardrails (after resolve, before admission). */
  input: readonly InputGuardrail[];
  admit: readonly AdmissionPolicy[];
  /** Output guardrails. */
  guardrails: readonly OutputGuardrail[];
  settle: readonly SettlementPolicy[];
}

export const NO_POLICIES: Policies = Object.freeze({ input: [], admit: [], guardrails: [], settle: [] });

/** A counter reservation taken at admission, corrected to the real amount at settlement. */
export interface Hold {
  key: string;
  reserved: number;
  /** What the counter counts: tokens (tokens per minute) or nano-USD (budgets). */
  measure: 'tokens' | 'cost';
}

export interface InferenceDeps {
  snapshots: SnapshotHolder;
  telemetry: Telemetry;
  records: RecordSink | undefined;
  /** Whether request and response bodies are kept in records (data-retention setting). */
  recordBodies: boolean;
  keepAliveMs: number;
  /** Request-body limits; the defaults when absent. */
  bodyLimits?: BodyLimits;
  /** Stored responses and threads (contract §2); references are refused when absent. */
  conversations?: Conversations;
  /** The request path's policies; none when absent. */
  policies?: Policies;
  /**
   * Read-your-writes for a data plane in the management process: resolves true when the served
   * snapshot moved to catch up with a configuration change committed moments ago (so a caller or
   * model that was not found is looked up once more); false at once when nothing was committed
   * recently. Absent on separate data planes.
   */
  catchUp?: () => Promise<boolean>;
  /** The MCP gateway in process: Responses `mcp` tools naming one of the caller's profiles run through it (data-plane/hosted-mcp). */
  mcpTools?: McpToolHost;
}

/** One request as it goes through the stages; each stage fills in what it learnt. */
export interface RequestContext {
  ids: RequestIds;
  /** Epoch ms at arrival. */
  receivedAt: number;
  /** performance.now() at arrival. */
  t0: number;
  endpoint: string;
  stream: boolean;
  /** The client's request headers (read by endpoints that forward some, e.g. `anthropic-beta`). */
  headers?: Headers;
  key?: KeySnapshot;
  model?: string;
  plan?: Plan;
  /** The request body as received (kept in the record as is, per the retention setting). */
  bodyText?: string;
  span?: Span;
  /** The output the client asked for at most (max_tokens and its kin), when it said. */
  maxOutputTokens?: number;
  /** Reservations of the admission policies (settled once). */
  holds?: Hold[];
  /** Names of `flag` guardrails that matched (kept on the record). */
  flags?: Set<string>;
  /** Set once the request was settled and recorded (it happens exactly once). */
  finished?: boolean;
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
  /**
   * Set for a stream that ended before the upstream finished it (the client went away, the
   * upstream broke, a time-out or guardrail cut it): what had been streamed, so that settlement
   * charges the usage seen so far, never 0 (settle.ts).
   */
  partial?: { outputChars: number };
}

export const openContext = (endpoint: string, ids: RequestIds): RequestContext => ({ ids, receivedAt: Date.now(), t0: performance.now(), endpoint, stream: false });
