import { RedisClient } from 'bun';
import { GatewayError } from '../core/errors.ts';
import type { CounterAdd, CounterAdjust, Counters, Refused } from './counters.ts';

/**
 * Counters in Redis (`REDIS_URL`), shared by every data plane. Every operation runs in one Lua
 * script, so check-and-add is atomic across processes: two data planes never both take the last unit.
 *
 * Coalescing: the admissions (`tryAdd`) and settlements (`adjust`) made while the event loop is
 * busy are queued and sent together on the next turn (`setImmediate`) as ONE script call, so under
 * load a Redis round trip and a script run serve many requests instead of one each:
 *
 * - each admission is a group evaluated in arrival order, all-or-nothing exactly as a lone call
 *   would be, and it sees the previous groups' additions: Redis runs the whole script atomically,
 *   so the limits stay exact across data planes (contract §3.2), only the order within one turn is
 *   the queue's;
 * - settlements are summed per key and applied before the admissions of the same call. A delayed
 *   settlement only keeps a reservation (an upper bound of the real use) a turn longer: admission is
 *   momentarily more conservative, never looser.
 *
 * A call that fails (connection refused, time-out) rejects every admission it carried with the same
 * error a lone call would have had; the caller decides (GATEWAY_LIMITS_ON_REDIS_ERROR). `close()`
 * sends what is queued before closing the connection.
 *
 * The script is loaded once and called by SHA (EVALSHA), sent whole again (EVAL) when the server lost
 * it. Keys of one call are not co-located for Redis Cluster: use a single Redis (or a proxy that
 * keeps them on one node). Bun's client does not reconnect by itself: a call while disconnected
 * starts a new connection.
 */

/**
 * KEYS: the settlements' counters, then every admission's counters in order.
 * ARGV: settlements (n), groups (g); n deltas; then per group its entry count c and c × (add, limit,
 * ttlMs, orEmpty). Settlements correct only existing counters. Returns two items per group:
 * 0 and '0' when admitted, else the first entry that did not fit (1-based) and its counter's value.
 *
 * Inside the script the counters are read once and kept in a table that every admitted group
 * updates, and written once per key at the end (the summed addition, the last admitted lifetime):
 * the script is atomic, so this is the same as writing after each group, with fewer Redis calls.
 * Integers stay exact below 2^53 (Lua numbers are doubles), as every comparison already needs.
 */
const BATCH = `
local na, ng = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, na do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('INCRBY', KEYS[i], ARGV[2 + i]) end
end
local value, added, ttl, order, out = {}, {}, {}, {}, {}
local k, a = na, 3 + na
for g = 1, ng do
  local c = tonumber(ARGV[a])
  local refused, seen = 0, '0'
  for j = 1, c do
    local key, b = KEYS[k + j], a + (j - 1) * 4
    local v = value[key]
    if v == nil then
      v = tonumber(redis.call('GET', key) or '0')
      value[key] = v
    end
    if v + tonumber(ARGV[b + 1]) > tonumber(ARGV[b + 2]) and not (ARGV[b + 4] == '1' and v <= 0) then
      refused, seen = j, string.format('%d', v)
      break
    end
  end
  if refused == 0 then
    for j = 1, c do
      local key, b = KEYS[k + j], a + (j - 1) * 4
      local n = tonumber(ARGV[b + 1])
      if added[key] == nil then
        added[key] = 0
        order[#order + 1] = key
      end
      value[key] = value[key] + n
      added[key] = added[key] + n
      if tonumber(ARGV[b + 3]) > 0 then ttl[key] = ARGV[b + 3] end
    end
  end
  out[#out + 1] = refused
  out[#out + 1] = seen
  k, a = k + c, a + 1 + c * 4
end
for _, key in ipairs(order) do
  redis.call('INCRBY', key, string.format('%d', added[key]))
  if ttl[key] then redis.call('PEXPIRE', key, ttl[key]) end
end
return out
`;

/** Admissions per script call: bounds how long one call holds Redis (a few hundred keys). */
const MAX_GROUPS = 128;

const int = (n: number): string => String(Math.trunc(n));

interface Waiting {
  entries: readonly CounterAdd[];
  resolve(r: Refused | undefined): void;
  reject(e: unknown): void;
}

const closedError = (): GatewayError => new GatewayError({ kind: 'unavailable', message: 'The shared counters are closed.' });

export class RedisCounters implements Counters {
  readonly kind = 'redis' as const;
  private readonly client: RedisClient;
  private sha: string | undefined;
  private connecting: Promise<void> | undefined;
  private adds: Waiting[] = [];
  private deltas = new Map<string, number>();
  /** Settles when the queued deltas were applied (or failed). */
  private settled: PromiseWithResolvers<void> | undefined;
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(url: string, opts: { connectTimeoutMs?: number } = {}) {
    this.client = new RedisClient(url, {
      connectionTimeout: opts.connectTimeoutMs ?? 2_000,
      enableOfflineQueue: false,
      autoReconnect: false,
    });
  }

  private async ready(): Promise<void> {
    if (this.client.connected) return;
    this.connecting ??= this.client.connect().finally(() => {
      this.connecting = undefined;
    });
    await this.connecting;
  }

  private async evalBatch(keys: readonly string[], args: readonly string[]): Promise<unknown> {
    await this.ready();
    this.sha ??= String(await this.client.send('SCRIPT', ['LOAD', BATCH]));
    try {
      return await this.client.send('EVALSHA', [this.sha, String(keys.length), ...keys, ...args]);
    } catch (e) {
      if (!(e instanceof Error) || !e.message.includes('NOSCRIPT')) throw e;
      this.sha = undefined;
      return this.client.send('EVAL', [BATCH, String(keys.length), ...keys, ...args]);
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Sends everything queued now: one script call per MAX_GROUPS admissions, settlements in the first. */
  private flush(): void {
    while (this.adds.length > 0 || this.deltas.size > 0) {
      const groups = this.adds.length > MAX_GROUPS ? this.adds.splice(0, MAX_GROUPS) : this.adds.splice(0);
      const deltas = this.deltas;
      const settled = this.settled;
      this.deltas = new Map();
      this.settled = undefined;
      const p = this.send(groups, deltas, settled);
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    }
  }

  private async send(
    groups: readonly Waiting[],
    deltas: ReadonlyMap<string, number>,
    settled: PromiseWithResolvers<void> | undefined,
  ): Promise<void> {
    const keys: string[] = [];
    const live: string[] = [];
    for (const [key, delta] of deltas) {
      if (delta === 0) continue;
      keys.push(key);
      live.push(int(delta));
    }
    const args = [String(live.length), String(groups.length), ...live];
    for (const g of groups) {
      args.push(String(g.entries.length));
      for (const e of g.entries) {
        keys.push(e.key);
        args.push(int(e.add), int(e.limit), int(e.ttlMs), e.orEmpty ? '1' : '0');
      }
    }
    let r: unknown[];
    try {
      r = keys.length === 0 ? [] : ((await this.evalBatch(keys, args)) as unknown[]);
    } catch (e) {
      for (const g of groups) g.reject(e);
      settled?.reject(e);
      return;
    }
    settled?.resolve();
    for (const [i, g] of groups.entries()) {
      const index = Number(r[2 * i]);
      g.resolve(index === 0 ? undefined : { index: index - 1, value: Number(r[2 * i + 1]) });
    }
  }

  tryAdd(entries: readonly CounterAdd[]): Promise<Refused | undefined> {
    if (entries.length === 0) return Promise.resolve(undefined);
    if (this.closed) return Promise.reject(closedError());
    const { promise, resolve, reject } = Promise.withResolvers<Refused | undefined>();
    this.adds.push({ entries, resolve, reject });
    this.schedule();
    return promise;
  }

  adjust(entries: readonly CounterAdjust[]): Promise<void> {
    const live = entries.filter((e) => e.delta !== 0);
    if (live.length === 0) return Promise.resolve();
    if (this.closed) return Promise.reject(closedError());
    for (const e of live) this.deltas.set(e.key, (this.deltas.get(e.key) ?? 0) + Math.trunc(e.delta));
    this.settled ??= Promise.withResolvers<void>();
    this.schedule();
    return this.settled.promise;
  }

  async read(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    await this.ready();
    const r = (await this.client.send('MGET', [...keys])) as (string | null)[];
    return r.map((v) => (v === null ? 0 : Number(v)));
  }

  /** Sends what is queued, waits for the calls in flight, then closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    await Promise.allSettled([...this.inFlight]);
    this.client.close();
  }
}
