import { RedisClient } from 'bun';
import { describeError, log } from '../core/log.ts';
import { type Breakers, type Circuit, type CircuitReason, type CircuitState, type TargetHealthView, view } from './breaker.ts';

/**
 * Circuit breakers shared by the data planes through Redis (`REDIS_URL`, contract §14). One hash,
 * `gateway:circuits`, holds every breaker's latest state as JSON, field = the breaker's key:
 *
 * - a data plane writes a breaker at once when it changes state on that plane (opens, probes,
 *   closes, cools down), and its health figures (failures, p50 latency, last error) every tick when
 *   they changed; a write never replaces a newer state another plane wrote (WRITE compares
 *   `changedAt` in Redis): that state is adopted instead;
 * - before the data plane serves, and then every tick (SHARE_MS), it reads the hash and adopts a
 *   state newer than its own that another plane wrote: a target one plane opened gets no request
 *   from the others either, within one tick;
 * - the probe of an OPEN breaker whose open time passed is sent by one plane only: the first to
 *   take the lease `gateway:circuits:probe:{key}` (SET NX PX, one Redis call at that moment, never
 *   per request); the others hold the target back until that probe's verdict reaches them.
 *
 * Nothing else of this is on the request path: the breakers answer from memory, this runs on one
 * timer per data plane. The management plane reads the same hash for GetTargetHealth
 * (`readSharedHealth`). A Redis failure is logged (once per 10 s) and each plane keeps its own
 * state meanwhile (and probes on its own).
 */

export const CIRCUITS_HASH = 'gateway:circuits';
const PROBE_LEASE = 'gateway:circuits:probe:';
const SHARE_MS = 250;
/** The longest a data plane's start waits for its first read, and a probe for its lease. */
const SYNC_WAIT_MS = 2000;
const LEASE_WAIT_MS = 250;

/**
 * KEYS[1]: the hash. ARGV: this plane's id, '1' to answer the whole hash (HGETALL's flat list),
 * then per breaker its field, JSON and changedAt. A breaker whose stored state another plane
 * changed later than ours is left as it is (the reader adopts it).
 */
const WRITE = `
for i = 3, #ARGV, 3 do
  local cur = redis.call('HGET', KEYS[1], ARGV[i])
  local newer = false
  if cur then
    local ok, s = pcall(cjson.decode, cur)
    newer = ok and type(s) == 'table' and s.by ~= ARGV[1] and type(s.changedAt) == 'number' and s.changedAt > tonumber(ARGV[i + 2])
  end
  if not newer then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
-- Breakers of connections long gone leave with the hash once no data plane writes for a day.
if #ARGV > 2 then redis.call('EXPIRE', KEYS[1], 86400) end
if ARGV[2] == '1' then return redis.call('HGETALL', KEYS[1]) end
return 0
`;

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
  #sha: string | undefined;
  #busy: Promise<void> | undefined;
  /** The first read of the shared state: a data plane serves once it settled (or SYNC_WAIT_MS passed). */
  readonly synced: Promise<void>;

  constructor(
    redisUrl: string,
    private readonly breakers: Breakers,
    shareMs = SHARE_MS,
  ) {
    this.#redis = new RedisClient(redisUrl);
    breakers.onTransition((t) => {
      if (!t.local) return;
      t.circuit.dirty = false;
      void this.#send([t.circuit], false).catch((e: unknown) => {
        log.every('circuits-redis', 'warn', 'sharing circuit breaker state through Redis failed', { error: describeError(e) });
      });
    });
    breakers.probeLease = (c, ms) => this.#lease(c, ms);
    this.synced = within(this.tick(), SYNC_WAIT_MS);
    this.#timer = setInterval(() => void this.tick(), shareMs);
    this.#timer.unref?.();
  }

  /** Writes `circuits` (where no newer state is stored), answering the whole hash when `read`. */
  async #send(circuits: Circuit[], read: boolean): Promise<unknown> {
    const now = this.breakers.now();
    const args = [this.#by, read ? '1' : '0'];
    for (const c of circuits) args.push(c.key, sharedOf(c, this.#by, now), String(c.changedAt));
    if (args.length === 2 && !read) return undefined;
    this.#sha ??= String(await this.#redis.send('SCRIPT', ['LOAD', WRITE]));
    try {
      return await this.#redis.send('EVALSHA', [this.#sha, '1', CIRCUITS_HASH, ...args]);
    } catch (e) {
      if (!(e instanceof Error) || !e.message.includes('NOSCRIPT')) throw e;
      this.#sha = undefined;
      return this.#redis.send('EVAL', [WRITE, '1', CIRCUITS_HASH, ...args]);
    }
  }

  /** Whether this data plane sends the probe of `c` (Redis unreachable or slow: it probes on its own). */
  async #lease(c: Circuit, ms: number): Promise<boolean> {
    const set = this.#redis.send('SET', [PROBE_LEASE + c.key, this.#by, 'NX', 'PX', String(Math.max(1, ms))]).then(
      (r) => r !== null,
      (e: unknown) => {
        log.every('circuits-redis', 'warn', 'taking the probe lease of a circuit breaker in Redis failed', { error: describeError(e) });
        return true;
      },
    );
    return Promise.race([set, Bun.sleep(LEASE_WAIT_MS).then(() => true)]);
  }

  /** Writes what changed here (unless another plane changed it later), then adopts what other data planes changed. */
  tick(): Promise<void> {
    this.#busy ??= this.#tick().finally(() => {
      this.#busy = undefined;
    });
    return this.#busy;
  }

  async #tick(): Promise<void> {
    const dirty = this.breakers.circuits().filter((c) => c.dirty);
    for (const c of dirty) c.dirty = false;
    const all = await this.#send(dirty, true).catch((e: unknown) => {
      log.every('circuits-redis', 'warn', 'sharing circuit breaker state through Redis failed', { error: describeError(e) });
      for (const c of dirty) c.dirty = true;
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
  }

  close(): void {
    clearInterval(this.#timer);
    this.breakers.probeLease = undefined;
    this.#redis.close();
  }
}

/** `p` settled, or `ms` passed (a timer that keeps no process alive). */
const within = (p: Promise<unknown>, ms: number): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref?.();
    p.then(
      () => {
        clearTimeout(t);
        resolve();
      },
      () => resolve(),
    );
  });

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
