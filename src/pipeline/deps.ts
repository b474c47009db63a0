import type { Counters } from '../governance/counters.ts';
import type { Breakers } from '../governance/breaker.ts';
import type { SnapshotHolder } from '../propagation/holder.ts';
import type { AdmissionPolicy } from './admit.ts';
import type { BodyLimits } from './body.ts';
import type { InputGuardrail, OutputGuardrail } from './guardrails.ts';
import type { Observers } from './observe.ts';
import type { SettlementPolicy } from './settle.ts';

/**
 * The policies of the request path, run in this order for every endpoint that admits requests
 * (chat, responses, messages, the extra endpoints, streams alike, and the governed MCP calls).
 * Governance (rate limits, budgets, guardrails: data-plane/policies) plugs in here.
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

/**
 * What the door and the stages need of the plane: the served snapshot, the observers, the
 * policies. Each endpoint's own needs extend it (data-plane/deps.ts `InferenceDeps`).
 */
export interface PipelineDeps {
  snapshots: SnapshotHolder;
  /** Who watches each request's stages (tracing, metrics, records): pipeline/observe.ts. */
  observers: Observers;
  /** Whether request and response bodies may be kept in records at all (GATEWAY_RECORD_BODIES; the project's `record-retention` narrows it). */
  recordBodies: boolean;
  keepAliveMs: number;
  /** Request-body limits; the defaults when absent. */
  bodyLimits?: BodyLimits;
  /** This data plane's circuit breakers (contract §14); none when absent (every target always tried). */
  breakers?: Breakers;
  /** The request path's policies; none when absent. */
  policies?: Policies;
  /** The counters shared by the plane's replicas (Redis when configured): MCP sessions' liveness. */
  counters?: Counters;
  /**
   * Read-your-writes for a data plane in the management process: resolves true when the served
   * snapshot moved to catch up with a configuration change committed moments ago (so a caller or
   * model that was not found is looked up once more); false at once when nothing was committed
   * recently. Absent on separate data planes.
   */
  catchUp?: () => Promise<boolean>;
}
