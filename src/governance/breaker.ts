import type { GatewayError } from '../core/errors.ts';
import { Headroom } from './headroom.ts';
import type { CircuitBreakerSetting } from './setting-values.ts';

/**
 * Circuit breakers (contract §14), one per target (connection × upstream model) and one per
 * connection for credential failures, held per data plane (shared through Redis by
 * breaker-share.ts when REDIS_URL is set).
 *
 *   CLOSED ── `failures` retryable failures (5xx, time-out, connection error) within `windowSeconds` ──▶ OPEN
 *   OPEN ── `openSeconds` later, the next request is the probe ──▶ HALF_OPEN ── probe answers ──▶ CLOSED
 *                                                                    └──── probe fails ──▶ OPEN again
 *   any ── 429 with Retry-After ──▶ COOLING for that long (≤ 60 s) ──▶ CLOSED
 *   a 401/403 (upstream_auth_failed) opens the connection's own breaker (reason `auth`): every
 *   target of that connection is skipped, the other connections to the same provider serve.
 *
 * Hot path: a closed target costs one Map lookup (plus one more only while some connection is
 * benched for its credentials); no timer is armed per request: open and cool-down times are
 * compared with the clock when a request asks.
 */

export type CircuitState = 'CLOSED' | 'OPEN' | 'HALF_OPEN' | 'COOLING';
export type CircuitReason = 'failures' | 'auth' | 'rate_limited';

/** What a breaker needs of a target (a ResolvedTarget is one). */
export interface BreakerTarget {
  readonly key: string;
  readonly upstreamModel: string;
  readonly connection: { readonly id: string; readonly name: string };
  /** The caller's own (BYOK) credential was sent: a credential failure is the caller's, not the connection's. */
  readonly byok?: true;
}

/** A target's breaker name: its connection id and upstream model (a connection's own breaker is its id alone). */
export const targetKey = (connectionId: string, upstreamModel: string): string => `${connectionId}/${upstreamModel}`;

const MAX_COOL_DOWN_MS = 60_000;
const LATENCY_SAMPLES = 64;
const MAX_ERROR_CHARS = 300;

export interface Circuit {
  readonly key: string;
  readonly connectionId: string;
  readonly connection: string;
  /** '' for a connection's own (credential) breaker. */
  readonly upstreamModel: string;
  state: CircuitState;
  reason: CircuitReason | undefined;
  /** Epoch ms it last opened (or began cooling). */
  openedAt: number;
  /** OPEN and COOLING: epoch ms from which a request may go again. */
  until: number;
  /** HALF_OPEN: epoch ms until which the probe in flight holds the others back (0: none). */
  probeUntil: number;
  /** Epoch ms of the recent retryable failures (at most `failures` kept). */
  fails: number[];
  windowMs: number;
  lastError: string | undefined;
  latency: number[];
  samples: number;
  /** Exponentially weighted moving average of the answer times (ms); -1 before the first. */
  ewmaMs: number;
  /** Epoch ms of the last state change (shared state: the newer one wins). */
  changedAt: number;
  /** Something a health reader shows changed since the last share. */
  dirty: boolean;
}

export interface Transition {
  circuit: Circuit;
  from: CircuitState;
  to: CircuitState;
  /** False when adopted from another data plane (breaker-share.ts). */
  local: boolean;
}

/** One breaker as GetTargetHealth shows it (contract §14). */
export interface TargetHealthView {
  connectionId: string;
  connection: string;
  upstreamModel: string;
  state: CircuitState;
  reason?: CircuitReason;
  openedAt?: string;
  failures: number;
  latencyMsP50: number;
  lastError?: string;
}

const describe = (e: GatewayError): string => {
  const s = `${e.upstreamStatus ?? e.status} ${e.errorCode}: ${e.message}`;
  return s.length > MAX_ERROR_CHARS ? `${s.slice(0, MAX_ERROR_CHARS - 1)}…` : s;
};

/** A retryable failure that counts towards opening: the upstream is down, slow or unreachable. */
const countsAsFailure = (e: GatewayError): boolean =>
  e.retryable && e.kind !== 'rate_limit' && (e.kind === 'unavailable' || e.kind === 'timeout' || e.status >= 500);

export const isAuthFailure = (e: GatewayError): boolean => e.errorCode === 'upstream_auth_failed';

export class Breakers {
  readonly #targets = new Map<string, Circuit>();
  /** Connections benched for their credentials (reason `auth`), by connection id. */
  readonly #connections = new Map<string, Circuit>();
  readonly #listeners: ((t: Transition) => void)[] = [];
  /** Rate-limit headroom by connection (routes with strategy `headroom`). */
  readonly headroom: Headroom;
  /** The state of the breaker that held the last refused target back (`admit` > 0). */
  benched: CircuitState = 'OPEN';
  /** Transitions since the last `takeMoved()` (the request path puts them on its span). */
  moved: Transition[] = [];
  /** Transitions by `connection`, `upstream model` and target state, for the transitions counter. */
  readonly counts = new Map<string, { connection: string; upstreamModel: string; to: CircuitState; n: number }>();

  constructor(readonly now: () => number = Date.now) {
    this.headroom = new Headroom(now);
  }

  /**
   * Set when data planes share their breakers (breaker-share.ts): asked once at the probe moment (an
   * OPEN breaker whose open time passed), it resolves true when this data plane is the one to send
   * the probe. Never asked for a closed target.
   */
  probeLease: ((c: Circuit, ms: number) => Promise<boolean>) | undefined;

  onTransition(f: (t: Transition) => void): void {
    this.#listeners.push(f);
  }

  /**
   * 0 when a request may go to the target now (it is the probe when its breaker was open), else
   * the ms until it may be tried again. A promise only at the probe moment of shared breakers.
   */
  admit(t: BreakerTarget, s: CircuitBreakerSetting): number | Promise<number> {
    if (this.#connections.size !== 0) {
      const c = this.#connections.get(t.connection.id);
      if (c !== undefined) {
        const wait = this.#gate(c, s);
        if (typeof wait !== 'number') return wait.then((w) => (w > 0 ? w : this.#target(t, s)));
        if (wait > 0) return wait;
      }
    }
    return this.#target(t, s);
  }

  #target(t: BreakerTarget, s: CircuitBreakerSetting): number | Promise<number> {
    const c = this.#targets.get(t.key);
    if (c === undefined || c.state === 'CLOSED') return 0;
    return this.#gate(c, s);
  }

  #gate(c: Circuit, s: CircuitBreakerSetting): number | Promise<number> {
    if (c.state === 'CLOSED') return 0;
    const now = this.now();
    if (c.state === 'OPEN' || c.state === 'COOLING') {
      // OPEN: probeUntil > 0 while this plane asks for the probe lease, or after another plane won it.
      const until = c.state === 'OPEN' ? Math.max(c.until, c.probeUntil) : c.until;
      if (now < until) {
        this.benched = c.state;
        return until - now;
      }
      if (c.state === 'COOLING') {
        this.#move(c, 'CLOSED', undefined, now);
        return 0;
      }
      if (this.probeLease !== undefined) return this.#leased(c, s, now);
      this.#move(c, 'HALF_OPEN', c.reason, now);
      c.probeUntil = now + s.openSeconds * 1000;
      return 0;
    }
    if (now < c.probeUntil) {
      this.benched = c.state;
      return c.probeUntil - now;
    }
    c.probeUntil = now + s.openSeconds * 1000;
    return 0;
  }

  /** The probe moment of a shared breaker: this plane probes only with the lease, else the other plane's probe decides. */
  async #leased(c: Circuit, s: CircuitBreakerSetting, now: number): Promise<number> {
    const ms = s.openSeconds * 1000;
    // Holds this plane's other requests back while it asks.
    c.probeUntil = now + ms;
    const won = this.probeLease === undefined || (await this.probeLease(c, ms));
    // Adopted meanwhile (another plane's probe began, or its verdict came): that state decides.
    if (c.state !== 'OPEN') return this.#gate(c, s);
    const at = this.now();
    if (!won) {
      this.benched = 'OPEN';
      return Math.max(1, Math.max(c.until, c.probeUntil) - at);
    }
    this.#move(c, 'HALF_OPEN', c.reason, at);
    c.probeUntil = at + ms;
    return 0;
  }

  /** The target answered (`ms`: time to its answer or first event). */
  succeeded(t: BreakerTarget, ms: number): void {
    const c = this.#targets.get(t.key) ?? this.#add(this.#targets, t.key, t.connection, t.upstreamModel);
    c.latency[c.samples++ % LATENCY_SAMPLES] = ms;
    c.ewmaMs = c.ewmaMs < 0 ? ms : c.ewmaMs * 0.8 + ms * 0.2;
    c.dirty = true;
    if (c.state === 'HALF_OPEN') this.#move(c, 'CLOSED', undefined, this.now());
    if (this.#connections.size !== 0) {
      const a = this.#connections.get(t.connection.id);
      if (a !== undefined && a.state === 'HALF_OPEN') this.#move(a, 'CLOSED', undefined, this.now());
    }
  }

  /** The target failed with `e` (after the client's own abort nothing is reported). */
  failed(t: BreakerTarget, e: GatewayError, s: CircuitBreakerSetting): void {
    const now = this.now();
    const openMs = s.openSeconds * 1000;
    if (isAuthFailure(e)) {
      // A caller's own key refused benches nobody: the connection's key may be fine for everyone else.
      if (t.byok) return;
      const a = this.#connections.get(t.connection.id) ?? this.#add(this.#connections, t.connection.id, t.connection, '');
      a.lastError = describe(e);
      a.dirty = true;
      if (a.state !== 'OPEN') this.#open(a, 'auth', now, now + openMs);
      return;
    }
    const c = this.#targets.get(t.key) ?? this.#add(this.#targets, t.key, t.connection, t.upstreamModel);
    c.lastError = describe(e);
    c.dirty = true;
    if (e.kind === 'rate_limit') {
      const ra = e.retryAfterSeconds;
      if (ra !== undefined && ra > 0) {
        const until = now + Math.min(ra * 1000, MAX_COOL_DOWN_MS);
        if (c.state === 'COOLING') c.until = Math.max(c.until, until);
        else if (c.state !== 'OPEN') this.#open(c, 'rate_limited', now, until, 'COOLING');
      }
      return;
    }
    if (!countsAsFailure(e)) return;
    c.windowMs = s.windowSeconds * 1000;
    if (c.state === 'HALF_OPEN') {
      this.#open(c, c.reason ?? 'failures', now, now + openMs);
      return;
    }
    if (c.state !== 'CLOSED') return;
    c.fails.push(now);
    while (c.fails.length > s.failures || (c.fails.length > 0 && (c.fails[0] as number) <= now - c.windowMs)) c.fails.shift();
    if (c.fails.length >= s.failures) this.#open(c, 'failures', now, now + openMs);
  }

  /** A probe that ended without a verdict (the client left, a request error): the next request may probe. */
  released(t: BreakerTarget): void {
    const c = this.#targets.get(t.key);
    if (c !== undefined && c.state === 'HALF_OPEN') c.probeUntil = 0;
    const a = this.#connections.size !== 0 ? this.#connections.get(t.connection.id) : undefined;
    if (a !== undefined && a.state === 'HALF_OPEN') a.probeUntil = 0;
  }

  /** Ranking key for strategy `latency`: the EWMA of the target's answers (ms); 0 before any (tried first, to learn it); Infinity while not closed. */
  latencyOf(t: BreakerTarget): number {
    const c = this.#targets.get(t.key);
    if (c === undefined) return 0;
    if (c.state !== 'CLOSED') return Number.POSITIVE_INFINITY;
    return Math.max(0, c.ewmaMs);
  }

  /** The transitions since the last call (cleared). */
  takeMoved(): Transition[] {
    const m = this.moved;
    this.moved = [];
    return m;
  }

  /** Every breaker this data plane knows (targets, then connections benched for credentials). */
  circuits(): Circuit[] {
    return [...this.#targets.values(), ...this.#connections.values()];
  }

  /** A breaker by key (a target's, or a connection id for its credential breaker). */
  circuit(key: string): Circuit | undefined {
    return this.#targets.get(key) ?? this.#connections.get(key);
  }

  /**
   * Takes another data plane's state of a breaker (breaker-share.ts) when it is newer than ours,
   * with its failures and last error (so the shared entry is not overwritten with a partial view).
   */
  adopt(
    key: string,
    who: { connectionId: string; connection: string; upstreamModel: string },
    shared: {
      state: CircuitState;
      reason: CircuitReason | undefined;
      openedAt: number;
      until: number;
      changedAt: number;
      fails: number[];
      windowMs: number;
      lastError: string | undefined;
    },
  ): void {
    const map = who.upstreamModel === '' ? this.#connections : this.#targets;
    const c = map.get(key) ?? this.#add(map, key, { id: who.connectionId, name: who.connection }, who.upstreamModel);
    if (shared.changedAt <= c.changedAt) {
      if (c.samples === 0 && c.changedAt === 0) c.dirty = false;
      return;
    }
    c.openedAt = shared.openedAt;
    c.until = shared.until;
    // A probe another data plane sends: this one holds back until the open time passed again.
    if (shared.state === 'HALF_OPEN') c.probeUntil = shared.changedAt + Math.max(shared.until - shared.openedAt, 1000);
    if (shared.state !== c.state) this.#move(c, shared.state, shared.reason, shared.changedAt, false);
    else c.changedAt = shared.changedAt;
    c.fails = shared.fails.slice();
    c.windowMs = shared.windowMs;
    c.lastError = shared.lastError ?? c.lastError;
    c.dirty = false;
  }

  health(): TargetHealthView[] {
    const now = this.now();
    return this.circuits().map((c) => view(c, now));
  }

  #add(map: Map<string, Circuit>, key: string, conn: { id: string; name: string }, upstreamModel: string): Circuit {
    const c: Circuit = {
      key,
      connectionId: conn.id,
      connection: conn.name,
      upstreamModel,
      state: 'CLOSED',
      reason: undefined,
      openedAt: 0,
      until: 0,
      probeUntil: 0,
      fails: [],
      windowMs: 0,
      lastError: undefined,
      latency: [],
      samples: 0,
      ewmaMs: -1,
      changedAt: 0,
      dirty: true,
    };
    map.set(key, c);
    return c;
  }

  #open(c: Circuit, reason: CircuitReason, now: number, until: number, state: 'OPEN' | 'COOLING' = 'OPEN'): void {
    c.openedAt = now;
    c.until = until;
    c.probeUntil = 0;
    this.#move(c, state, reason, now);
  }

  #move(c: Circuit, to: CircuitState, reason: CircuitReason | undefined, now: number, local = true): void {
    const from = c.state;
    c.state = to;
    c.reason = reason;
    c.changedAt = now;
    c.dirty = true;
    if (to === 'CLOSED') {
      c.fails = [];
      c.probeUntil = 0;
    }
    const k = `${c.connection}\u0000${c.upstreamModel}\u0000${to}`;
    const n = this.counts.get(k);
    if (n) n.n++;
    else this.counts.set(k, { connection: c.connection, upstreamModel: c.upstreamModel, to, n: 1 });
    const t: Transition = { circuit: c, from, to, local };
    if (local) this.moved.push(t);
    for (const f of this.#listeners) f(t);
  }
}

const p50 = (samples: readonly number[]): number => {
  if (samples.length === 0) return 0;
  const s = [...samples].sort((a, b) => a - b);
  return Math.round(s[Math.floor((s.length - 1) / 2)] as number);
};

/** The breaker as GetTargetHealth shows it: `failures` counts those within the window now. */
export const view = (c: Circuit, now: number): TargetHealthView => {
  const failures = c.windowMs > 0 ? c.fails.filter((at) => at > now - c.windowMs).length : c.fails.length;
  return {
    connectionId: c.connectionId,
    connection: c.connection,
    upstreamModel: c.upstreamModel,
    state: c.state,
    ...(c.reason !== undefined && c.state !== 'CLOSED' ? { reason: c.reason } : {}),
    ...(c.state !== 'CLOSED' && c.openedAt > 0 ? { openedAt: new Date(c.openedAt).toISOString() } : {}),
    failures,
    latencyMsP50: p50(c.latency),
    ...(c.lastError !== undefined ? { lastError: c.lastError } : {}),
  };
};
