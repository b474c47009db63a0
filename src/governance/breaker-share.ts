import { RedisClient } from 'bun';
import { describeError, log } from '../core/log.ts';
import { type Breakers, type Circuit, type CircuitReason, type CircuitState, type TargetHealthView, view } from './breaker.ts';

/**
 * Circuit breakers shared by the data planes through Redis (`REDIS_URL`, contract §14). One hash,
 * `gateway:circuits`, holds every breaker's latest state as JSON, field = the breaker's key:
 *
 * - a data plane writes a breaker at once when it changes state on that plane (opens, probes,
 *   closes, cools down), and its health figures (failures, p50 latency, last error) every tick when
 *   they changed;
 * - every tick (SHARE_MS) each data plane reads the hash and adopts a state newer than its own that
 *   another plane wrote: a target one plane opened gets no request from the others either, within
 *   one tick.
 *
 * Nothing of this is on the request path: the breakers answer from memory, this runs on one timer
 * per data plane. The management plane reads the same hash for GetTargetHealth (`readSharedHealth`).
 * A Redis failure is logged (once per 10 s) and each plane keeps its own state meanwhile.
 */

export const CIRCUITS_HASH = 'gateway:circuits';
const SHARE_MS = 250;

interface Shared {
  state: CircuitState;
  reason?: CircuitReason;
  openedAt: number;
  until: number;
  changedAt: number;
  connectionId: string;
  connection: string;
  upstreamModel: string;
  failures: number;
  latencyMsP50: number;
  lastError?: string;
  windowMs: number;
  fails: number[];
  by: string;
}

const STATES: readonly string[] = ['CLOSED', 'OPEN', 'HALF_OPEN', 'COOLING'];
const REASONS: readonly string[] = ['failures', 'auth', 'rate_limited'];

const parse = (text: string): Shared | undefined => {
  try {
    const v: unknown = JSON.parse(text);
    if (v === null || typeof v !== 'object') return undefined;
    const o = v as Record<string, unknown>;
    if (typeof o.state !== 'string' || !STATES.includes(o.state)) return undefined;
    if (typeof o.connectionId !== 'string' || typeof o.connection !== 'string' || typeof o.upstreamModel !== 'string') return undefined;
    const num = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) ? x : 0);
    return {
      state: o.state as CircuitState,
      ...(typeof o.reason === 'string' && REASONS.includes(o.reason) ? { reason: o.reason as CircuitReason } : {}),
      openedAt: num(o.openedAt),
      until: num(o.until),
      changedAt: num(o.changedAt),
      connectionId: o.connectionId,
      connection: o.connection,
      upstreamModel: o.upstreamModel,
      failures: num(o.failures),
      latencyMsP50: num(o.latencyMsP50),
      ...(typeof o.lastError === 'string' ? { lastError: o.lastError } : {}),
      windowMs: num(o.windowMs),
      fails: Array.isArray(o.fails) ? o.fails.filter((x): x is number => typeof x === 'number') : [],
      by: typeof o.by === 'string' ? o.by : '',
    };
  } catch {
    return undefined;
  }
};

const sharedOf = (c: Circuit, by: string, now: number): string => {
  const v = view(c, now);
  return JSON.stringify({
    state: c.state,
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    openedAt: c.openedAt,
    until: c.until,
    changedAt: c.changedAt,
    connectionId: c.connectionId,
    connection: c.connection,
    upstreamModel: c.upstreamModel,
    failures: v.failures,
    latencyMsP50: v.latencyMsP50,
    ...(c.lastError !== undefined ? { lastError: c.lastError } : {}),
    windowMs: c.windowMs,
    fails: c.fails,
    by,
  });
};

export class SharedBreakers {
  readonly #redis: RedisClient;
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #by = crypto.randomUUID();
  #busy = false;

  constructor(
    redisUrl: string,
    private readonly breakers: Breakers,
    shareMs = SHARE_MS,
  ) {
    this.#redis = new RedisClient(redisUrl);
    breakers.onTransition((t) => {
      if (!t.local) return;
      t.circuit.dirty = false;
      void this.#write([t.circuit]);
    });
    this.#timer = setInterval(() => void this.tick(), shareMs);
    this.#timer.unref?.();
  }

  async #write(circuits: Circuit[]): Promise<void> {
    if (circuits.length === 0) return;
    const now = this.breakers.now();
    const fields: string[] = [];
    for (const c of circuits) fields.push(c.key, sharedOf(c, this.#by, now));
    try {
      await this.#redis.send('HSET', [CIRCUITS_HASH, ...fields]);
      // Breakers of connections long gone leave with the hash once no data plane writes for a day.
      await this.#redis.send('EXPIRE', [CIRCUITS_HASH, '86400']);
    } catch (e) {
      log.every('circuits-redis', 'warn', 'sharing circuit breaker state through Redis failed', { error: describeError(e) });
    }
  }

  /** Writes what changed here, then adopts what other data planes changed. */
  async tick(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const dirty = this.breakers.circuits().filter((c) => c.dirty);
      for (const c of dirty) c.dirty = false;
      await this.#write(dirty);
      const all = await this.#redis.send('HGETALL', [CIRCUITS_HASH]).catch((e: unknown) => {
        log.every('circuits-redis', 'warn', 'reading circuit breaker state from Redis failed', { error: describeError(e) });
        return undefined;
      });
      for (const [key, text] of entries(all)) {
        const s = parse(text);
        if (!s || s.by === this.#by) continue;
        this.breakers.adopt(key, s, {
          state: s.state,
          reason: s.reason,
          openedAt: s.openedAt,
          until: s.until,
          changedAt: s.changedAt,
          fails: s.fails,
          windowMs: s.windowMs,
          lastError: s.lastError,
        });
      }
    } finally {
      this.#busy = false;
    }
  }

  close(): void {
    clearInterval(this.#timer);
    this.#redis.close();
  }
}

/** HGETALL's answer (an object with RESP3, a flat list with RESP2) as [field, value] pairs. */
const entries = (all: unknown): [string, string][] => {
  if (Array.isArray(all)) {
    const out: [string, string][] = [];
    for (let i = 0; i + 1 < all.length; i += 2)
      if (typeof all[i] === 'string' && typeof all[i + 1] === 'string') out.push([all[i], all[i + 1]]);
    return out;
  }
  if (all !== null && typeof all === 'object') return Object.entries(all).filter((e): e is [string, string] => typeof e[1] === 'string');
  return [];
};

/** Every breaker the data planes shared (management plane, GetTargetHealth), as views. */
export const readSharedHealth = async (redis: RedisClient): Promise<TargetHealthView[]> => {
  const all = await redis.send('HGETALL', [CIRCUITS_HASH]);
  const now = Date.now();
  const out: TargetHealthView[] = [];
  for (const [, text] of entries(all)) {
    const s = parse(text);
    if (!s) continue;
    const failures = s.windowMs > 0 ? s.fails.filter((at) => at > now - s.windowMs).length : s.failures;
    out.push({
      connectionId: s.connectionId,
      connection: s.connection,
      upstreamModel: s.upstreamModel,
      state: s.state,
      ...(s.reason !== undefined && s.state !== 'CLOSED' ? { reason: s.reason } : {}),
      ...(s.state !== 'CLOSED' && s.openedAt > 0 ? { openedAt: new Date(s.openedAt).toISOString() } : {}),
      failures,
      latencyMsP50: s.latencyMsP50,
      ...(s.lastError !== undefined ? { lastError: s.lastError } : {}),
    });
  }
  return out;
};

/**
 * GetTargetHealth's source: with REDIS_URL the hash every data plane shares (a connection per call:
 * a management read, not a request path); else the embedded data plane's own breakers.
 */
export const targetHealthOf = (redisUrl: string | undefined, local: Breakers): (() => Promise<TargetHealthView[]>) => {
  if (!redisUrl) return async () => local.health();
  return async () => {
    const redis = new RedisClient(redisUrl);
    try {
      return await readSharedHealth(redis);
    } finally {
      redis.close();
    }
  };
};
