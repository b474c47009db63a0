import { circuitOpen, coolingDown, type GatewayError } from '../core/errors.ts';
import type { Breakers } from '../governance/breaker.ts';
import type { CircuitBreakerSetting } from '../governance/setting-values.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { ResolvedTarget } from '../propagation/snapshot.ts';

/**
 * One request's use of the data plane's circuit breakers (contract §14), for dispatch's failover
 * loop: which targets it may try, what each attempt says about its target, and the error when
 * every target was benched. Transitions become events on the request's span.
 */
export class Bench {
  /** The shortest wait of the targets held back (ms); 0 when none was. */
  #waitMs = 0;
  /** Whether every target held back is only cooling down after a 429 with Retry-After. */
  #cooling = true;

  constructor(
    private readonly breakers: Breakers,
    private readonly setting: CircuitBreakerSetting,
    private readonly ctx: RequestContext,
  ) {}

  /** Whether the target may be tried now (a probe when its breaker was open). */
  admit(target: ResolvedTarget): boolean {
    const b = this.breakers;
    const wait = b.admit(target, this.setting);
    if (b.moved.length !== 0) this.#events();
    if (wait === 0) return true;
    this.#waitMs = this.#waitMs === 0 ? wait : Math.min(this.#waitMs, wait);
    if (b.benched !== 'COOLING') this.#cooling = false;
    return false;
  }

  succeeded(target: ResolvedTarget, ms: number): void {
    this.breakers.succeeded(target, ms);
    if (this.breakers.moved.length !== 0) this.#events();
  }

  /** An attempt failed; when the client had gone away it says nothing of the target. */
  failed(target: ResolvedTarget, e: GatewayError, clientGone: boolean): void {
    if (clientGone) this.breakers.released(target);
    else this.breakers.failed(target, e, this.setting);
    if (this.breakers.moved.length !== 0) this.#events();
  }

  released(target: ResolvedTarget): void {
    this.breakers.released(target);
  }

  /** The answer when no target could be tried: the upstream's 429 while only cooling down, else 503 circuit_open. */
  error(model: string): GatewayError | undefined {
    if (this.#waitMs === 0) return undefined;
    return this.#cooling ? coolingDown(this.#waitMs) : circuitOpen(model, this.#waitMs);
  }

  #events(): void {
    const span = this.ctx.trace?.server;
    for (const m of this.breakers.takeMoved())
      span?.addEvent('gateway.circuit.transition', {
        'gateway.connection': m.circuit.connection,
        'gen_ai.request.model': m.circuit.upstreamModel,
        'gateway.circuit.from': m.from,
        'gateway.circuit.to': m.to,
        ...(m.circuit.reason !== undefined ? { 'gateway.circuit.reason': m.circuit.reason } : {}),
      });
  }
}
