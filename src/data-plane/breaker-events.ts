import { circuitOpen, coolingDown, type GatewayError } from '../core/errors.ts';
import type { Breakers } from '../governance/breaker.ts';
import type { CircuitBreakerSetting } from '../governance/setting-values.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { ResolvedTarget, RouteSnapshot } from '../propagation/snapshot.ts';

/**
 * The (target, retry) list of a route with strategy `latency` or `headroom` (contract §14): the
 * route's targets ranked across priorities — lowest recent latency first, or most rate-limit
 * headroom first (a stable sort: ties keep the route's order) — each with its retries, then the
 * project's global fallback.
 */
export const rankedPlan = (route: RouteSnapshot, breakers: Breakers): ResolvedTarget[] => {
  const own = route.tiers.flat();
  const ranked =
    route.strategy === 'latency'
      ? own.map((t, i) => ({ t, i, a: breakers.latencyOf(t), b: 0 }))
      : own.map((t, i) => {
          const [r, k] = breakers.headroom.of(t, t.connection.options);
          return { t, i, a: -r, b: -k };
        });
  ranked.sort((x, y) => x.a - y.a || x.b - y.b || x.i - y.i);
  const out: ResolvedTarget[] = [];
  for (const { t } of ranked) for (let i = 0; i <= route.maxRetries; i++) out.push(t);
  for (const t of route.fallback ?? []) out.push(t);
  return out;
};

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

  /**
   * Whether the target may be tried now (a probe when its breaker was open); a promise only at the
   * probe moment of breakers shared through Redis (the probe lease is asked then).
   */
  admit(target: ResolvedTarget): boolean | Promise<boolean> {
    const wait = this.breakers.admit(target, this.setting);
    return typeof wait === 'number' ? this.#verdict(wait) : wait.then((w) => this.#verdict(w));
  }

  #verdict(wait: number): boolean {
    const b = this.breakers;
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
